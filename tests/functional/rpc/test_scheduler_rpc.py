"""The schedulers' APIs over RPC, at both levels.

A cell's scheduler (``CellScheduler`` over the cell's database, as
``cellboot-scheduler --cell NAME`` runs it: the service's own
``[database] connection``) behind ``CellSchedulerEndpoint`` on the
cell's bus: a compute host of the cell, known by the cell's name only,
reports its inventory, a cell conductor claims and releases, the API
level places and reads the cell's figures (``CellSchedulerRPCAPI``).
The API level's scheduler (``CellsScheduler``, reaching the cell over
its bus) behind ``SchedulerEndpoint`` on the API's bus, for a super
conductor (``SchedulerRPCAPI``). Remote domain errors come back as
themselves, with their own message and no remote traceback.
"""

from oslo_utils import uuidutils

from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.scheduler.pools import records as pool_records
from cellboot.objects import compute_node
from cellboot.objects import instance as instance_obj
from cellboot.objects import service as service_obj
from cellboot import rpc
from cellboot.rpc import topics
from cellboot.scheduler import aggregate
from cellboot.scheduler import api as scheduler_api
from cellboot.scheduler import cells as cells_scheduler
from cellboot.scheduler import host_state_cache
from cellboot.scheduler import rpc_endpoint
from cellboot.scheduler import rpcapi as scheduler_rpcapi
from cellboot.scheduler.resources import providers
from cellboot.scheduler.resources import usage
from tests import base
from tests.functional.rpc import base as rpc_base

INVENTORY = {'VCPU': {'total': 4}, 'MEMORY_MB': {'total': 4096},
             'DISK_GB': {'total': 40}}
FLAVOR = {'vcpus': 1, 'memory_mb': 512, 'root_gb': 1}
FLAVOR_RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


class _SchedulerRPCTestCase(base.DatabaseTestCase):

    DRIVER = 'fake'

    def setUp(self):
        super().setUp()
        self.flags(host_state_refresh_interval=0, group='scheduler')
        self.url = rpc_base.transport_url(self.DRIVER)
        self.flags(transport_url=self.url)
        self.admin = cb_context.get_admin_context()
        self.cell = cell_mapping.CellMapping.create(
            self.admin, 'cell-' + uuidutils.generate_uuid()[:8],
            self.dbs.cell_urls[0], self.url)
        # Inside the cell: [database] connection is the cell's database.
        self.cell_scheduler = scheduler_api.CellScheduler(
            host_state_cache.CellScope(self.cell.name), name='scheduler-1')
        self.cell_scheduler.start(self.admin, refresh_interval=0)
        self.addCleanup(self.cell_scheduler.stop)
        self.buses = self.useFixture(rpc_base.Buses())
        self.buses.serve(
            'scheduler-1', topics.scheduler(self.cell.name),
            [rpc_endpoint.CellSchedulerEndpoint(self.cell_scheduler)],
            rpc.get_cell_transport(self.cell))
        self.cell_client = scheduler_rpcapi.CellSchedulerRPCAPI(
            rpc.get_cell_transport(self.cell), self.cell.name)
        self.ctx = rpc_base.user_context()

    def _compute_host(self, name='host1'):
        """A heartbeating compute node in the cell; returns its uuid."""
        uuid = uuidutils.generate_uuid()
        with cb_context.target_cell(self.admin, self.cell) as cctxt:
            compute_node.ComputeNode.create(cctxt, name, name, 4, 4096, 40,
                                            uuid=uuid)
            service_obj.Service.create(
                cctxt, name, host_state_cache.COMPUTE_BINARY).report_up(
                cctxt)
        return uuid

    def _reported_host(self, name='host1'):
        uuid = self._compute_host(name)
        self.cell_client.update_provider(self.ctx, uuid, name,
                                         self.cell.name, INVENTORY, 'nova')
        return uuid

    def _instance(self):
        """An instance of the cell (what a cell conductor claims for)."""
        uuid = uuidutils.generate_uuid()
        with cb_context.target_cell(self.admin, self.cell) as cctxt:
            instance_obj.Instance.create(cctxt, uuid, 'p-1', 'building')
        return uuid

    def held(self, consumer):
        with cb_context.target_cell(self.admin, self.cell) as cctxt:
            return usage.get_allocations_for_consumer(cctxt, consumer)


class _CellSchedulerRPCTests:

    def test_update_provider_registers_the_host_in_the_cells_database(self):
        uuid = self._compute_host()

        self.cell_client.update_provider(self.ctx, uuid, 'host1',
                                         self.cell.name, INVENTORY, 'az1')

        with cb_context.target_cell(self.admin, self.cell) as cctxt:
            provider = providers.get_provider(cctxt, uuid)
        self.assertEqual(('host1', 'az1'), (provider['name'],
                                            provider['availability_zone']))

    def test_update_provider_makes_the_host_one_of_the_cells_hosts(self):
        uuid = self._reported_host()
        [host] = self.cell_client.host_states(self.ctx)
        self.assertEqual((uuid, 'host1'), (host['uuid'],
                                           host['service_host']))

    def test_update_provider_naming_another_cell_is_refused_as_itself(self):
        exc = self.assertRaises(
            exception.CellNotAuthorized, self.cell_client.update_provider,
            self.ctx, uuidutils.generate_uuid(), 'host1', 'no-such-cell',
            INVENTORY)
        self.assertIs(exception.CellNotAuthorized, type(exc))
        self.assertIn("'no-such-cell', not of this one", str(exc))

    def test_update_provider_takes_extra_classes_and_traits(self):
        uuid = self._compute_host()
        self.cell_client.update_provider(
            self.ctx, uuid, 'host1', self.cell.name,
            dict(INVENTORY, CUSTOM_FPGA={'total': 2}), 'nova',
            traits=['HW_CPU_X86_AVX2', 'CUSTOM_SSD'])
        [host] = self.cell_client.host_states(self.ctx)
        self.assertEqual(
            (2.0, ['CUSTOM_SSD', 'HW_CPU_X86_AVX2']),
            (host['resources']['CUSTOM_FPGA']['capacity'], host['traits']))

    def test_update_provider_refuses_bad_traits_and_writes_nothing(self):
        uuid = self._compute_host()
        for traits in ('CUSTOM_SSD', [None], ['not a trait'], [7],
                       {'CUSTOM_SSD': True},
                       ['CUSTOM_' + 'A' * 1000],
                       [f'CUSTOM_T{i}' for i in range(1001)]):
            exc = self.assertRaises(
                exception.Invalid, self.cell_client.update_provider,
                self.ctx, uuid, 'host1', self.cell.name, INVENTORY, 'nova',
                traits=traits)
            self.assertLess(len(str(exc)), 500)
        self.assertEqual([], self.cell_client.host_states(self.ctx))

    def test_update_provider_refuses_a_bad_class_and_writes_nothing(self):
        uuid = self._compute_host()
        for name in ('custom_fpga', 'CUSTOM_', 'X' * 10000):
            exc = self.assertRaises(
                exception.InvalidInventory, self.cell_client.update_provider,
                self.ctx, uuid, 'host1', self.cell.name,
                dict(INVENTORY, **{name: {'total': 1}}), 'nova')
            self.assertIn('is not a resource class', str(exc))
            self.assertLess(len(str(exc)), 600)
        self.assertEqual([], self.cell_client.host_states(self.ctx))

    def test_select_destinations_answers_claimed_selections(self):
        uuid = self._reported_host()
        instance = uuidutils.generate_uuid()

        answer = self.cell_client.select_destinations(
            self.ctx, {'flavor': FLAVOR}, [instance])

        [[chosen]] = answer['selections']
        self.assertEqual((uuid, 'host1', True),
                         (chosen['compute_node_uuid'],
                          chosen['service_host'], chosen['claimed']))
        self.assertEqual({uuid: FLAVOR_RESOURCES}, self.held(instance))

    def test_select_destinations_answers_the_cells_aggregate_after_it(self):
        self._reported_host()
        answer = self.cell_client.select_destinations(
            self.ctx, {'flavor': FLAVOR}, [uuidutils.generate_uuid()])
        self.assertEqual(3.0, aggregate.validated(answer['aggregate'])[
            'resources']['VCPU']['free'])

    def test_no_valid_host_is_reraised_as_itself(self):
        exc = self.assertRaises(
            exception.NoValidHost, self.cell_client.select_destinations,
            self.ctx, {'flavor': FLAVOR}, [uuidutils.generate_uuid()])
        self.assertIs(exception.NoValidHost, type(exc))
        self.assertTrue(str(exc).startswith('No valid host was found.'),
                        str(exc))
        self.assertNotIn('Traceback', str(exc))

    def test_aggregate_answers_the_cells_figures(self):
        self._reported_host()
        figures = aggregate.validated(self.cell_client.aggregate(self.ctx))
        self.assertEqual((1, 4.0), (figures['up_hosts'], figures[
            'resources']['VCPU']['max_free']))

    def test_claim_resources_allocates_for_an_instance_of_the_cell(self):
        uuid = self._reported_host()
        instance = self._instance()

        self.cell_client.claim_resources(self.ctx, instance, uuid,
                                         FLAVOR_RESOURCES)

        self.assertEqual({uuid: FLAVOR_RESOURCES}, self.held(instance))

    def test_claim_failed_is_reraised_as_itself(self):
        uuid = self._reported_host()
        exc = self.assertRaises(
            exception.ClaimFailed, self.cell_client.claim_resources,
            self.ctx, self._instance(), uuid, {'VCPU': 5})
        self.assertIs(exception.ClaimFailed, type(exc))
        self.assertEqual('VCPU', exc.kwargs['resource_class'])
        self.assertNotIn('Traceback', str(exc))

    def test_release_resources_returns_what_it_released(self):
        uuid = self._reported_host()
        instance = self._instance()
        self.cell_client.claim_resources(self.ctx, instance, uuid,
                                         FLAVOR_RESOURCES)

        released = self.cell_client.release_resources(self.ctx, instance)

        self.assertEqual(({uuid: FLAVOR_RESOURCES}, {}),
                         (released, self.held(instance)))

    def test_record_build_result_counts_a_failed_build(self):
        uuid = self._reported_host()

        self.cell_client.record_build_result(self.ctx, uuid, False)

        [host] = self.cell_scheduler.host_states(self.admin)
        self.assertEqual(1, host['failed_builds'])


class _ApiSchedulerRPCTests:
    """The API level's scheduler, asking the cell over the cell's bus."""

    def setUp(self):
        super().setUp()
        self.flags(cell_call_timeout=5, group='scheduler')
        self.top = cells_scheduler.CellsScheduler()
        self.top.start(self.admin, refresh_interval=0)
        self.addCleanup(self.top.stop)
        self.buses.serve('scheduler-api', topics.SCHEDULER,
                         [rpc_endpoint.SchedulerEndpoint(self.top)],
                         rpc.get_transport(self.url))
        self.client = scheduler_rpcapi.SchedulerRPCAPI(
            rpc.get_transport(self.url))

    def test_select_destinations_places_through_the_cells_scheduler(self):
        uuid = self._reported_host()
        # The cell published its new host; the API level reads it (see
        # test_cells_scheduler for a read skipped within 0.1 s).
        self.top.refresh(self.admin)
        instance = uuidutils.generate_uuid()

        [[chosen]] = self.client.select_destinations(
            self.ctx, {'flavor': FLAVOR}, [instance])

        self.assertEqual((uuid, self.cell.uuid, True),
                         (chosen['compute_node_uuid'], chosen['cell_uuid'],
                          chosen['claimed']))
        self.assertEqual({uuid: FLAVOR_RESOURCES}, self.held(instance))

    def test_no_valid_host_is_reraised_as_itself(self):
        exc = self.assertRaises(
            exception.NoValidHost, self.client.select_destinations,
            self.ctx, {'flavor': FLAVOR}, [uuidutils.generate_uuid()])
        self.assertIs(exception.NoValidHost, type(exc))
        self.assertNotIn('Traceback', str(exc))

    def test_release_resources_in_the_cell_named(self):
        uuid = self._reported_host()
        instance = self._instance()
        self.cell_client.claim_resources(self.ctx, instance, uuid,
                                         FLAVOR_RESOURCES)

        released = self.client.release_resources(self.ctx, instance,
                                                 cell_uuid=self.cell.uuid)

        self.assertEqual(({uuid: FLAVOR_RESOURCES}, {}),
                         (released, self.held(instance)))

    def test_malformed_instance_uuids_are_invalid(self):
        exc = self.assertRaises(
            exception.Invalid, self.client.select_destinations, self.ctx,
            {'flavor': FLAVOR}, 'not-a-list')
        self.assertNotIn('Traceback', str(exc))

    def test_claim_and_release_pools(self):
        pool = pool_records.create_pool(
            self.admin, 'shared', {'DISK_GB': {'total': 10}},
            cells=[self.cell.name])
        instance = uuidutils.generate_uuid()
        entries = [{'uuid': pool['uuid'], 'resources': {'DISK_GB': 8}}]
        self.assertEqual([{'uuid': pool['uuid'],
                           'resources': {'DISK_GB': 8}}],
                         self.client.claim_pools(self.ctx, instance, entries))
        exc = self.assertRaises(
            exception.NoValidHost, self.client.claim_pools, self.ctx,
            uuidutils.generate_uuid(), entries)
        self.assertIn('DISK_GB=8', str(exc))
        self.assertEqual({pool['uuid']: {'DISK_GB': 8}},
                         self.client.release_pools(self.ctx, instance))
        self.assertEqual({}, self.client.release_pools(self.ctx, instance))

    def test_hostile_pool_claims_are_invalid_and_claim_nothing(self):
        pool = pool_records.create_pool(
            self.admin, 'shared', {'DISK_GB': {'total': 10}},
            cells=[self.cell.name])
        good = {'uuid': pool['uuid'], 'resources': {'DISK_GB': 1}}
        instance = uuidutils.generate_uuid()
        for consumer, entries in (
                ('not-a-uuid', [good]), (instance, 'not-a-list'),
                (instance, [good] * 65), (instance, ['x']),
                (instance, [dict(good, uuid='not-a-uuid')]),
                (instance, [dict(good, alternates='x')]),
                (instance, [dict(good, alternates=['x'] * 300)]),
                (instance, [dict(good, resources={'DISK_GB': -1})]),
                (instance, [dict(good, resources={'DISK_GB': 2 ** 80})]),
                (instance, [dict(good, resources={'lower': 1})]),
                (instance, [dict(good, resources={})])):
            exc = self.assertRaises(exception.Invalid,
                                    self.client.claim_pools, self.ctx,
                                    consumer, entries)
            self.assertNotIn('Traceback', str(exc))
        self.assertRaises(exception.Invalid, self.client.release_pools,
                          self.ctx, 'not-a-uuid')
        self.assertEqual({'DISK_GB': 0}, pool_records.get_pool(
            self.admin, 'shared')['usages'])

    def _storage_pool(self):
        return pool_records.create_pool(
            self.admin, 'volumes', {'DISK_GB': {'total': 100}},
            cells=[self.cell.name])

    def test_allocations_for_another_service(self):
        pool = self._storage_pool()
        made = self.client.create_allocation(
            self.ctx, {'resources': {'DISK_GB': 60}})
        self.assertEqual(({'uuid': pool['uuid'], 'name': 'volumes',
                           'kind': 'pool'}, 'p-1', 'placed'),
                         (made['provider'], made['project_id'],
                          made['status']))
        self.assertEqual(made, self.client.get_allocation(self.ctx,
                                                          made['id']))
        self.assertIsNone(self.client.delete_allocation(self.ctx,
                                                        made['id']))
        self.assertEqual({'DISK_GB': 0}, pool_records.get_pool(
            self.admin, 'volumes')['usages'])
        self.assertRaises(exception.AllocationNotFound,
                          self.client.get_allocation, self.ctx, made['id'])

    def test_hostile_allocation_calls_change_nothing(self):
        self._storage_pool()
        made = self.client.create_allocation(
            self.ctx, {'resources': {'DISK_GB': 10}})
        other = cb_context.RequestContext(user_id='bob',
                                          project_id='p-2')
        for method in (self.client.get_allocation,
                       self.client.delete_allocation):
            exc = self.assertRaises(exception.AllocationNotFound, method,
                                    other, made['id'])
            self.assertNotIn('Traceback', str(exc))
            for bad in ('not-a-uuid', 7, None, ['x'], {'a': 1}):
                self.assertRaises(exception.AllocationNotFound, method,
                                  self.ctx, bad)
        for request in ({'resources': {'VCPU': 1}}, 'x', None, [],
                        {'resources': {'DISK_GB': 'ten'}},
                        {'resources': {'DISK_GB': 2 ** 80}},
                        {'resources': {'DISK_GB': 1}, 'near': 'x'},
                        {'resources': {'DISK_GB': 1}, 'hack': 1}):
            exc = self.assertRaises(exception.Invalid,
                                    self.client.create_allocation,
                                    self.ctx, request)
            self.assertNotIn('Traceback', str(exc))
        exc = self.assertRaises(
            exception.Invalid, self.client.create_allocation, self.ctx,
            {'resources': {'VCPU': 1, 'MEMORY_MB': 1}})
        self.assertIn('POST /servers', str(exc))
        self.assertRaises(
            exception.Forbidden, self.client.create_allocation,
            cb_context.RequestContext(user_id='svc', project_id=None),
            {'resources': {'DISK_GB': 1}})
        self.assertEqual({'DISK_GB': 10}, pool_records.get_pool(
            self.admin, 'volumes')['usages'])


class FakeSQLiteCellSchedulerRPCTest(_CellSchedulerRPCTests,
                                     base.SQLiteMixin, _SchedulerRPCTestCase):
    DRIVER = 'fake'


class FakeMySQLCellSchedulerRPCTest(_CellSchedulerRPCTests, base.MySQLMixin,
                                    _SchedulerRPCTestCase):
    DRIVER = 'fake'


class FakePostgreSQLCellSchedulerRPCTest(_CellSchedulerRPCTests,
                                         base.PostgreSQLMixin,
                                         _SchedulerRPCTestCase):
    DRIVER = 'fake'


class RabbitSQLiteCellSchedulerRPCTest(_CellSchedulerRPCTests,
                                       base.SQLiteMixin,
                                       _SchedulerRPCTestCase):
    DRIVER = 'rabbit'


class FakeSQLiteApiSchedulerRPCTest(_ApiSchedulerRPCTests, base.SQLiteMixin,
                                    _SchedulerRPCTestCase):
    DRIVER = 'fake'


class RabbitSQLiteApiSchedulerRPCTest(_ApiSchedulerRPCTests,
                                      base.SQLiteMixin,
                                      _SchedulerRPCTestCase):
    DRIVER = 'rabbit'
