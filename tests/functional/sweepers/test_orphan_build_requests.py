"""The super conductor's sweep starts the boots whose cast was lost.

An in-process deployment (SQLite, ``fake://``): a request is persisted
the way the API does, but not cast (the API died after its commit, or
the broker lost the message). Rather than wait out ``[conductor]
orphan_build_request_timeout``, a test makes its request older
(``_age``); waits poll, never sleep a fixed time.
"""

import datetime
import os
import time

from oslo_utils import timeutils
import sqlalchemy as sa

from cellboot.conductor import manager as conductor_manager
from cellboot.conductor import orphans
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db.api import connection as api_connection
from cellboot.db.api import models as api_models
from cellboot.objects import build_request as build_request_obj
from cellboot.flowrun import records
from cellboot.flowrun import jobboard
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional.compute import base as compute_base
from tests.functional import cluster
from tests.functional import invariants
from tests.functional.sweepers import base as sweep_base

TIMEOUT = 60

_REQUESTS = api_models.BuildRequest.__table__


def _age(seconds=TIMEOUT + 1):
    """Every build request was accepted ``seconds`` ago."""
    with api_connection.get_engine().begin() as conn:
        conn.execute(sa.update(_REQUESTS).values(
            created_at=timeutils.utcnow() - datetime.timedelta(
                seconds=seconds)))


class _ClusterTest(base.TestCase):

    HOSTS = 2

    def setUp(self):
        super().setUp()
        self.flags(orphan_build_request_timeout=TIMEOUT, group='conductor')
        self.cluster = self.useFixture(cluster.Cluster(
            cells=1, hosts_per_cell=self.HOSTS))
        self.ctx = cb_context.get_admin_context()
        self.manager = self.cluster.super_conductor
        self.check = orphans.OrphanBuildRequests(self.manager)

    def orphan(self, count=1):
        """Persist a request as the API does, no cast; its uuids."""
        build_requests, specs = self.cluster.build_request(count=count)
        self.payload = (build_requests, specs)
        return [br['instance_uuid'] for br in build_requests]

    def boot_flows(self, uuids):
        return {flow['uuid'] for uuid in uuids
                for flow in self.cluster.flows(uuid)
                if flow['kind'] == 'boot'}

    def assert_built_once(self, uuids):
        """Each instance ACTIVE, all of them in one flow, all clean."""
        self.cluster.wait_for_quiet()
        self.assertEqual(
            (['active'] * len(uuids), 1),
            ([self.cluster.find(uuid)[1].vm_state for uuid in uuids],
             len(self.boot_flows(uuids))))
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))


class OrphanBuildRequestsTest(_ClusterTest):

    def test_an_orphan_is_started_once_and_its_instances_end_active(self):
        uuids = self.orphan(count=3)
        _age()
        # Two super conductors sweep on the same tick: both find the
        # orphan, one flow is made.
        other = orphans.OrphanBuildRequests(
            conductor_manager.SuperConductorManager(
                scheduler=self.cluster.scheduler))
        sweep_base.sweep_at_once([self.check, other])
        self.assert_built_once(uuids)
        build_requests, specs = self.payload
        self.assertEqual(
            {records.flow_uuid('boot', records.boot_flow_key(build_requests))},
            self.boot_flows(uuids))
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 0},
                         self.check.sweep_once(self.ctx))
        # The lost cast turns up after all (a broker redelivering late):
        # it finds the flow and builds nothing more.
        self.cluster.conductor_api.schedule_and_build_instances(
            self.cluster.ctx, build_requests, specs)
        self.assertTrue(compute_base.wait_for(
            lambda: self.cluster.handled('conductor')))
        self.assert_built_once(uuids)


class UnstartedBuildRequestsTest(_ClusterTest):
    """A request with no flow at all is started sooner than an orphan
    flow is handed over: ``[conductor] unstarted_build_request_timeout``.
    """

    UNSTARTED = 5

    def setUp(self):
        super().setUp()
        self.flags(unstarted_build_request_timeout=self.UNSTARTED,
                   group='conductor')

    def test_a_lost_cast_costs_seconds_not_the_orphan_timeout(self):
        uuids = self.orphan()
        _age(self.UNSTARTED + 1)
        self.assertEqual({'started': 1, 'settled': 0, 'handed_over': 0},
                         self.check.sweep_once(self.ctx))
        self.assert_built_once(uuids)

    def test_a_young_request_is_left_to_its_cast(self):
        self.orphan()
        _age(self.UNSTARTED - 3)
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 0},
                         self.check.sweep_once(self.ctx))

    def test_a_request_whose_flow_is_slow_to_start_is_not_started(self):
        # Its conductor saved the flow and has not run it yet (a busy
        # conductor): the request is older than the threshold but it is
        # not lost, and the sweep starts nothing for it.
        uuids = self.orphan()
        build_requests, _specs = self.payload
        key = records.boot_flow_key(build_requests)
        records.create('boot', {'instance_uuids': uuids},
                       CONF.flow_persistence.connection,
                       uuid_=records.flow_uuid('boot', key),
                       meta=records.flow_meta('boot', uuids, self.cluster.ctx))
        _age(self.UNSTARTED + 1)
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 0},
                         self.check.sweep_once(self.ctx))
        self.assertEqual(1, len(self.boot_flows(uuids)))
        self.assertEqual([], self.cluster.handled('conductor'))


class _JobboardTest(_ClusterTest):
    """The super conductor with a boot board of the test's own.

    No conductor thread claims its jobs: a test reads what the sweep
    posted.
    """

    HOSTS = 1

    def setUp(self):
        super().setUp()
        self.redis = self.useFixture(cb_fixtures.Redis())
        self.flags(url=self.redis.url, namespace=self.redis.namespace,
                   group='jobboard')
        self.manager.runner.board = jobboard.connect('boot',
                                                     self.cluster.flow_url)
        self.addCleanup(self.manager.runner.board.close)

    def jobs(self):
        return jobboard.referenced_flow_uuids(self.manager.runner.board)


class SweepLockTest(_JobboardTest):
    """With a jobboard, one super conductor sweeps at a time."""

    def test_the_sweep_waits_for_the_lock_and_gives_it_back(self):
        self.orphan()
        _age()
        holder = self.redis.client.lock(
            f'{self.redis.namespace}.sweeper.boot', timeout=30)
        self.assertTrue(holder.acquire(blocking=False))
        self.assertEqual(({}, set()),
                         (self.check.sweep_once(self.ctx), self.jobs()))
        holder.release()
        build_requests, _specs = self.payload
        self.assertEqual(
            ({'started': 1, 'settled': 0, 'handed_over': 0},
             {records.flow_uuid('boot',
                                records.boot_flow_key(build_requests))}),
            (self.check.sweep_once(self.ctx), self.jobs()))
        self.assertFalse(self.redis.client.exists(orphans.lock_name()))


class SweepLengthTest(_JobboardTest):
    """A sweep longer than the interval keeps the lock; each is short."""

    def slow_hand_over(self, seconds, during=None):
        """``hand_over`` takes ``seconds`` and calls ``during`` first."""
        hand_over = self.manager.runner.hand_over
        calls = []

        def slow(flow_uuid):
            calls.append(flow_uuid)
            if len(calls) == 1:
                time.sleep(seconds)
                if during is not None:
                    during()
            return hand_over(flow_uuid)

        self.manager.runner.hand_over = slow

    def unowned_flow(self):
        self.orphan()
        _age()
        return _create_flow(self.manager, *self.payload, owner='gone:1')

    def test_a_second_conductor_cannot_sweep_during_a_long_sweep(self):
        self.flags(sweep_interval=1, group='conductor')
        flow_uuid = self.unowned_flow()
        other = orphans.OrphanBuildRequests(self.manager)
        seen = []
        self.slow_hand_over(1.5, lambda: seen.append(
            other.sweep_once(self.ctx)))
        self.assertEqual(
            ({'started': 0, 'settled': 0, 'handed_over': 1}, [{}],
             {flow_uuid}),
            (self.check.sweep_once(self.ctx), seen, self.jobs()))
        self.assertFalse(self.redis.client.exists(orphans.lock_name()))

    def test_a_sweep_past_its_budget_leaves_the_rest_to_the_next(self):
        self.flags(sweep_interval=1, group='conductor')
        flows = {self.unowned_flow(), self.unowned_flow()}
        self.slow_hand_over(1.2)
        self.assertEqual(
            [1, 1, 0],
            [self.check.sweep_once(self.ctx)['handed_over']
             for _sweep in range(3)])
        self.assertEqual(flows, self.jobs())


def _create_flow(manager, build_requests, specs, owner, age=TIMEOUT + 1):
    """A boot flow saved but never run, its job lost: as if ``owner``
    created it ``age`` s ago and died before it ran or posted it."""
    uuids = [br['instance_uuid'] for br in build_requests]
    ctx = cb_context.RequestContext(user_id='alice', project_id='project-a')
    meta = records.flow_meta('boot', uuids, ctx)
    meta.update(owner=owner, started_at=(timeutils.utcnow() - (
        datetime.timedelta(seconds=age))).isoformat())
    store = {'instance_uuids': uuids,
             'build_requests': {br['instance_uuid']: br
                                for br in build_requests},
             'request_spec': specs[0]}
    flow_detail, _created = records.create(
        'boot', store, manager.persistence(),
        uuid_=records.flow_uuid('boot', records.boot_flow_key(build_requests)),
        meta=meta)
    return flow_detail.uuid


class UnownedFlowWithJobboardTest(_JobboardTest):

    def test_an_old_flow_no_job_references_gets_a_job_once(self):
        self.orphan()
        _age()
        flow_uuid = _create_flow(self.manager, *self.payload,
                                 owner='gone:1')
        self.assertEqual(
            ({'started': 0, 'settled': 0, 'handed_over': 1}, {flow_uuid}),
            (self.check.sweep_once(self.ctx), self.jobs()))
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 0},
                         self.check.sweep_once(self.ctx))


class UnownedFlowWithoutJobboardTest(_ClusterTest):

    def test_a_flow_of_a_dead_process_of_this_host_is_resumed(self):
        uuids = self.orphan(count=2)
        _age()
        _create_flow(self.manager, *self.payload,
                     owner=f'{CONF.host}:{sweep_base.dead_pid()}')
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 1},
                         self.check.sweep_once(self.ctx))
        self.assert_built_once(uuids)

    def test_what_is_young_or_owned_by_a_live_process_is_left(self):
        # A request younger than the timeout (a request with no flow:
        # the shorter one).
        self.orphan()
        _age(CONF.conductor.unstarted_build_request_timeout - 5)
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 0},
                         self.check.sweep_once(self.ctx))
        # An old request whose flow is young.
        _age()
        flow_uuid = _create_flow(self.manager, *self.payload,
                                 owner='gone:1', age=1)
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 0},
                         self.check.sweep_once(self.ctx))
        # An old flow that another live process of this host owns.
        _age_flow(flow_uuid, f'{CONF.host}:{os.getppid()}')
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 0},
                         self.check.sweep_once(self.ctx))


def _age_flow(flow_uuid, owner, age=TIMEOUT + 1):
    """Make ``owner`` the flow's owner since ``age`` s ago."""
    sweep_base.update_flow_meta(CONF.flow_persistence.connection, flow_uuid,
                                owner=owner, owned_since=sweep_base.ago(age))


class RequestKeyTest(base.TestCase):

    def test_build_requests_without_reservation_are_requests_of_their_own(
            self):
        found = [build_request_obj.BuildRequest(
            instance_uuid=uuid, project_id='p', user_id='u',
            instance={'display_name': 'vm'}) for uuid in ('u1', 'u2')]
        self.assertEqual([['u1'], ['u2']],
                         sorted([br.instance_uuid for br in brs]
                                for brs in orphans._requests(found).values()))

    def test_build_requests_of_one_reservation_are_one_request(self):
        found = [build_request_obj.BuildRequest(
            instance_uuid=uuid, project_id='p', user_id='u',
            instance={'reservation_id': 'r-1'}) for uuid in ('u1', 'u2')]
        self.assertEqual({'r-1': found}, dict(orphans._requests(found)))
