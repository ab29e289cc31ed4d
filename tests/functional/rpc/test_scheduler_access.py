"""A compromised cell can damage only itself through the scheduler's RPC.

A real scheduler (``SchedulerAPI`` over the API database) is served the
way ``cellboot-scheduler`` serves it (``doors.plan``); cell1 and cell2
each have a compute host whose provider their own service reported, and
an instance holding a claim on it. A client on cell1's bus, calling
cell1's topic as cell1's services do, then attempts every call that
would touch cell2: release or claim on cell2's provider or for cell2's
instance, report (create, change or move) cell2's provider, place in
cell2, count a failed build against cell2's host. Each is refused with
``CellNotAuthorized``, logged once as a WARNING naming cell1 and the
call, and cell2's allocations, provider, usages and failure count are
what they were; cell1's own calls still work.

Over RabbitMQ, each cell has a vhost of its own (as ``create_cell``
wants), and the plain topic on cell1's bus acts for cell1 alone (a
compute host from before the per-cell topic). In-process, both cells
share one ``fake://`` bus: the per-cell topics tell them apart, and the
plain topic there, which cannot tell them apart, refuses everything.
"""

import logging

import fixtures
from oslo_utils import uuidutils

from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import compute_node
from cellboot.objects import host_mapping
from cellboot.objects import instance_mapping
from cellboot.objects import service as service_obj
from cellboot import rpc
from cellboot.rpc import client as rpc_client
from cellboot.rpc import topics
from cellboot.scheduler import api as scheduler_api
from cellboot.scheduler import doors
from cellboot.scheduler import host_state_cache
from cellboot.scheduler import rpc_endpoint
from cellboot.scheduler import rpcapi as scheduler_rpcapi
from cellboot.scheduler.resources import providers
from cellboot.scheduler.resources import usage
from tests import base
from tests.functional.rpc import base as rpc_base

INVENTORY = {'VCPU': {'total': 4}, 'MEMORY_MB': {'total': 4096},
             'DISK_GB': {'total': 40}}
BIG_INVENTORY = {'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 16384},
                 'DISK_GB': {'total': 160}}
FLAVOR = {'vcpus': 1, 'memory_mb': 512, 'root_gb': 1}
FLAVOR_RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
# Fits cell2's host only.
BIG_FLAVOR = {'vcpus': 8, 'memory_mb': 1024, 'root_gb': 1}


class _SchedulerAccessTests:
    """Cells on ``CELL_URLS``; the API level on ``API_URL``."""

    CELLS = 2

    def transport_urls(self):
        """``(api url, cell1 url, cell2 url)``."""
        raise NotImplementedError

    def setUp(self):
        super().setUp()
        self.flags(host_state_refresh_interval=0, group='scheduler')
        api_url, cell1_url, cell2_url = self.transport_urls()
        self.flags(transport_url=api_url)
        self.admin = cb_context.get_admin_context()
        suffix = uuidutils.generate_uuid()[:8]
        self.cell1, self.cell2 = (
            cell_mapping.CellMapping.create(self.admin, f'{name}-{suffix}',
                                            db_url, url)
            for name, db_url, url in (
                ('cell1', self.dbs.cell_urls[0], cell1_url),
                ('cell2', self.dbs.cell_urls[1], cell2_url)))
        self.scheduler = scheduler_api.SchedulerAPI()
        self.scheduler.start(self.admin, refresh_interval=0)
        self.addCleanup(self.scheduler.stop)
        buses = self.useFixture(rpc_base.Buses())
        for door in doors.plan(self.admin, 'scheduler'):
            buses.serve('scheduler', door.topic,
                        [rpc_endpoint.SchedulerEndpoint(self.scheduler,
                                                        door.access)],
                        door.transport)
        self.ctx = rpc_base.user_context()
        self.cell1_api = self.cell_client(self.cell1)
        self.cell2_api = self.cell_client(self.cell2)
        self.host1 = self.reported_host(self.cell1, self.cell1_api,
                                        'host1', INVENTORY)
        self.host2 = self.reported_host(self.cell2, self.cell2_api,
                                        'host2', BIG_INVENTORY)
        self.instance1 = self.claimed_instance(self.cell1, self.cell1_api,
                                               self.host1)
        self.instance2 = self.claimed_instance(self.cell2, self.cell2_api,
                                               self.host2)
        self.cell2_api.record_build_result(self.ctx, self.host2, False)
        self.before = self.cell2_state()
        self.log = self.useFixture(fixtures.FakeLogger(
            name=rpc_endpoint.__name__, level=logging.WARNING,
            format='%(levelname)s %(message)s'))

    # -- the deployment --------------------------------------------------

    def cell_client(self, cell):
        """The scheduler client a service of ``cell`` has."""
        return scheduler_rpcapi.SchedulerRPCAPI(rpc.get_cell_transport(cell),
                                                cell_name=cell.name)

    def reported_host(self, cell, client, name, inventory):
        """A heartbeating, mapped compute host its cell reported."""
        uuid = uuidutils.generate_uuid()
        with cb_context.target_cell(self.admin, cell) as cctxt:
            compute_node.ComputeNode.create(cctxt, name, name, 4, 4096, 40,
                                            uuid=uuid)
            service_obj.Service.create(
                cctxt, name, host_state_cache.COMPUTE_BINARY).report_up(
                cctxt)
        host_mapping.HostMapping.create(self.admin, name, cell.uuid)
        client.update_provider(self.ctx, uuid, name, cell.name, inventory)
        return uuid

    def mapped_instance(self, cell):
        uuid = uuidutils.generate_uuid()
        instance_mapping.InstanceMapping.create(self.admin, uuid, 'p-1',
                                                cell_uuid=cell.uuid)
        return uuid

    def claimed_instance(self, cell, client, provider):
        """An instance of ``cell`` holding a claim on ``provider``."""
        uuid = self.mapped_instance(cell)
        client.claim_resources(self.ctx, uuid, provider, FLAVOR_RESOURCES)
        return uuid

    def failed_builds(self, provider):
        [host] = [host for host in self.scheduler.host_states(self.admin)
                  if host['uuid'] == provider]
        return host['failed_builds']

    def cell2_state(self):
        """Everything of cell2 that a refused call must leave alone."""
        return {
            'allocations': usage.get_allocations_for_consumer(
                self.admin, self.instance2),
            'provider': providers.get_provider(self.admin, self.host2),
            'usages': usage.get_usages(self.admin, [self.host2]),
            'failed_builds': self.failed_builds(self.host2),
        }

    # -- assertions ----------------------------------------------------------

    def assertRefused(self, call, *args, **kwargs):
        """``call`` is refused, logged once, and cell2 is unchanged."""
        exc = self.assertRaises(exception.CellNotAuthorized, call,
                                self.ctx, *args, **kwargs)
        self.assertIs(exception.CellNotAuthorized, type(exc))
        self.assertNotIn('Traceback', str(exc))
        self.assertEqual(self.before, self.cell2_state())
        warnings = [line for line in self.log.output.splitlines()
                    if 'Refused ' in line]
        self.assertEqual(1, len(warnings), self.log.output)
        self.assertIn(f'from cell {self.cell1.name} ({self.cell1.uuid})',
                      warnings[0])
        self.assertIn(call.__name__, warnings[0])
        return exc

    # -- cell1 may not touch cell2 ---------------------------------------

    def test_releasing_cell2s_instance_is_refused(self):
        exc = self.assertRefused(self.cell1_api.release_resources,
                                 self.instance2)
        self.assertIn(f'instance {self.instance2} is in another cell',
                      str(exc))

    def test_releasing_cell2s_instance_on_its_provider_is_refused(self):
        self.assertRefused(self.cell1_api.release_resources, self.instance2,
                           self.host2)

    def test_releasing_on_cell2s_provider_is_refused(self):
        self.assertRefused(self.cell1_api.release_resources, self.instance1,
                           self.host2)

    def test_releasing_an_unmapped_consumer_held_in_cell2_is_refused(self):
        orphan = uuidutils.generate_uuid()
        self.scheduler.claim_resources(self.admin, orphan, self.host2,
                                       FLAVOR_RESOURCES)
        self.before = self.cell2_state()
        self.assertRefused(self.cell1_api.release_resources, orphan)
        self.assertEqual({self.host2: FLAVOR_RESOURCES},
                         usage.get_allocations_for_consumer(self.admin,
                                                            orphan))

    def test_claiming_on_cell2s_provider_is_refused(self):
        exc = self.assertRefused(self.cell1_api.claim_resources,
                                 self.mapped_instance(self.cell1),
                                 self.host2, FLAVOR_RESOURCES)
        self.assertIn(f'resource provider {self.host2} belongs to another '
                      f'cell', str(exc))

    def test_claiming_for_cell2s_instance_is_refused(self):
        self.assertRefused(self.cell1_api.claim_resources,
                           self.mapped_instance(self.cell2), self.host1,
                           FLAVOR_RESOURCES)
        # Nothing landed on cell1's provider either.
        self.assertEqual({self.host1: FLAVOR_RESOURCES},
                         usage.get_usages(self.admin, [self.host1]))

    def test_claiming_for_an_unmapped_consumer_is_refused(self):
        self.assertRefused(self.cell1_api.claim_resources,
                           uuidutils.generate_uuid(), self.host1,
                           FLAVOR_RESOURCES)

    def test_reporting_cell2s_provider_as_cell2_is_refused(self):
        self.assertRefused(self.cell1_api.update_provider, self.host2,
                           'host2', self.cell2.name, {'VCPU': {'total': 1}})

    def test_moving_cell2s_provider_into_cell1_is_refused(self):
        exc = self.assertRefused(self.cell1_api.update_provider, self.host2,
                                 'host2', self.cell1.name,
                                 {'VCPU': {'total': 1}})
        self.assertIn('belongs to another cell', str(exc))

    def test_taking_the_name_of_cell2s_host_is_refused(self):
        self.assertRefused(self.cell1_api.update_provider,
                           uuidutils.generate_uuid(), 'host2',
                           self.cell1.name, INVENTORY)

    def test_placing_in_cell2_by_uuid_is_refused(self):
        self.assertRefused(
            self.cell1_api.select_destinations,
            {'flavor': FLAVOR,
             'scheduler_hints': {'target_cell': [self.cell2.uuid]}},
            [self.mapped_instance(self.cell1)])

    def test_placing_in_cell2_by_name_is_refused(self):
        self.assertRefused(
            self.cell1_api.select_destinations,
            {'flavor': FLAVOR,
             'scheduler_hints': {'target_cell': self.cell2.name}},
            [self.mapped_instance(self.cell1)])

    def test_placing_cell2s_instance_is_refused(self):
        self.assertRefused(self.cell1_api.select_destinations,
                           {'flavor': FLAVOR},
                           [self.mapped_instance(self.cell2)])

    def test_placing_without_a_hint_stays_in_cell1(self):
        # Only cell2's host has room for the big flavor: a request from
        # cell1 finds no host rather than a host of cell2.
        instance = self.mapped_instance(self.cell1)
        exc = self.assertRaises(exception.NoValidHost,
                                self.cell1_api.select_destinations, self.ctx,
                                {'flavor': BIG_FLAVOR}, [instance])
        self.assertIn('the calling cell', str(exc))
        self.assertEqual({}, usage.get_allocations_for_consumer(self.admin,
                                                                instance))
        self.assertEqual(self.before, self.cell2_state())

    def test_counting_a_failed_build_on_cell2s_host_is_refused(self):
        self.assertRefused(self.cell1_api.record_build_result, self.host2,
                           False)

    def test_clearing_cell2s_failed_builds_is_refused(self):
        self.assertRefused(self.cell1_api.record_build_result, self.host2,
                           True)

    # -- malformed calls ---------------------------------------------------

    def test_malformed_arguments_are_invalid_not_server_errors(self):
        for call, args in (
                (self.cell1_api.release_resources, ('x' * 100000,)),
                (self.cell1_api.release_resources, (None,)),
                (self.cell1_api.claim_resources,
                 (self.instance1, 12, FLAVOR_RESOURCES)),
                (self.cell1_api.record_build_result, ({'a': 1}, False)),
                (self.cell1_api.update_provider,
                 ('not-a-uuid', 'host1', self.cell1.name, INVENTORY)),
                (self.cell1_api.update_provider,
                 (self.host1, '', self.cell1.name, INVENTORY)),
                (self.cell1_api.select_destinations,
                 ({'flavor': FLAVOR}, self.instance1)),
                (self.cell1_api.select_destinations,
                 ({'flavor': FLAVOR, 'scheduler_hints': 'cell2'},
                  [self.instance1]))):
            with self.subTest(call=call.__name__, args=str(args)[:60]):
                exc = self.assertRaises(exception.Invalid, call, self.ctx,
                                        *args)
                self.assertNotIn('Traceback', str(exc))
        self.assertEqual(self.before, self.cell2_state())
        self.assertEqual({self.host1: FLAVOR_RESOURCES},
                         usage.get_allocations_for_consumer(self.admin,
                                                            self.instance1))

    # -- cell1's own calls still work ----------------------------------------

    def test_cell1_claims_and_releases_its_own(self):
        instance = self.mapped_instance(self.cell1)
        self.cell1_api.claim_resources(self.ctx, instance, self.host1,
                                       FLAVOR_RESOURCES)
        self.assertEqual({self.host1: FLAVOR_RESOURCES},
                         self.cell1_api.release_resources(self.ctx, instance,
                                                          self.host1))
        self.assertEqual({self.host1: FLAVOR_RESOURCES},
                         self.cell1_api.release_resources(self.ctx,
                                                          self.instance1))
        self.assertEqual(self.before, self.cell2_state())
        self.assertEqual('', self.log.output)

    def test_cell1_releases_an_unmapped_consumer_held_in_cell1(self):
        orphan = uuidutils.generate_uuid()
        self.scheduler.claim_resources(self.admin, orphan, self.host1,
                                       FLAVOR_RESOURCES)
        self.assertEqual({self.host1: FLAVOR_RESOURCES},
                         self.cell1_api.release_resources(self.ctx, orphan))

    def test_cell1_reports_its_provider_and_counts_its_builds(self):
        generation = self.cell1_api.update_provider(
            self.ctx, self.host1, 'host1', self.cell1.name,
            dict(INVENTORY, VCPU={'total': 8}))
        self.cell1_api.record_build_result(self.ctx, self.host1, False)

        provider = providers.get_provider(self.admin, self.host1)
        self.assertEqual((generation, self.cell1.uuid, 8),
                         (provider['generation'], provider['cell_uuid'],
                          provider['inventories']['VCPU']['total']))
        self.assertEqual(1, self.failed_builds(self.host1))
        self.assertEqual(self.before, self.cell2_state())

    def test_cell1_places_its_instance_in_cell1(self):
        instance = self.mapped_instance(self.cell1)
        [[chosen]] = self.cell1_api.select_destinations(
            self.ctx, {'flavor': FLAVOR,
                       'scheduler_hints': {'target_cell': self.cell1.name}},
            [instance], return_alternates=False)
        self.assertEqual((self.host1, self.cell1.uuid),
                         (chosen['compute_node_uuid'], chosen['cell_uuid']))

    def test_the_api_transport_keeps_every_right(self):
        api = scheduler_rpcapi.SchedulerRPCAPI(rpc.get_api_transport())
        self.assertEqual({self.host2: FLAVOR_RESOURCES},
                         api.release_resources(self.ctx, self.instance2))
        self.assertEqual('', self.log.output)


class RabbitSchedulerAccessTest(_SchedulerAccessTests, base.SQLiteMixin,
                                base.DatabaseTestCase):
    """Each bus a vhost of its own, as create_cell wants."""

    def transport_urls(self):
        return (rpc_base.rabbit_url(), rpc_base.rabbit_url(vhost='cell1'),
                rpc_base.rabbit_url(vhost='cell2'))

    def test_the_plain_topic_on_cell1s_bus_acts_for_cell1(self):
        # A compute host of cell1 from before the per-cell topic.
        old = rpc_client.RPCClient(rpc.get_cell_transport(self.cell1),
                                   topics.SCHEDULER)
        self.assertRaises(exception.CellNotAuthorized, old.call, self.ctx,
                          'release_resources', consumer_uuid=self.instance2,
                          provider_uuid=None)
        self.assertEqual(self.before, self.cell2_state())
        self.assertEqual({self.host1: FLAVOR_RESOURCES},
                         old.call(self.ctx, 'release_resources',
                                  consumer_uuid=self.instance1,
                                  provider_uuid=None))


class _SharedFakeBus:
    """Both cells on one in-process bus, apart from the API's."""

    def transport_urls(self):
        return 'fake://', 'fake:///cells', 'fake:///cells'

    def test_the_plain_topic_of_a_shared_bus_refuses_everything(self):
        old = rpc_client.RPCClient(rpc.get_cell_transport(self.cell1),
                                   topics.SCHEDULER)
        exc = self.assertRaises(exception.CellNotAuthorized, old.call,
                                self.ctx, 'release_resources',
                                consumer_uuid=self.instance1,
                                provider_uuid=None)
        self.assertIn(topics.scheduler('<its cell>'), str(exc))
        self.assertEqual({self.host1: FLAVOR_RESOURCES},
                         usage.get_allocations_for_consumer(self.admin,
                                                            self.instance1))
        self.assertEqual(self.before, self.cell2_state())


class FakeSharedTransportSchedulerAccessTest(
        _SharedFakeBus, _SchedulerAccessTests, base.SQLiteMixin,
        base.DatabaseTestCase):
    pass


class FakeMySQLSharedTransportSchedulerAccessTest(
        _SharedFakeBus, _SchedulerAccessTests, base.MySQLMixin,
        base.DatabaseTestCase):
    pass
