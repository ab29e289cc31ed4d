"""Super conductors sharing a Redis jobboard: each boot runs once, and a
dead conductor's flow is resumed by a survivor.

In-process (SQLite, ``fake://``) against the local Redis, in a namespace
of the test's own. Each conductor is a ``SuperConductorManager`` with a
name of its own, started as a conductor process starts one (its jobboard
conductor thread claims jobs); requests are handed to their
``schedule_and_build_instances`` endpoint the way the RPC server does.
"""

import collections
import threading
import types
import time

from taskflow.listeners import base as listener_base
from taskflow import states

from cellboot.conductor import manager
from cellboot.flowrun import jobboard
from cellboot.flowrun import lookup
from tests import base
from tests.functional import cluster
from tests.functional import invariants
from tests import fixtures as cb_fixtures

# Seconds a claim lasts in these tests (renewed every third of it).
CLAIM_EXPIRY = 2.0


class Killed(BaseException):
    """The conductor process is gone (SIGKILL, power loss)."""


class Recorder(listener_base.Listener):
    """Records which conductor ran each flow's ``schedule`` atom."""

    def __init__(self, engine, owner, runs):
        super().__init__(engine, task_listen_for=[states.SUCCESS],
                         flow_listen_for=[], retry_listen_for=[])
        self.owner = owner
        self.runs = runs

    def _task_receiver(self, state, details):
        if details['task_name'] == 'schedule':
            self.runs[self._engine.storage.flow_uuid].append(self.owner)


class Steps(listener_base.Listener):
    """Records the atoms each conductor ran to their end, in order."""

    def __init__(self, engine, owner, steps):
        super().__init__(engine, task_listen_for=[states.SUCCESS],
                         flow_listen_for=[], retry_listen_for=[])
        self.owner = owner
        self.steps = steps

    def _task_receiver(self, state, details):
        self.steps[self.owner].append(details['task_name'])


class Gate(listener_base.Listener):
    """Holds the engine as ``atom`` starts until ``go`` is set.

    Sets ``reached`` first: the test knows the conductor is there (a
    process starved of CPU in the middle of a step).
    """

    def __init__(self, engine, atom, reached, go):
        super().__init__(engine, task_listen_for=[states.RUNNING],
                         flow_listen_for=[], retry_listen_for=[])
        self.atom = atom
        self.reached = reached
        self.go = go

    def _task_receiver(self, state, details):
        if details['task_name'] == self.atom:
            self.reached.set()
            self.go.wait(20)


class KillAfter(listener_base.Listener):
    """Kills the conductor once ``atom`` succeeded; sets ``killed``."""

    def __init__(self, engine, atom, killed):
        super().__init__(engine, task_listen_for=[states.SUCCESS],
                         flow_listen_for=[], retry_listen_for=[])
        self.atom = atom
        self.killed = killed

    def _task_receiver(self, state, details):
        if details['task_name'] == self.atom:
            self.killed.set()
            raise Killed(f'killed after {self.atom}')


class SharedBoardTest(base.TestCase):

    def setUp(self):
        super().setUp()
        redis = self.useFixture(cb_fixtures.Redis())
        self.cluster = self.useFixture(cluster.Cluster(cells=1,
                                                       hosts_per_cell=2))
        self.flags(backend='redis', url=redis.url,
                   namespace=redis.namespace, claim_expiry=CLAIM_EXPIRY,
                   max_simultaneous_jobs=1, group='jobboard')
        self.runs = collections.defaultdict(list)

    def _conductor(self, name, start=True):
        conductor = manager.SuperConductorManager(
            scheduler=self.cluster.scheduler)
        conductor.runner.owner = name
        conductor.runner.flow_listeners = [
            lambda engine: Recorder(engine, name, self.runs)]
        if start:
            self._start(conductor)
        return conductor

    def _start(self, conductor):
        self.addCleanup(conductor.stop)
        conductor.start(self.cluster.ctx)

    def _request(self, *conductors):
        """Persist one request and cast it to each of ``conductors``."""
        build_requests, specs = self.cluster.build_request()
        for conductor in conductors:
            conductor.schedule_and_build_instances(
                self.cluster.ctx, build_requests, specs)
        return build_requests[0]['instance_uuid']

    def _assert_all_built_once(self, uuids):
        self.assertEqual({'active'}, {self.cluster.find(uuid)[1].vm_state
                                      for uuid in uuids})
        flows = lookup.find_flows(self.cluster.flow_url)
        self.assertEqual((len(uuids), {'SUCCESS'}),
                         (len(flows), {flow['state'] for flow in flows}))
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def _wait_for_empty_board(self, board, timeout=10):
        deadline = time.monotonic() + timeout
        while board.job_count and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(0, board.job_count)

    def test_two_conductors_build_every_request_once(self):
        a = self._conductor('conductor-a:1')
        b = self._conductor('conductor-b:2')
        # Every request is cast to both (a redelivered message, say):
        # still one flow, run by one of them (the first to receive it,
        # which posts it and takes it at once: each takes half).
        uuids = [self._request(*((a, b) if index % 2 else (b, a)))
                 for index in range(6)]
        self.cluster.wait_for_quiet()
        self._wait_for_empty_board(a.runner.board)
        self._assert_all_built_once(uuids)
        self.assertEqual([1] * len(uuids),
                         [len(owners) for owners in self.runs.values()])
        ran_by = collections.Counter(owners[0]
                                     for owners in self.runs.values())
        self.assertEqual({'conductor-a:1', 'conductor-b:2'}, set(ran_by),
                         ran_by)
        # A job claimed by another conductor than its poster is no
        # take-over of anybody's work: no resumption recorded.
        self.assertEqual([None] * len(uuids),
                         [flow['meta'].get('resumptions') for flow in
                          lookup.find_flows(self.cluster.flow_url)])

    def test_a_dead_conductors_flow_is_resumed_by_a_survivor(self):
        killed = threading.Event()
        dying = self._conductor('dying:1', start=False)
        dying.runner.flow_listeners = [
            lambda engine: KillAfter(engine, 'create-in-cell', killed)]
        self._start(dying)
        uuid = self._request(dying)
        self.assertTrue(killed.wait(10))
        # Dead: it claims nothing more and never renews or consumes.
        dying.stop()
        (flow,) = lookup.find_flows(self.cluster.flow_url)
        self.assertEqual(('RUNNING', 'dying:1'),
                         (flow['state'], flow['meta']['owner']))

        survivor = self._conductor('survivor:2')
        self.cluster.wait_for_quiet(timeout=CLAIM_EXPIRY * 5)
        self._wait_for_empty_board(survivor.runner.board)
        self._assert_all_built_once([uuid])
        (flow,) = lookup.find_flows(self.cluster.flow_url)
        (resumption,) = flow['meta']['resumptions']
        self.assertEqual(('survivor:2', 'survivor:2', 'RUNNING'),
                         (flow['meta']['owner'], resumption['by'],
                          resumption['from_state']))

    def test_referenced_flows_are_those_of_the_jobs_on_the_board(self):
        conductor = self._conductor('idle:1', start=False)
        conductor.runner.board = jobboard.connect('boot',
                                                  self.cluster.flow_url)
        self.addCleanup(conductor.runner.board.close)
        self._request(conductor)
        (flow,) = lookup.find_flows(self.cluster.flow_url)
        self.assertEqual(
            {flow['uuid']},
            jobboard.referenced_flow_uuids(conductor.runner.board))
        self.assertFalse(conductor.runner.hand_over(flow['uuid']))

    def test_a_flow_has_one_job_however_often_it_is_posted(self):
        # Two conductors handing the same flow over at once (two
        # sweepers): one job, whoever posts first.
        a = self._conductor('sweeper-a:1', start=False)
        b = self._conductor('sweeper-b:2', start=False)
        for conductor in (a, b):
            conductor.runner.board = jobboard.connect(
                'boot', self.cluster.flow_url)
            self.addCleanup(conductor.runner.board.close)
        self._request(a)
        (flow,) = lookup.find_flows(self.cluster.flow_url)
        flow_uuid = flow['uuid']
        self.assertIsNone(jobboard.post(b.runner.board, 'boot', flow_uuid))
        self.assertEqual((False, False, 1),
                         (a.runner.hand_over(flow_uuid),
                          b.runner.hand_over(flow_uuid),
                          b.runner.board.job_count))

    def _pause_renewer(self, conductor):
        """Stall ``conductor``'s renewer thread (not the engine's checks).

        Returns ``(go, renewed)``: set ``go`` to let it renew; it sets
        ``renewed`` after its first renewal.
        """
        renewer = conductor.runner._flow_conductor.renewer
        real_renew, go, renewed = (renewer.renew, threading.Event(),
                                   threading.Event())
        self.addCleanup(go.set)

        def paused_renew(claim):
            if not threading.current_thread().name.startswith(
                    'claim renewer'):
                return real_renew(claim)
            go.wait(20)
            try:
                return real_renew(claim)
            finally:
                renewed.set()

        renewer.renew = paused_renew
        return go, renewed

    def _wait_until_idle(self, conductor, timeout=10):
        """Until ``conductor`` runs no flow and has no job in hand."""
        deadline = time.monotonic() + timeout
        while (conductor.runner._running or
               conductor.runner._flow_conductor._dispatched) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual((set(), set()),
                         (conductor.runner._running,
                          conductor.runner._flow_conductor._dispatched))

    def test_a_claim_lost_before_the_flow_started_runs_nothing(self):
        # The conductor claims a job, but the thread that runs it starts
        # late (a loaded machine), after the claim ran out and another
        # conductor took the job and started the flow: the late one must
        # not run a step of it (two ``schedule`` at once).
        self.flags(claim_expiry=1.0, group='jobboard')
        steps = collections.defaultdict(list)
        late = self._conductor('late:1', start=False)
        late.runner.flow_listeners = [
            lambda engine: Steps(engine, 'late:1', steps)]
        self._start(late)
        flow_conductor = late.runner._flow_conductor
        real_dispatch = flow_conductor._dispatch_job
        dispatched, go = threading.Event(), threading.Event()
        self.addCleanup(go.set)

        def late_dispatch(job):
            dispatched.set()
            go.wait(20)
            return real_dispatch(job)

        flow_conductor._dispatch_job = late_dispatch
        uuid = self._request(late)
        self.assertTrue(dispatched.wait(10))

        b_there, b_go = threading.Event(), threading.Event()
        self.addCleanup(b_go.set)
        taker = self._conductor('taker:2', start=False)
        taker.runner.flow_listeners = [
            lambda engine: Steps(engine, 'taker:2', steps),
            lambda engine: Gate(engine, 'schedule', b_there, b_go)]
        self._start(taker)
        self.assertTrue(b_there.wait(10))
        with self.assertLogs('cellboot.flowrun', 'WARNING') as log:
            go.set()
            self._wait_until_idle(late)
        self.assertIn('taker:2', '\n'.join(log.output))
        b_go.set()
        self.cluster.wait_for_quiet()
        self._wait_for_empty_board(taker.runner.board)
        self.assertEqual(([], 'schedule'),
                         (steps['late:1'], steps['taker:2'][0]))
        self._assert_all_built_once([uuid])

    def _stall_then_take_over(self):
        """A conductor stalled in ``create-in-cell``, its renewer paused,
        beyond a 1 s claim; another one resumes the flow and waits at
        ``map-instance``.

        Returns a namespace: ``steps`` (conductor name -> atoms it ran),
        ``starved``, ``taker``, ``uuid``, ``let_starved_go``,
        ``let_taker_go``, ``renewing`` and ``renewed`` (see
        ``_pause_renewer``).
        """
        self.flags(claim_expiry=1.0, group='jobboard')
        steps = collections.defaultdict(list)
        a_stalled, a_go = threading.Event(), threading.Event()
        b_there, b_go = threading.Event(), threading.Event()
        self.addCleanup(a_go.set)
        self.addCleanup(b_go.set)
        starved = self._conductor('starved:1', start=False)
        starved.runner.flow_listeners = [
            lambda engine: Steps(engine, 'starved:1', steps),
            lambda engine: Gate(engine, 'create-in-cell', a_stalled, a_go)]
        self._start(starved)
        renewing, renewed = self._pause_renewer(starved)
        uuid = self._request(starved)
        self.assertTrue(a_stalled.wait(10))

        taker = self._conductor('taker:2', start=False)
        taker.runner.flow_listeners = [
            lambda engine: Steps(engine, 'taker:2', steps),
            # (The step it resumes at, left RUNNING, runs again without
            # a RUNNING notification: it waits at the next one.)
            lambda engine: Gate(engine, 'map-instance', b_there, b_go)]
        self._start(taker)
        self.assertTrue(b_there.wait(10))
        return types.SimpleNamespace(
            steps=steps, starved=starved, taker=taker, uuid=uuid,
            let_starved_go=a_go, let_taker_go=b_go, renewing=renewing,
            renewed=renewed)

    def _finish_taken_over(self, run):
        run.let_taker_go.set()
        self.cluster.wait_for_quiet()
        self._wait_for_empty_board(run.taker.runner.board)
        self._assert_all_built_once([run.uuid])

    def test_a_lost_claim_stops_the_flow_before_its_next_step(self):
        # The stalled conductor finds the loss itself (its renewer still
        # asleep) at create-in-cell's fence check, before the step's first
        # write: that step does not end, and no further one starts.
        run = self._stall_then_take_over()
        run.let_starved_go.set()
        self._wait_until_idle(run.starved)
        self._finish_taken_over(run)
        self.assertEqual(['schedule', 'claim-pool', 'map-host-to-cell'],
                         run.steps['starved:1'])

    def test_a_conductor_that_lost_its_claim_stops_and_consumes_nothing(self):
        # When the stalled one's renewer wakes up and finds the claim in
        # other hands, the step under way is fenced before its first write,
        # its engine stops, and it leaves the job alone.
        run = self._stall_then_take_over()
        with self.assertLogs('cellboot.flowrun', 'WARNING') as log:
            run.renewing.set()
            self.assertTrue(run.renewed.wait(10))
            run.let_starved_go.set()
            self._wait_until_idle(run.starved)
        self.assertIn('taker:2', '\n'.join(log.output))
        self._finish_taken_over(run)
        # The taker replays map-host-to-cell: a rerun-safe atom, whose
        # success the starved run had not written yet.
        self.assertEqual(
            (['schedule', 'claim-pool', 'map-host-to-cell'],
             ['claim-pool', 'map-host-to-cell', 'create-in-cell',
              'map-instance', 'delete-build-request', 'cast-to-compute']),
            (run.steps['starved:1'], run.steps['taker:2']))
        (flow,) = lookup.find_flows(self.cluster.flow_url)
        (resumption,) = flow['meta']['resumptions']
        self.assertEqual(('taker:2', 'RUNNING'),
                         (resumption['by'], resumption['from_state']))
