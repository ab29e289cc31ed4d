"""The conductors run their flows persisted, findable, and resumable."""

import time

import sqlalchemy as sa
from taskflow.listeners import base as listener_base
from taskflow.persistence.backends.sqlalchemy import tables as tf_tables
from taskflow import states

from cellboot.conductor import manager
from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import schema as flow_schema
from cellboot.objects import instance as instance_obj
from cellboot.flowrun import records
from cellboot.flowrun import lookup
from tests import base
from tests import fixtures as cb_fixtures
from tests.unit.workflows import fleet

_FLOWS = tf_tables.fetch(sa.MetaData()).flowdetails
_ATOMS = tf_tables.fetch(sa.MetaData()).atomdetails

BOOT_ATOMS = ['schedule', 'claim-pool', 'map-host-to-cell',
              'create-in-cell', 'map-instance', 'delete-build-request',
              'cast-to-compute']


class SuspendAfter(listener_base.Listener):
    """Suspends the engine once ``atom`` succeeded (a conductor stops)."""

    def __init__(self, engine_, atom):
        super().__init__(engine_, task_listen_for=[states.SUCCESS],
                         flow_listen_for=[], retry_listen_for=[])
        self.atom = atom

    def _task_receiver(self, state, details):
        if details['task_name'] == self.atom:
            self._engine.suspend()


class SuperConductorSetUp:
    """The super conductor over a flow database; cell1 has h1 and h2.

    Mixed into a ``fleet.FleetTestCase`` with a database mixin; the
    notification tests start from it too.
    """

    def setUp(self):
        super().setUp()
        self.flow_url = self.useFixture(cb_fixtures.Database(
            self.BACKEND, reuse='flows')).url
        flow_schema.sync_tables(self.flow_url)
        self.flags(connection=self.flow_url, group='flow_persistence')
        self.add_host('h1')
        self.add_host('h2')
        self.start_scheduler()
        self.conductor = manager.SuperConductorManager(
            scheduler=self.scheduler, compute_rpcapi_for=self.compute)


class _ConductorTests(SuperConductorSetUp):

    def _boot(self, count=1):
        store, uuids = self.request(count)
        build_requests = [store['build_requests'][uuid] for uuid in uuids]
        self.conductor.schedule_and_build_instances(
            self.ctx, build_requests, [store['request_spec']] * count)
        return uuids

    def _cast_twice(self, count, reservation_id=None):
        store, uuids = self.request(count)
        build_requests = [store['build_requests'][uuid] for uuid in uuids]
        if reservation_id:
            for br in build_requests:
                br['instance']['reservation_id'] = reservation_id
        for _ in range(2):
            self.conductor.schedule_and_build_instances(
                self.ctx, build_requests, [store['request_spec']] * count)
        return uuids

    def _set_flow_state(self, state):
        engine_ = flow_db.get_backend(self.flow_url).engine
        with engine_.begin() as conn:
            conn.execute(sa.update(_FLOWS).values(state=state))

    def test_a_boot_flow_is_found_by_its_instance(self):
        uuids = self._boot(2)
        (flow,) = lookup.find_flows(self.flow_url, instance_uuid=uuids[1])
        self.assertEqual(('boot', 'SUCCESS', sorted(uuids)),
                         (flow['kind'], flow['state'],
                          sorted(flow['instance_uuids'])))

    def test_the_flow_meta_names_its_conductor_and_request(self):
        (uuid,) = self._boot()
        (flow,) = lookup.find_flows(self.flow_url, instance_uuid=uuid)
        self.assertEqual((self.ctx.request_id, self.conductor_host()),
                         (flow['request_id'], flow['conductor']))
        self.assertIsNotNone(flow['started_at'])
        # Its creator runs it: no take-over is recorded.
        self.assertEqual((records.owner_name(), None),
                         (flow['meta']['owner'],
                          flow['meta'].get('resumptions')))

    def test_the_flow_meta_keeps_no_token(self):
        self.ctx.auth_token = 'secret-token'
        (uuid,) = self._boot()
        (flow,) = lookup.find_flows(self.flow_url, instance_uuid=uuid)
        self.assertNotIn('secret-token', str(flow['meta']))

    def test_every_atom_is_recorded_in_order_with_its_duration(self):
        (uuid,) = self._boot()
        (summary,) = lookup.find_flows(self.flow_url, instance_uuid=uuid)
        atoms = lookup.get_flow(self.flow_url, summary['uuid'])['atoms']
        self.assertEqual(BOOT_ATOMS, [atom['name'] for atom in atoms])
        self.assertTrue(all(atom['duration'] is not None and
                            atom['state'] == 'SUCCESS' for atom in atoms),
                        atoms)

    def test_a_duplicate_cast_of_a_reservation_makes_one_flow(self):
        uuids = self._cast_twice(2, reservation_id='r-dup')
        (flow,) = lookup.find_flows(self.flow_url)
        self.assertEqual((records.flow_uuid('boot', 'r-dup'), 'SUCCESS'),
                         (flow['uuid'], flow['state']))
        self.assertEqual(2, len(self.compute.casts))
        self.assertEqual(sorted(uuids), sorted(self.compute.by_instance()))

    def test_a_resumed_flow_records_who_resumed_it_from_what(self):
        self.conductor.runner.flow_listeners = [
            lambda engine_: SuspendAfter(engine_, 'schedule')]
        (uuid,) = self._boot()
        self.conductor.runner.flow_listeners = ()
        self.conductor.runner.resume_unfinished()
        (flow,) = lookup.find_flows(self.flow_url, instance_uuid=uuid)
        (resumption,) = flow['meta']['resumptions']
        self.assertEqual(
            (records.owner_name(), 'SUSPENDED', records.owner_name()),
            (resumption['by'], resumption['from_state'],
             flow['meta']['owner']))
        self.assertEqual(resumption['at'], flow['meta']['owned_since'])

    def test_without_persistence_a_boot_leaves_no_flow(self):
        self.flags(persist_flows=False, group='conductor')
        (uuid,) = self._boot()
        self.assertEqual([], lookup.find_flows(self.flow_url))
        self.assertEqual([uuid], list(self.compute.by_instance()))

    def test_a_suspended_flow_is_resumed_to_its_end(self):
        self.conductor.runner.flow_listeners = [
            lambda engine_: SuspendAfter(engine_, 'create-in-cell')]
        (uuid,) = self._boot()
        self.assertEqual([], self.compute.casts)
        self.conductor.runner.flow_listeners = ()
        self.assertEqual(1, self.conductor.runner.resume_unfinished())
        self.assertEqual([uuid], list(self.compute.by_instance()))
        self.assertEqual('cell1', self.mapped_cell(uuid))

    def test_a_flow_left_running_by_a_dead_conductor_is_finished(self):
        self.conductor.runner.flow_listeners = [
            lambda engine_: SuspendAfter(engine_, 'map-instance')]
        (uuid,) = self._boot()
        self._set_flow_state(states.RUNNING)
        self.conductor.runner.flow_listeners = ()
        self.conductor.runner.resume_unfinished()
        (flow,) = lookup.find_flows(self.flow_url, instance_uuid=uuid)
        self.assertEqual('SUCCESS', flow['state'])
        self.assertFalse(self.has_build_request(uuid))

    def test_a_resumed_flow_acts_for_the_same_request(self):
        self.conductor.runner.flow_listeners = [
            lambda engine_: SuspendAfter(engine_, 'schedule')]
        (uuid,) = self._boot()
        self.conductor.runner.flow_listeners = ()
        self.conductor.runner.resume_unfinished()
        with self.target(self.cells[0]) as cctxt:
            action = self.action_of(cctxt, uuid)
        self.assertEqual(self.ctx.request_id, action.request_id)

    def test_flows_of_another_conductor_host_are_left_alone(self):
        self.conductor.runner.flow_listeners = [
            lambda engine_: SuspendAfter(engine_, 'schedule')]
        self._boot()
        self.conductor.runner.flow_listeners = ()
        self.flags(host='another-conductor')
        self.assertEqual(0, self.conductor.runner.resume_unfinished())

    def conductor_host(self):
        from cellboot.conf import CONF
        return CONF.host


class _CellConductorSetUp:
    """A cell conductor of cell1 (h1 failed the build, h2 and h3 left)."""

    def setUp(self):
        super().setUp()
        flow_schema.sync_tables(self.cells[0].database_connection)
        self.nodes = [self.add_host(name) for name in ('h1', 'h2', 'h3')]
        self.start_scheduler()
        self.conductor = manager.CellConductorManager(
            cell_name='cell1',
            database_connection=self.cells[0].database_connection,
            scheduler=self.cell_scheduler, compute_rpcapi=self.compute)
        store, (self.uuid,) = self.request()
        with self.target(self.cells[0]) as cctxt:
            self.instance = instance_obj.Instance.create(
                cctxt, self.uuid, 'p1', 'building', user_id='alice',
                host='h1', node='h1', flavor=dict(fleet.SMALL)).to_dict()
        self.spec = store['request_spec']

    def _alternate(self, index):
        name = f'h{index + 1}'
        return {'service_host': name, 'nodename': name,
                'compute_node_uuid': self.nodes[index],
                'cell_uuid': self.cells[0].uuid,
                'allocation_request': {'VCPU': 1, 'MEMORY_MB': 512,
                                       'DISK_GB': 10}, 'claimed': False}

    def _reschedule(self, host_list, num_attempts=1):
        self.conductor.build_instances(
            self.ctx, self.instance, self.spec, host_list,
            {'num_attempts': num_attempts, 'hosts': [['h1', 'h1']],
             'last_failure': 'spawn failed on h1'})
        (flow,) = lookup.find_flows(self.cells[0].database_connection,
                                    instance_uuid=self.uuid)
        return flow


class _CellConductorTests(_CellConductorSetUp):

    def test_a_reschedule_casts_to_the_first_alternate(self):
        flow = self._reschedule([self._alternate(1), self._alternate(2)])
        sent = self.compute.casts[0]
        self.assertEqual(('h2', [self._alternate(2)], 'SUCCESS'),
                         (sent['host'], sent['host_list'], flow['state']))

    def test_a_duplicate_reschedule_makes_one_flow(self):
        self._reschedule([self._alternate(1), self._alternate(2)])
        flow = self._reschedule([self._alternate(1), self._alternate(2)])
        self.assertEqual(
            (records.flow_uuid('reschedule', f'{self.uuid}:1'), 1),
            (flow['uuid'], len(self.compute.casts)))

    def test_a_reschedule_is_persisted_in_the_cell_database(self):
        flow = self._reschedule([self._alternate(1)])
        self.assertEqual(('reschedule', [self.uuid]),
                         (flow['kind'], flow['instance_uuids']))

    def test_no_attempt_left_ends_in_error_and_reverted(self):
        # In-cell exhaustion: no move to another cell.
        self.flags(cross_cell_reschedule=False, group='conductor')
        flow = self._reschedule([self._alternate(1)], num_attempts=3)
        self.assertEqual(('REVERTED', 'error', []),
                         (flow['state'],
                          self.instance_in(self.cells[0], self.uuid).vm_state,
                          self.compute.casts))
        self.assertTrue(self.fault_of(self.cells[0], self.uuid).message.
                        startswith('Exceeded maximum number of retries'))


class SQLiteCellConductorJobboardTest(_CellConductorSetUp, base.SQLiteMixin,
                                      fleet.FleetTestCase):
    """A cell conductor on its cell's board posts, claims and runs."""

    def test_a_reschedule_posted_on_the_cells_board_is_run(self):
        redis = self.useFixture(cb_fixtures.Redis())
        self.flags(backend='redis', url=redis.url,
                   namespace=redis.namespace, group='jobboard')
        self.addCleanup(self.conductor.stop)
        self.conductor.start(self.ctx)
        self.assertEqual(f'{redis.namespace}.cell.cell1.reschedule',
                         self.conductor.runner.board.name)
        flow = self._reschedule([self._alternate(1)])
        deadline = time.monotonic() + 10
        while (flow['state'] != 'SUCCESS' or
               self.conductor.runner.board.job_count) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
            (flow,) = lookup.find_flows(self.cells[0].database_connection)
        self.assertEqual(('SUCCESS', 0, 'h2'),
                         (flow['state'], self.conductor.runner.board.job_count,
                          self.compute.casts[0]['host']))


class FlowIdentityTest(base.TestCase):
    """A request's flow uuid is derived from what the request is."""

    def test_a_boot_is_known_by_its_reservation(self):
        requests = [{'instance_uuid': 'b', 'instance': {
            'reservation_id': 'r-1'}}, {'instance_uuid': 'a', 'instance': {
                'reservation_id': 'r-1'}}]
        self.assertEqual('r-1', records.boot_flow_key(requests))

    def test_a_boot_without_reservation_is_known_by_its_instances(self):
        requests = [{'instance_uuid': 'b', 'instance': {}},
                    {'instance_uuid': 'a'}]
        self.assertEqual('a,b', records.boot_flow_key(requests))

    def test_a_reschedule_is_known_by_instance_and_attempt(self):
        self.assertEqual('i-1:2', records.reschedule_flow_key(
            'i-1', {'num_attempts': 2}))

    def test_the_flow_uuid_depends_on_kind_and_key_only(self):
        self.assertEqual(records.flow_uuid('boot', 'r-1'),
                         records.flow_uuid('boot', 'r-1'))
        self.assertNotEqual(records.flow_uuid('boot', 'r-1'),
                            records.flow_uuid('reschedule', 'r-1'))


class SQLiteConductorTest(_ConductorTests, base.SQLiteMixin,
                          fleet.FleetTestCase):
    pass


class MySQLConductorTest(_ConductorTests, base.MySQLMixin,
                         fleet.FleetTestCase):
    pass


class PostgreSQLConductorTest(_ConductorTests, base.PostgreSQLMixin,
                              fleet.FleetTestCase):
    pass


class SQLiteCellConductorTest(_CellConductorTests, base.SQLiteMixin,
                              fleet.FleetTestCase):
    pass


class MySQLCellConductorTest(_CellConductorTests, base.MySQLMixin,
                             fleet.FleetTestCase):
    pass


class PostgreSQLCellConductorTest(_CellConductorTests,
                                  base.PostgreSQLMixin, fleet.FleetTestCase):
    pass
