"""The scheduler's API over RPC: SchedulerRPCAPI to SchedulerEndpoint.

A real scheduler (``SchedulerAPI`` over the API database) behind its
real endpoint; a compute host of a cell, known by name only, reports its
inventory and gets claims through the client, as a service inside a
cell does. Remote domain errors come back as themselves, with their own
message and no remote traceback.
"""

from oslo_utils import uuidutils

from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import compute_node
from cellboot.objects import service as service_obj
from cellboot import rpc
from cellboot.rpc import topics
from cellboot.scheduler import api as scheduler_api
from cellboot.scheduler import host_state_cache
from cellboot.scheduler import rpc_endpoint
from cellboot.scheduler import rpcapi as scheduler_rpcapi
from cellboot.scheduler.resources import usage
from tests import base
from tests.functional.rpc import base as rpc_base

INVENTORY = {'VCPU': {'total': 4}, 'MEMORY_MB': {'total': 4096},
             'DISK_GB': {'total': 40}}
FLAVOR = {'vcpus': 1, 'memory_mb': 512, 'root_gb': 1}
FLAVOR_RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


class _SchedulerRPCTests:

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
        self.scheduler = scheduler_api.SchedulerAPI()
        self.scheduler.start(self.admin, refresh_interval=0)
        self.addCleanup(self.scheduler.stop)
        buses = self.useFixture(rpc_base.Buses())
        buses.serve('scheduler-1', topics.SCHEDULER,
                    [rpc_endpoint.SchedulerEndpoint(self.scheduler)],
                    rpc.get_transport(self.url))
        self.client = scheduler_rpcapi.SchedulerRPCAPI(
            rpc.get_transport(self.url))
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
        self.client.update_provider(self.ctx, uuid, name, self.cell.name,
                                    INVENTORY, 'nova')
        return uuid

    def test_update_provider_registers_the_host_in_its_named_cell(self):
        uuid = self._compute_host()

        self.client.update_provider(self.ctx, uuid, 'host1', self.cell.name,
                                    INVENTORY, 'az1')

        [host] = self.scheduler.host_states(self.admin)
        self.assertEqual((uuid, self.cell.uuid, 'az1'),
                         (host['uuid'], host['cell_uuid'],
                          host['availability_zone']))

    def test_update_provider_of_an_unknown_cell_is_cell_not_found(self):
        exc = self.assertRaises(
            exception.CellMappingNotFound, self.client.update_provider,
            self.ctx, uuidutils.generate_uuid(), 'host1', 'no-such-cell',
            INVENTORY)
        self.assertEqual('Cell no-such-cell does not exist.', str(exc))

    def test_select_destinations_returns_claimed_selections(self):
        uuid = self._reported_host()
        instance = uuidutils.generate_uuid()

        [[chosen]] = self.client.select_destinations(
            self.ctx, {'flavor': FLAVOR}, [instance])

        self.assertEqual((uuid, 'host1', self.cell.uuid, True),
                         (chosen['compute_node_uuid'],
                          chosen['service_host'], chosen['cell_uuid'],
                          chosen['claimed']))
        self.assertEqual({uuid: FLAVOR_RESOURCES},
                         usage.get_allocations_for_consumer(self.admin,
                                                            instance))

    def test_no_valid_host_is_reraised_as_itself(self):
        exc = self.assertRaises(
            exception.NoValidHost, self.client.select_destinations,
            self.ctx, {'flavor': FLAVOR}, [uuidutils.generate_uuid()])
        self.assertIs(exception.NoValidHost, type(exc))
        self.assertTrue(str(exc).startswith('No valid host was found.'),
                        str(exc))
        self.assertNotIn('Traceback', str(exc))

    def test_claim_resources_allocates_on_the_provider(self):
        uuid = self._reported_host()
        instance = uuidutils.generate_uuid()

        self.client.claim_resources(self.ctx, instance, uuid,
                                    FLAVOR_RESOURCES)

        self.assertEqual({uuid: FLAVOR_RESOURCES},
                         usage.get_allocations_for_consumer(self.admin,
                                                            instance))

    def test_claim_failed_is_reraised_as_itself(self):
        uuid = self._reported_host()
        exc = self.assertRaises(
            exception.ClaimFailed, self.client.claim_resources, self.ctx,
            uuidutils.generate_uuid(), uuid, {'VCPU': 5})
        self.assertIs(exception.ClaimFailed, type(exc))
        self.assertEqual('VCPU', exc.kwargs['resource_class'])
        self.assertNotIn('Traceback', str(exc))

    def test_release_resources_returns_what_it_released(self):
        uuid = self._reported_host()
        instance = uuidutils.generate_uuid()
        self.client.claim_resources(self.ctx, instance, uuid,
                                    FLAVOR_RESOURCES)

        released = self.client.release_resources(self.ctx, instance)

        self.assertEqual({uuid: FLAVOR_RESOURCES}, released)
        self.assertEqual({}, usage.get_allocations_for_consumer(self.admin,
                                                                instance))

    def test_record_build_result_counts_a_failed_build(self):
        uuid = self._reported_host()

        self.client.record_build_result(self.ctx, uuid, False)

        [host] = self.scheduler.host_states(self.admin)
        self.assertEqual(1, host['failed_builds'])


class FakeSQLiteSchedulerRPCTest(_SchedulerRPCTests, base.SQLiteMixin,
                                 base.DatabaseTestCase):
    DRIVER = 'fake'


class FakeMySQLSchedulerRPCTest(_SchedulerRPCTests, base.MySQLMixin,
                                base.DatabaseTestCase):
    DRIVER = 'fake'


class FakePostgreSQLSchedulerRPCTest(_SchedulerRPCTests,
                                     base.PostgreSQLMixin,
                                     base.DatabaseTestCase):
    DRIVER = 'fake'


class RabbitSQLiteSchedulerRPCTest(_SchedulerRPCTests, base.SQLiteMixin,
                                   base.DatabaseTestCase):
    DRIVER = 'rabbit'
