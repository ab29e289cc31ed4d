"""The thread that runs a conductor's checks (no database needed)."""

import logging
import threading
import types

import fixtures

from cellboot.conductor import abandoned_flows
from cellboot.conductor import build_timeouts
from cellboot.conductor import handbacks
from cellboot.conductor import orphans
from cellboot.conductor import pool_orphans
from cellboot.conductor import stray_claims
from cellboot.conductor import sweepers
from cellboot.conductor import unfinished_deletes
from cellboot.conductor import unowned_flows
from cellboot.conductor import unplaced_allocations
from tests import base
from tests.functional.compute import base as compute_base

INTERVAL = 0.02


class CountingCheck:
    """A check that records its sweeps and reports ``done``."""

    def __init__(self, done=None, error=None):
        self.sweeps = 0
        self.done = done or {}
        self.error = error
        self.swept = threading.Event()

    def sweep_once(self, context):
        self.sweeps += 1
        self.swept.set()
        if self.error is not None:
            raise self.error
        return self.done


class SweeperTest(base.TestCase):

    def _start(self, *checks):
        sweeper = sweepers.Sweeper(checks, INTERVAL, 'test sweeper').start()
        self.addCleanup(sweeper.stop)
        return sweeper

    def test_checks_run_every_interval(self):
        check = CountingCheck()
        self._start(check)
        self.assertTrue(compute_base.wait_for(lambda: check.sweeps >= 3))

    def test_a_failing_check_neither_stops_the_others_nor_the_next_sweeps(
            self):
        failing = CountingCheck(error=RuntimeError('database went away'))
        other = CountingCheck()
        self._start(failing, other)
        self.assertTrue(compute_base.wait_for(
            lambda: failing.sweeps >= 2 and other.sweeps >= 2))

    def test_stop_returns_once_the_thread_is_gone(self):
        check = CountingCheck()
        sweeper = self._start(check)
        self.assertTrue(check.swept.wait(5))
        sweeper.stop()
        self.assertEqual([], [thread for thread in threading.enumerate()
                              if thread.name == 'test sweeper'])

    def test_a_sweep_that_acted_is_one_info_line_with_its_counts(self):
        logger = self.useFixture(fixtures.FakeLogger(
            name=sweepers.__name__, level=logging.INFO))
        sweeper = sweepers.Sweeper(
            [CountingCheck({'timed_out': 2}), CountingCheck({'started': 0})],
            INTERVAL, 'cell1 sweeper')
        sweeper.sweep_once(None)
        self.assertEqual(['cell1 sweeper: CountingCheck timed_out=2'],
                         logger.output.splitlines())


class StartForTest(base.TestCase):

    def _start_for(self, kind):
        self.flags(sweep_interval=30, group='conductor')
        sweeper = sweepers.start_for(types.SimpleNamespace(KIND=kind))
        self.addCleanup(sweeper.stop)
        return sweeper

    def test_a_super_conductor_sweeps_orphans_then_unfinished_deletes(self):
        sweeper = self._start_for('boot')
        self.assertEqual(([orphans.OrphanBuildRequests,
                           unfinished_deletes.UnfinishedDeletes,
                           pool_orphans.PoolOrphans,
                           unplaced_allocations.UnplacedAllocations,
                           handbacks.HandedBack], 30),
                         ([type(check) for check in sweeper.checks],
                          sweeper.interval))

    def test_a_cell_conductor_hands_over_flows_then_sweeps_build_timeouts(
            self):
        sweeper = self._start_for('reschedule')
        self.assertEqual([unowned_flows.UnownedFlows,
                          abandoned_flows.AbandonedFlows,
                          build_timeouts.BuildTimeouts,
                          stray_claims.StrayClaims],
                         [type(check) for check in sweeper.checks])
