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
import time

from taskflow.listeners import base as listener_base
from taskflow import states

from cellboot.conductor import manager
from cellboot.workflows import jobboard
from cellboot.workflows import lookup
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
        conductor.owner = name
        conductor.flow_listeners = [
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
        # still one flow, run by one of them.
        uuids = [self._request(a, b) for _ in range(6)]
        self.cluster.wait_for_quiet()
        self._wait_for_empty_board(a.board)
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
        dying.flow_listeners = [
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
        self._wait_for_empty_board(survivor.board)
        self._assert_all_built_once([uuid])
        (flow,) = lookup.find_flows(self.cluster.flow_url)
        (resumption,) = flow['meta']['resumptions']
        self.assertEqual(('survivor:2', 'survivor:2', 'RUNNING'),
                         (flow['meta']['owner'], resumption['by'],
                          resumption['from_state']))

    def test_referenced_flows_are_those_of_the_jobs_on_the_board(self):
        conductor = self._conductor('idle:1', start=False)
        conductor.board = jobboard.connect('boot',
                                           self.cluster.flow_url)
        self.addCleanup(conductor.board.close)
        self._request(conductor)
        (flow,) = lookup.find_flows(self.cluster.flow_url)
        self.assertEqual({flow['uuid']},
                         jobboard.referenced_flow_uuids(conductor.board))
        self.assertFalse(conductor.hand_over(flow['uuid']))
