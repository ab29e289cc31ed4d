"""The cell conductor's sweep ends the builds no compute host finishes.

An in-process deployment (SQLite, ``fake://``) whose compute host takes
the build and then never answers: its spawn blocks until the test lets
it go (a host that died after it got the cast, then, for the last
test, one that comes back late). ``[conductor] build_timeout`` is 1 s;
waits poll, never sleep a fixed time.
"""

import datetime
import threading

from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.compute.virt import fake
from cellboot.conductor import build_timeouts
from cellboot.conductor import manager as conductor_manager
from cellboot.compute import rpcapi as compute_rpcapi
from cellboot import context as cb_context
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot import exception
from cellboot.objects import fault_messages
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action
from cellboot.flowrun import records
from tests import base
from tests.functional.compute import base as compute_base
from tests.functional import cluster
from tests.functional import invariants
from tests.functional import planted
from tests.functional.sweepers import base as sweep_base

TIMEOUT = 1
HOST = 'cell1-host1'


class BlockedDriver(fake.FakeDriver):
    """The fake driver, whose spawns wait until ``go`` is set."""

    def __init__(self, host):
        super().__init__(host)
        self.go = threading.Event()

    def spawn(self, context, instance, flavor):
        self.go.wait(30)
        super().spawn(context, instance, flavor)


class BuildTimeoutsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(build_timeout=TIMEOUT, group='conductor')
        self.cluster = self.useFixture(cluster.Cluster(cells=1,
                                                       hosts_per_cell=1))
        self.cell = self.cluster.cells[0]
        self.driver = BlockedDriver(HOST)
        self.cluster.computes[HOST].driver = self.driver
        # A blocked spawn ends before the deployment stops.
        self.addCleanup(self._let_the_host_finish)
        self.ctx = cb_context.get_admin_context()
        self.check = build_timeouts.BuildTimeouts(self._cell_conductor())

    def _cell_conductor(self):
        """A conductor of the cell, as a cell conductor process has it."""
        return conductor_manager.CellConductorManager(
            cell_name=self.cell.name,
            database_connection=self.cell.database_connection,
            scheduler=self.cluster.cell_schedulers[self.cell.name],
            compute_rpcapi=compute_rpcapi.ComputeAPI(self.cell.name,
                                                     self.cluster.transport))

    def _let_the_host_finish(self):
        self.driver.go.set()
        self.cluster.wait_for_quiet()

    def _instance(self, uuid):
        return self.cluster.find(uuid)[1]

    def _boot_until_stuck(self):
        """Boot one server; return once it is spawning beyond the timeout."""
        (uuid,) = self.cluster.boot()

        def spawning():
            try:
                return (self._instance(uuid).task_state ==
                        instance_obj.task_states.SPAWNING)
            except exception.InstanceNotFound:
                return False  # the boot flow has not created it yet

        self.assertTrue(compute_base.wait_for(spawning))
        self.assertTrue(compute_base.wait_for(
            lambda: self._instance(uuid).updated_at <
            timeutils.utcnow() - datetime.timedelta(seconds=TIMEOUT),
            timeout=TIMEOUT + 5))
        return uuid

    def test_a_build_nobody_finishes_ends_error_with_a_fault_once(self):
        uuid = self._boot_until_stuck()
        # Two conductors of the cell sweep on the same tick: one acts.
        results = sweep_base.sweep_at_once(
            [self.check, build_timeouts.BuildTimeouts(self._cell_conductor())])
        self.assertEqual(1, sum(result['timed_out'] for result in results))
        self.assertEqual(sweep_base.timeouts(0),
                         self.check.sweep_once(self.ctx))
        instance, fault = self._instance(uuid), self.cluster.fault(uuid)
        # The owner reads why; administrators read where, in details.
        self.assertEqual(
            ('error', None, fault_messages.BUILD_TIMED_OUT,
             f'Build timed out after {TIMEOUT} s on host {HOST}', HOST, {}),
            (instance.vm_state, instance.task_state, fault.message,
             fault.details, fault.host, self.cluster.allocations(uuid)))
        # Recorded as an Error event that ends the create action.
        with cb_context.target_cell(self.ctx, self.cell) as cctxt:
            (action,) = instance_action.InstanceAction.get_by_instance_uuid(
                cctxt, uuid)
            events = instance_action.InstanceActionEvent.get_by_action(
                cctxt, action.id)
        self.assertEqual(
            ('create', instance_action.RESULT_ERROR, True,
             instance_action.RESULT_ERROR),
            (action.action, action.message, action.finish_time is not None,
             {event.event: event.result for event in events}[
                 build_timeouts.EVENT_BUILD_TIMEOUT]))

    def test_a_host_finishing_late_leaves_it_error_and_unclaimed(self):
        uuid = self._boot_until_stuck()
        self.check.sweep_once(self.ctx)
        # The late host finds the instance no longer building: it removes
        # the server it built and releases its claim.
        self._let_the_host_finish()
        self.assertEqual(('error', {}, []),
                         (self._instance(uuid).vm_state,
                          self.cluster.allocations(uuid),
                          self.driver.list_instances()))
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_an_instance_a_reschedule_flow_works_on_is_not_timed_out(self):
        uuid = self._boot_until_stuck()
        instance = self._instance(uuid)
        retry = {'num_attempts': 1, 'hosts': [[HOST, HOST]]}
        ctx = cb_context.RequestContext(user_id='alice',
                                        project_id='project-a')
        records.create(
            'reschedule',
            {'instance': instance.to_dict(), 'request_spec': {},
             'host_list': [], 'build_retry': retry, 'max_attempts': 3},
            self.cell.database_connection,
            uuid_=records.flow_uuid(
                'reschedule', records.reschedule_flow_key(uuid, retry)),
            meta=records.flow_meta('reschedule', [uuid], ctx))
        self.assertEqual(sweep_base.timeouts(0),
                         self.check.sweep_once(self.ctx))
        self.assertEqual('building', self._instance(uuid).vm_state)

    def test_a_corrupt_flow_naming_an_instance_does_not_spare_it(self):
        # A planted row cannot keep a stuck build from its end: only the
        # reschedule flows that may run count.
        uuid = self._boot_until_stuck()
        plants = planted.Plants(self.state_path, 'reschedule', uuid)
        plants.plant(self.cell.database_connection)
        self.assertEqual(sweep_base.timeouts(1),
                         self.check.sweep_once(self.ctx))
        self.assertEqual(('error', []),
                         (self._instance(uuid).vm_state, plants.ran()))

    def _stale_build(self, **fields):
        """A building instance older than the build timeout; its uuid."""
        uuid = uuidutils.generate_uuid()
        with cb_context.target_cell(self.ctx, self.cell) as cctxt:
            instance_obj.Instance.create(
                cctxt, uuid, 'project-a', instance_obj.vm_states.BUILDING,
                user_id='alice', **fields)
        long_ago = timeutils.utcnow() - datetime.timedelta(
            seconds=TIMEOUT + 5)
        instances = cell_models.Instance.__table__
        with cell_connection.get_engine(
                self.cell.database_connection).begin() as conn:
            conn.execute(sa.update(instances).where(
                instances.c.uuid == uuid).values(
                    created_at=long_ago, updated_at=long_ago))
        return uuid

    def test_a_build_without_a_host_ends_error_too(self):
        # No flow leaves one (create-in-cell writes the chosen host with
        # the row): something that will not come back for it did.
        uuid = self._stale_build()
        self.assertEqual(sweep_base.timeouts(1),
                         self.check.sweep_once(self.ctx))
        self.assertEqual(
            ('error', fault_messages.BUILD_TIMED_OUT,
             f'Build timed out after {TIMEOUT} s before any host took it'),
            (self._instance(uuid).vm_state,
             self.cluster.fault(uuid).message,
             self.cluster.fault(uuid).details))

    def test_a_build_its_boot_flow_never_cast_ends_error_too(self):
        # Still scheduling (its boot flow stopped between create-in-cell
        # and its cast, and nothing resumed it): the untaken builds'
        # check leaves it alone, the build timeout does not.
        uuid = self._stale_build(
            host=HOST, node=HOST,
            task_state=instance_obj.task_states.SCHEDULING)
        self.assertEqual(sweep_base.timeouts(1),
                         self.check.sweep_once(self.ctx))
        self.assertEqual(('error', None, fault_messages.BUILD_TIMED_OUT),
                         (self._instance(uuid).vm_state,
                          self._instance(uuid).task_state,
                          self.cluster.fault(uuid).message))
