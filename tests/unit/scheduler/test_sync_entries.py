"""What the change feed carries, and what a follower takes of it.

A feed is written by other processes (another scheduler, or whoever can
reach the cell's database or the Redis): an entry that is not what a
scheduler writes must be refused without raising, falling back to a
re-read of the provider named.
"""

from oslo_config import cfg

from cellboot.conf import CONF
from cellboot.scheduler.resources import changes
from cellboot.scheduler.sync import follower
from tests import base


class DeltaTest(base.TestCase):

    def test_a_claim_replacing_what_was_held_moves_the_difference(self):
        self.assertEqual(
            {'VCPU': 2, 'MEMORY_MB': -1024},
            changes.claimed({'VCPU': 4, 'MEMORY_MB': 1024},
                            {'VCPU': 2, 'MEMORY_MB': 2048}))

    def test_encoded_deltas_decode_to_themselves(self):
        delta = {'VCPU': -2, 'MEMORY_MB': 2048, 'DISK_GB': 20}
        self.assertEqual(delta, changes.decode(changes.encode(delta)))

    def test_nothing_moved_or_too_long_means_a_re_read(self):
        self.assertIsNone(changes.encode(None))
        self.assertIsNone(changes.encode({'VCPU': 0}))
        self.assertIsNone(changes.encode({'X' * 300: 1}))

    def test_deltas_of_any_class_are_taken(self):
        self.assertEqual({'CUSTOM_FPGA': 1, 'VGPU': -2},
                         follower._delta('CUSTOM_FPGA=1,VGPU=-2'))

    def test_hostile_deltas_are_refused(self):
        for text in ('VCPU', 'VCPU=two', '=1', 'VCPU=1,VCPU=1', '',
                     f'VCPU={2 ** 40}', 'NO_SUCH_CLASS=1', 'VCPU=1,',
                     'CUSTOM_fpga=1', 'CUSTOM_=1'):
            self.assertIsNone(follower._delta(text), text)

    def test_hostile_counts_are_refused(self):
        for value in ('lots', '-1', str(2 ** 40), None, '1.5'):
            self.assertIsNone(follower._count(value), value)
        self.assertEqual(3, follower._count('3'))


class OptionsTest(base.TestCase):

    def test_an_unknown_backend_is_refused(self):
        for option in ('sync_backend', 'api_sync_backend'):
            self.assertRaises(ValueError, self.flags, **{
                option: 'zookeeper', 'group': 'scheduler'})

    def test_the_database_feed_is_the_default_for_cells_only(self):
        self.assertEqual(('database', 'none'),
                         (CONF.scheduler.sync_backend,
                          CONF.scheduler.api_sync_backend))

    def test_negative_intervals_are_refused(self):
        self.assertRaises((ValueError, cfg.Error), self.flags,
                          sync_pull_interval=-1, group='scheduler')
