"""A cell's aggregate: as its scheduler computes it, as the API level
takes it (checked field by field).

What a cell publishes is what the least trusted part of a deployment
says; ``aggregate.validated`` refuses anything that is not an aggregate,
naming the field and never echoing the value.
"""

import contextlib
import copy
from unittest import mock

import fixtures

from cellboot import exception
from cellboot.scheduler import aggregate
from tests import base as test_base
from tests.unit.scheduler import fakes

GOOD = {
    'hosts': 4, 'up_hosts': 3,
    'resources': {
        'VCPU': {'capacity': 64.0, 'free': 40.0, 'max_free': 16.0},
        'MEMORY_MB': {'capacity': 131072, 'free': 65536, 'max_free': 32768},
        'DISK_GB': {'capacity': 800.0, 'free': 400.0, 'max_free': 200.0},
    },
    'zones': ['nova', 'az2'],
    'computed_at': 1764620000.0,
}


def _with(path, value):
    """GOOD with the field at ``path`` (a tuple of keys) set to value."""
    document = copy.deepcopy(GOOD)
    where = document
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    return document


class OfStatesTest(test_base.TestCase):
    """The figures sum the up hosts; only free room is summed anew each
    time, the rest follows inventories and liveness."""

    DOWN_TIME = 60

    def setUp(self):
        super().setUp()
        self.states = fakes.states(
            fakes.host('a', vcpus=16, used={'VCPU': 4}),
            fakes.host('b', vcpus=8, az='east'),
            fakes.host('off', vcpus=32, disabled=True, az='west'),
            fakes.host('down', vcpus=32, last_seen_up=fakes.NOW - 1000,
                       az='west'))

    def _vcpu(self):
        found = aggregate.of_states(self.states, self.DOWN_TIME)
        return (found['hosts'], found['up_hosts'], found['zones'],
                found['resources']['VCPU'])

    def test_figures_count_the_up_hosts_only(self):
        self.assertEqual(
            (4, 2, ['east', 'nova'],
             {'capacity': 24.0, 'free': 20.0, 'max_free': 12.0}),
            self._vcpu())

    def test_free_room_follows_every_claim(self):
        self._vcpu()
        self.states.add_usage(self.states.index['uuid-a'],
                              {'VCPU': 10})
        self.assertEqual({'capacity': 24.0, 'free': 10.0, 'max_free': 8.0},
                         self._vcpu()[3])

    def test_an_over_committed_host_has_nothing_free(self):
        self._vcpu()
        self.states.set_resources(
            self.states.index['uuid-b'],
            {'VCPU': {'total': 2}, 'MEMORY_MB': {'total': 512},
             'DISK_GB': {'total': 10}}, {'VCPU': 6})
        self.assertEqual({'capacity': 18.0, 'free': 12.0, 'max_free': 12.0},
                         self._vcpu()[3])

    def test_a_removed_host_leaves_the_figures(self):
        self._vcpu()
        self.states.remove_host('uuid-a')
        self.assertEqual(
            (3, 1, ['east'],
             {'capacity': 8.0, 'free': 8.0, 'max_free': 8.0}),
            self._vcpu())

    def test_no_host_up_has_nothing_free(self):
        self.states.remove_host('uuid-a')
        self.states.remove_host('uuid-b')
        self.assertEqual(
            (2, 0, [], {'capacity': 0.0, 'free': 0.0, 'max_free': 0.0}),
            self._vcpu())


def _moved_by(path, value):
    return aggregate.moved(GOOD, _with(path, value))


class MovedTest(test_base.TestCase):
    """What claims change that the API level must hear of."""

    def test_nothing_published_yet(self):
        self.assertTrue(aggregate.moved(None, GOOD))

    def test_the_same_figures_did_not_move(self):
        self.assertFalse(aggregate.moved(GOOD, copy.deepcopy(GOOD)))

    def test_a_little_less_free_room_did_not_move(self):
        # 1 % of 64 VCPUs is 0.64.
        self.assertFalse(_moved_by(('resources', 'VCPU', 'free'), 39.5))

    def test_free_room_moved_by_more_than_the_slack(self):
        self.assertTrue(_moved_by(('resources', 'VCPU', 'free'), 39.0))

    def test_more_free_room_moved_too(self):
        self.assertTrue(_moved_by(('resources', 'VCPU', 'free'), 41.0))

    def test_the_largest_free_room_always_moves(self):
        self.assertTrue(_moved_by(('resources', 'VCPU', 'max_free'), 15.9))

    def test_capacity_moves(self):
        self.assertTrue(_moved_by(('resources', 'DISK_GB', 'capacity'),
                                  801.0))

    def test_hosts_up_and_zones_move(self):
        self.assertEqual(
            [True, True, True],
            [_moved_by(('up_hosts',), 2), _moved_by(('hosts',), 5),
             _moved_by(('zones',), ['nova'])])

    def test_a_class_new_to_the_cell_moves(self):
        before = copy.deepcopy(GOOD)
        del before['resources']['DISK_GB']
        self.assertTrue(aggregate.moved(before, GOOD))


class _Cache:
    """What a Publisher reads of a HostStateCache."""

    def __init__(self, states):
        self.states = states
        self.version = 1
        self.scope = mock.Mock()
        self.scope.name = 'cell1'

    @contextlib.contextmanager
    def locked(self):
        yield self.states


class PublisherTest(test_base.TestCase):
    """The bounded-rate writes: only figures that moved, or a heartbeat."""

    def setUp(self):
        super().setUp()
        self.states = fakes.states(
            *[fakes.host(f'h{i}', vcpus=100)
              for i in range(4)])
        self.cache = _Cache(self.states)
        self.written = []
        self.useFixture(fixtures.MockPatchObject(
            aggregate, 'publish',
            lambda ctx, name, document: self.written.append(document)))
        self.publisher = aggregate.Publisher('s1', self.cache,
                                             context=mock.Mock())
        self.publisher.publish_now()

    def _claim(self, pos, vcpus):
        self.states.add_usage(pos, {'VCPU': vcpus})
        self.cache.version += 1
        self.publisher.publish_if_due()

    def test_nothing_changed_writes_nothing(self):
        self.publisher.publish_if_due()
        self.assertEqual(1, len(self.written))

    def test_claims_that_moved_nothing_are_not_written(self):
        # Four hosts up to 100 VCPUs: taking 1 on two of them leaves the
        # largest free room at 100 and moves free room by 0.5 %.
        self._claim(0, 1)
        self._claim(1, 1)
        self.assertEqual(1, len(self.written))

    def test_claims_add_up_until_they_move_the_figures(self):
        self._claim(0, 1)
        self._claim(1, 1)
        self._claim(2, 1)  # 3 of 400 VCPUs is still within 1 %
        self._claim(3, 2)  # 5 of 400 is not, and no host has 100 left
        self.assertEqual((2, 395.0, 99.0),
                         (len(self.written),
                          self.written[-1]['resources']['VCPU']['free'],
                          self.written[-1]['resources']['VCPU']['max_free']))

    def test_the_heartbeat_writes_whatever_happened(self):
        self.flags(aggregate_heartbeat_interval=0.1, group='scheduler')
        self.publisher._published_at -= 1.0
        self.publisher.publish_if_due()
        self.assertEqual(2, len(self.written))

    def test_the_heartbeat_follows_the_feed_first(self):
        # A change that reached the cell's database behind every
        # scheduler (an operator's trait) is pulled before the
        # heartbeat writes, so the API level sees it within one.
        follower = mock.Mock()

        def pulled(context, measured):
            self.assertFalse(measured)
            self.states.add_usage(0, {'VCPU': 50})
        follower.catch_up.side_effect = pulled
        publisher = aggregate.Publisher('s1', self.cache,
                                        context=mock.Mock(),
                                        follower=follower)
        self.flags(aggregate_heartbeat_interval=0.1, group='scheduler')
        publisher.publish_if_due()
        self.assertEqual(1, follower.catch_up.call_count)
        self.assertEqual(350.0,
                         self.written[-1]['resources']['VCPU']['free'])
        publisher.publish_if_due()  # not due again: no pull
        self.assertEqual(1, follower.catch_up.call_count)

    def test_room_given_back_is_written_at_once(self):
        self.states.add_usage(0, {'VCPU': 1}, sign=-1)
        self.publisher.publish_now()
        self.assertEqual(2, len(self.written))


class ValidatedTest(test_base.TestCase):

    def _refused(self, document, field):
        exc = self.assertRaises(exception.Invalid, aggregate.validated,
                                document)
        self.assertIn(field, str(exc))
        return str(exc)

    def test_a_good_aggregate_is_taken_with_float_amounts(self):
        checked = aggregate.validated(GOOD)
        self.assertEqual(
            (4, 3, ['nova', 'az2'], 131072.0),
            (checked['hosts'], checked['up_hosts'], checked['zones'],
             checked['resources']['MEMORY_MB']['capacity']))
        self.assertIs(float, type(
            checked['resources']['MEMORY_MB']['capacity']))

    def test_a_list_is_refused(self):
        self._refused([GOOD], 'an aggregate is a mapping')

    def test_a_string_is_refused(self):
        self._refused('{"hosts": 1}', 'an aggregate is a mapping')

    def test_resources_not_a_mapping_are_refused(self):
        self._refused(_with(('resources',), [1, 2]), 'aggregate resources')

    def test_a_resource_class_not_a_mapping_is_refused(self):
        self._refused(_with(('resources', 'VCPU'), 64), 'aggregate VCPU')

    def test_a_negative_amount_is_refused(self):
        self._refused(_with(('resources', 'VCPU', 'free'), -1.0),
                      'aggregate VCPU free')

    def test_nan_is_refused(self):
        self._refused(_with(('resources', 'MEMORY_MB', 'max_free'),
                            float('nan')), 'aggregate MEMORY_MB max_free')

    def test_infinity_is_refused(self):
        self._refused(_with(('resources', 'DISK_GB', 'capacity'),
                            float('inf')), 'aggregate DISK_GB capacity')

    def test_a_huge_amount_is_refused(self):
        self._refused(_with(('resources', 'VCPU', 'capacity'), 10 ** 30),
                      'aggregate VCPU capacity')

    def test_an_amount_that_is_a_string_is_refused(self):
        self._refused(_with(('resources', 'VCPU', 'free'), '40'),
                      'aggregate VCPU free')

    def test_a_bool_is_no_amount(self):
        self._refused(_with(('resources', 'VCPU', 'max_free'), True),
                      'aggregate VCPU max_free')

    def test_a_known_class_missing_a_figure_is_refused(self):
        document = copy.deepcopy(GOOD)
        del document['resources']['VCPU']['max_free']
        self._refused(document, 'aggregate VCPU max_free')

    def test_a_known_class_left_out_is_left_out(self):
        document = copy.deepcopy(GOOD)
        del document['resources']['DISK_GB']
        self.assertEqual(['MEMORY_MB', 'VCPU'],
                         sorted(aggregate.validated(document)['resources']))

    def test_a_name_that_is_no_class_is_dropped(self):
        document = _with(('resources', 'custom gpu'),
                         {'capacity': 'anything'})
        self.assertNotIn('custom gpu',
                         aggregate.validated(document)['resources'])

    def test_a_custom_class_must_be_complete(self):
        self._refused(_with(('resources', 'CUSTOM_GPU'),
                            {'capacity': 'anything'}),
                      'aggregate CUSTOM_GPU')

    def test_a_bool_is_no_host_count(self):
        self._refused(_with(('hosts',), True), 'aggregate hosts')

    def test_a_negative_host_count_is_refused(self):
        self._refused(_with(('up_hosts',), -1), 'aggregate up_hosts')

    def test_a_fractional_host_count_is_refused(self):
        self._refused(_with(('up_hosts',), 2.5), 'aggregate up_hosts')

    def test_a_huge_host_count_is_refused(self):
        self._refused(_with(('hosts',), 10 ** 12), 'aggregate hosts')

    def test_a_missing_host_count_is_refused(self):
        document = copy.deepcopy(GOOD)
        del document['up_hosts']
        self._refused(document, 'aggregate up_hosts')

    def test_too_many_zones_are_refused(self):
        self._refused(_with(('zones',), [f'az{i}' for i in range(
            aggregate.MAX_ZONES + 1)]), 'aggregate zones')

    def test_a_zone_that_is_no_name_is_refused(self):
        self._refused(_with(('zones',), ['nova', 7]), 'aggregate zones')

    def test_an_empty_zone_name_is_refused(self):
        self._refused(_with(('zones',), ['']), 'aggregate zones')

    def test_a_zone_name_too_long_is_refused(self):
        self._refused(_with(('zones',), ['z' * (aggregate.MAX_NAME + 1)]),
                      'aggregate zones')

    def test_zones_not_a_list_are_refused(self):
        self._refused(_with(('zones',), 'nova'), 'aggregate zones')

    def test_a_computed_at_that_is_no_time_is_refused(self):
        self._refused(_with(('computed_at',), float('nan')),
                      'aggregate computed_at')

    def test_the_message_never_echoes_the_value(self):
        message = self._refused(
            _with(('resources', 'VCPU', 'free'), '<script>evil</script>'),
            'aggregate VCPU free')
        self.assertNotIn('evil', message)
