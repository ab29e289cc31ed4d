"""The proof: a conductor stalled past its claim is fenced out.

Two jobboard conductors (cellboot's ``FlowConductor`` on the Redis
board, in a namespace of the test's own) share a flow database on
MariaDB or PostgreSQL. Conductor ``stalled:1`` claims a ``fencetest``
flow's job and stalls inside its ``stall`` step, its claim renewer
asleep as well (a process starved of CPU), beyond ``claim_expiry``; its
claim runs out and conductor ``taker:2`` claims the job and runs the
flow to its end. Then the stalled one wakes up: its writes are refused,
its engine stops, and what the database holds is the taker's run, each
step's side effect made once.
"""

import threading
import time

from taskflow import states

from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import fencing
from cellboot.flowrun import records
from cellboot.flowrun import schema as flow_schema
from cellboot.flowrun import tables
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional.fencing import flows

# Seconds a claim lasts here (renewed every third of it).
CLAIM_EXPIRY = 1.0
# Seconds the test waits for something it expects at most (never
# reached unless it fails).
WAIT_SECONDS = 30
STALLED, TAKER = 'stalled:1', 'taker:2'


def wait_for(predicate, what):
    deadline = time.monotonic() + WAIT_SECONDS
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f'still waiting for {what}')
        time.sleep(0.05)


class _StalledConductorTests:

    def setUp(self):
        super().setUp()
        self.useFixture(flows.Kind())
        redis = self.useFixture(cb_fixtures.Redis())
        self.url = self.useFixture(cb_fixtures.Database(
            self.BACKEND, reuse='flows')).url
        flow_schema.sync_flow_database(self.url)
        flows.create_effects_table(self.url)
        self.addCleanup(flow_db.reset)
        self.flags(backend='redis', url=redis.url,
                   namespace=redis.namespace, claim_expiry=CLAIM_EXPIRY,
                   max_simultaneous_jobs=1, group='jobboard')
        self.stalls = flows.Stalls()
        self.addCleanup(self.stalls.release_all)

    def conductor(self, name):
        run = flows.runner(self.url, name, self.stalls)
        self.addCleanup(run.close)
        run.open()
        return run

    def pause_renewer(self, run):
        """Put ``run``'s claim renewer thread to sleep; returns its wake-up.

        The engine's own claim checks (as each step ends) still run.
        """
        renewer = run._flow_conductor.renewer
        real_renew, go = renewer.renew, threading.Event()
        self.addCleanup(go.set)

        def paused_renew(claim):
            if threading.current_thread().name.startswith('claim renewer'):
                go.wait(WAIT_SECONDS)
            return real_renew(claim)

        renewer.renew = paused_renew
        return go

    def state(self, flow_uuid):
        return tables.flow_states(flow_db.get_backend(self.url).engine,
                                  [flow_uuid]).get(flow_uuid)

    def idle(self, run):
        return not run._running and not run._flow_conductor._dispatched

    def stall_then_take_over(self, effect_first):
        """``stalled:1`` stalls in ``stall``; ``taker:2`` ends the flow."""
        self.stalls.hold(STALLED, effect_first=effect_first)
        stalled = self.conductor(STALLED)
        self.pause_renewer(stalled)
        flow_uuid = flows.start(stalled, 'k1')
        self.assertTrue(self.stalls.reached[STALLED].wait(WAIT_SECONDS))

        taker = self.conductor(TAKER)
        wait_for(lambda: self.state(flow_uuid) == states.SUCCESS,
                 'the taker to end the flow')
        wait_for(lambda: taker.board.job_count == 0,
                 'the taker to consume the job')
        return stalled, flow_uuid

    def wake(self, stalled):
        """Let the stalled conductor go on; its WARNING lines."""
        with self.assertLogs('cellboot.flowrun', 'WARNING') as log:
            self.stalls.release(STALLED)
            wait_for(lambda: self.idle(stalled), 'the stalled run to stop')
        return log.output

    def assertFencedOnce(self, flow_uuid, lines):
        (line,) = [line for line in lines if 'was taken over' in line]
        self.assertIn(flow_uuid, line)
        self.assertIn(STALLED, line)
        self.assertIn('holds generation 2', line)
        self.assertIn('at generation 3', line)

    def assertTakersRun(self, flow_uuid):
        detail = records.load_detail(self.url, flow_uuid)
        results = {atom.name: atom.results for atom in detail
                   if atom.name in flows.STEPS}
        self.assertEqual(
            (states.SUCCESS, TAKER, {
                'before': {'by': STALLED, 'token': 2},
                'stall': {'by': TAKER, 'token': 3},
                'after': {'by': TAKER, 'token': 3}}),
            (detail.state, detail.meta['owner'], results))
        with flow_db.get_backend(self.url).engine.connect() as conn:
            self.assertEqual(3, fencing.current(conn, flow_uuid))

    def test_a_stalled_step_wakes_up_fenced_out(self):
        # Stalled before its side effect: the effect, made under the
        # fence, is refused, and the stalled run stops there.
        stalled, flow_uuid = self.stall_then_take_over(effect_first=False)
        done = flows.effects(self.url)

        lines = self.wake(stalled)

        self.assertFencedOnce(flow_uuid, lines)
        self.assertEqual(done, flows.effects(self.url))
        self.assertEqual(
            [('before', STALLED, 2), ('stall', TAKER, 3),
             ('after', TAKER, 3)], done)
        self.assertTakersRun(flow_uuid)

    def test_a_stalled_run_records_nothing_once_it_wakes_up(self):
        # Stalled after its side effect: its step ends, and the run's
        # write of that outcome (and of the flow's state) is refused;
        # no further step starts in it.
        stalled, flow_uuid = self.stall_then_take_over(effect_first=True)

        lines = self.wake(stalled)

        self.assertFencedOnce(flow_uuid, lines)
        self.assertEqual(
            [('before', STALLED, 2), ('stall', STALLED, 2),
             ('stall', TAKER, 3), ('after', TAKER, 3)],
            flows.effects(self.url))
        self.assertTakersRun(flow_uuid)


class MySQLStalledConductorTest(_StalledConductorTests, base.MySQLMixin,
                                base.TestCase):
    pass


class PostgreSQLStalledConductorTest(_StalledConductorTests,
                                     base.PostgreSQLMixin, base.TestCase):
    pass
