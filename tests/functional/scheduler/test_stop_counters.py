"""The line of counters a scheduler service logs as it stops.

``cellboot-scheduler`` (``cellboot.cmd.scheduler.Started``) logs, when
SIGTERM stops it, what its scheduler did: a cell's scheduler its claims
tried and failed and its change feed's pulls, the API level the
requests it placed and the cells that refused them, both their
process's generation conflicts. The counts are checked here against a
race staged in one process (two schedulers of one cell, one of them
claiming behind the other's back), and the parser the race benchmark
reads the services' logs with against lines it must not trust.
"""

import logging

import fixtures

from cellboot.cmd import scheduler as scheduler_cmd
from cellboot import exception
from cellboot.scheduler import api
from cellboot.scheduler import host_state_cache
from tests import base
from tests.functional.scheduler import placement_base


class StopCountersTest(placement_base.FleetTestCase, base.SQLiteMixin):

    CELLS = 1

    def setUp(self):
        super().setUp()
        self.flags(sync_pull_interval=0.0, group='scheduler')
        self.log = self.useFixture(fixtures.FakeLogger(
            name='cellboot.cmd.scheduler', level=logging.INFO,
            format='%(levelname)s %(message)s'))

    def cell_scheduler_named(self, name):
        scheduler = api.CellScheduler(
            host_state_cache.CellScope('cell1', self.cells[0]), name=name)
        self.addCleanup(scheduler.stop)
        return scheduler

    def place(self, scheduler):
        return scheduler.select_destinations(
            self.ctx, placement_base.spec(), placement_base.uuids(1))

    def stopped(self, scheduler):
        """The counters ``scheduler``'s service logs as it stops."""
        scheduler_cmd.Started(scheduler, self.ctx).stop()
        [counters] = scheduler_cmd.parse_counters(self.log.output)
        return counters

    def race_for_one_slot(self):
        """A claims the only slot; B, which did not see it, tries too."""
        self.add_host('h', vcpus=2)   # room for one SMALL instance
        a = self.cell_scheduler_named('a')
        b = self.cell_scheduler_named('b')
        for scheduler in (a, b):
            scheduler.start(self.ctx, refresh_interval=0)
        self.place(a)
        self.assertRaises(exception.NoValidHost, self.place, b)
        return a, b

    def test_a_failed_claim_is_counted_in_the_losers_line(self):
        self.flags(sync_backend='none', group='scheduler')
        _a, b = self.race_for_one_slot()

        counters = self.stopped(b)

        self.assertEqual(
            {'claims_tried': 1, 'failed_claims': 1,
             'generation_conflicts': 0, 'db_retries': 0}, counters)
        self.assertTrue(self.log.output.startswith(
            f'INFO {scheduler_cmd.COUNTERS} '), self.log.output)

    def test_a_scheduler_that_followed_the_feed_did_not_try(self):
        self.flags(sync_backend='database', group='scheduler')
        _a, b = self.race_for_one_slot()

        counters = self.stopped(b)

        self.assertEqual((0, 0), (counters['claims_tried'],
                                  counters['failed_claims']))
        self.assertEqual((1, 0, 0), (counters['sync_seen'],
                                     counters['sync_errors'],
                                     counters['sync_reloads']))
        self.assertGreaterEqual(counters['sync_pulls'], 1)
        self.assertGreaterEqual(counters['sync_lag_p99_ms'],
                                counters['sync_lag_p50_ms'])
        self.assertGreaterEqual(counters['sync_view_age_p99_ms'],
                                counters['sync_view_age_p50_ms'])

    def test_the_winners_line_counts_its_claim(self):
        self.flags(sync_backend='none', group='scheduler')
        a, _b = self.race_for_one_slot()

        counters = self.stopped(a)

        self.assertEqual((1, 0), (counters['claims_tried'],
                                  counters['failed_claims']))

    def test_the_api_levels_line_counts_placed_and_refused(self):
        self.add_host('h', vcpus=2)
        self.start()
        self.scheduler.select_destinations(
            self.ctx, placement_base.spec(), placement_base.uuids(1))
        self.assertRaises(exception.NoValidHost,
                          self.scheduler.select_destinations, self.ctx,
                          placement_base.spec(), placement_base.uuids(1))

        counters = self.stopped(self.scheduler)

        self.assertEqual((1, 0), (counters['requests_placed'],
                                  counters['cells_unreachable']))
        # Refused by its cell, or not even asked (its aggregate full).
        self.assertLessEqual(counters['cells_refused'], 1)


class ParseCountersTest(base.TestCase):

    def test_what_is_formatted_is_parsed_back(self):
        counters = {'claims_tried': 12, 'failed_claims': 0,
                    'sync_lag_p50_ms': 3.5}
        line = (f'2025-01-01 INFO cellboot.cmd.scheduler [-] '
                f'{scheduler_cmd.COUNTERS} '
                f'{scheduler_cmd.format_counters(counters)}')

        self.assertEqual([counters], scheduler_cmd.parse_counters(
            f'before\n{line}\nafter\n'))

    def test_a_log_without_the_line_has_no_counters(self):
        self.assertEqual([], scheduler_cmd.parse_counters(
            'Caught SIGTERM, stopping\n'))

    def test_pairs_that_are_not_name_equals_number_are_left_out(self):
        line = (f'{scheduler_cmd.COUNTERS} ok=1 word=abc =3 Upper=4 '
                f'exp=1e5 neg=-2 nan=nan nested=a=1 half=1. empty= '
                f"{'é' * 100}=1 x-y=1")

        self.assertEqual([{'ok': 1, 'neg': -2}],
                         scheduler_cmd.parse_counters(line))

    def test_each_incarnations_line_is_kept_in_order(self):
        lines = '\n'.join(f'{scheduler_cmd.COUNTERS} failed_claims={n}'
                          for n in (3, 5))

        self.assertEqual([{'failed_claims': 3}, {'failed_claims': 5}],
                         scheduler_cmd.parse_counters(lines))
