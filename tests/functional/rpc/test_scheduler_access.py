"""A compromised cell can damage only itself through its scheduler's RPC.

Each cell's scheduler is served the way ``cellboot-scheduler --cell
NAME`` serves it: on topic ``cellboot-scheduler.<cell>`` of the cell's
own bus, holding the cell's own database and nothing else. cell1 and
cell2 each have a compute host whose provider their own service
reported, and an instance holding a claim on it. A client on cell1's
bus, calling cell1's topic as cell1's services do, then attempts every
call that would touch cell2: release or claim on cell2's provider or for
cell2's instance, report cell2's provider, place in cell2, count a
failed build against cell2's host. Whatever it asks, cell2's
allocations, provider, usages and failure count are what they were: the
scheduler it reaches cannot write them. What ``access.CellAccess``
refuses (a report naming another cell, a claim for a consumer that is no
live instance of the cell) is ``CellNotAuthorized``, logged once as a
WARNING naming cell1's bus and the call; cell1's own calls still work.

Over RabbitMQ, each cell has a vhost of its own (as ``create_cell``
wants), and the API level's topic is not served on a cell's bus.
In-process, both cells share one ``fake://`` bus: the per-cell topics
tell them apart.
"""

import logging

import fixtures
from oslo_utils import uuidutils

from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import compute_node
from cellboot.objects import instance as instance_obj
from cellboot.objects import service as service_obj
from cellboot import rpc
from cellboot.rpc import client as rpc_client
from cellboot.rpc import topics
from cellboot.scheduler import api as scheduler_api
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
    """cell1 and cell2, each with its scheduler on its own topic."""

    CELLS = 2

    def transport_urls(self):
        """``(api url, cell1 url, cell2 url)``."""
        raise NotImplementedError

    def setUp(self):
        super().setUp()
        self.flags(host_state_refresh_interval=0, group='scheduler')
        self.flags(aggregate_publish_interval=0, group='scheduler')
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
        buses = self.useFixture(rpc_base.Buses())
        self.schedulers = {}
        for cell in (self.cell1, self.cell2):
            scheduler = scheduler_api.CellScheduler(
                host_state_cache.CellScope(cell.name, cell))
            scheduler.start(self.admin, refresh_interval=0)
            self.addCleanup(scheduler.stop)
            self.schedulers[cell.uuid] = scheduler
            buses.serve(f'scheduler-{cell.name}', topics.scheduler(cell.name),
                        [rpc_endpoint.CellSchedulerEndpoint(scheduler)],
                        rpc.get_cell_transport(cell))
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
        return scheduler_rpcapi.CellSchedulerRPCAPI(
            rpc.get_cell_transport(cell), cell.name)

    def target(self, cell):
        return cb_context.target_cell(self.admin, cell)

    def reported_host(self, cell, client, name, inventory):
        """A heartbeating compute host its cell reported."""
        uuid = uuidutils.generate_uuid()
        with self.target(cell) as cctxt:
            compute_node.ComputeNode.create(cctxt, name, name, 4, 4096, 40,
                                            uuid=uuid)
            service_obj.Service.create(
                cctxt, name, host_state_cache.COMPUTE_BINARY).report_up(
                cctxt)
        client.update_provider(self.ctx, uuid, name, cell.name, inventory)
        return uuid

    def instance_of(self, cell):
        uuid = uuidutils.generate_uuid()
        with self.target(cell) as cctxt:
            instance_obj.Instance.create(cctxt, uuid, 'p-1', 'building')
        return uuid

    def claimed_instance(self, cell, client, provider):
        """An instance of ``cell`` holding a claim on ``provider``."""
        uuid = self.instance_of(cell)
        client.claim_resources(self.ctx, uuid, provider, FLAVOR_RESOURCES)
        return uuid

    def held(self, cell, consumer):
        with self.target(cell) as cctxt:
            return usage.get_allocations_for_consumer(cctxt, consumer)

    def failed_builds(self, cell, provider):
        [host] = [host for host in
                  self.schedulers[cell.uuid].host_states(self.admin)
                  if host['uuid'] == provider]
        return host['failed_builds']

    def cell2_state(self):
        """Everything of cell2 that cell1's calls must leave alone."""
        with self.target(self.cell2) as cctxt:
            return {
                'allocations': usage.get_allocations_for_consumer(
                    cctxt, self.instance2),
                'provider': providers.get_provider(cctxt, self.host2),
                'usages': usage.get_usages(cctxt),
                'failed_builds': self.failed_builds(self.cell2, self.host2),
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
        self.assertIn(f'from the bus of cell {self.cell1.name}', warnings[0])
        self.assertIn(call.__name__, warnings[0])
        # Once: not repeated as the exception's own text either.
        self.assertNotIn('CellNotAuthorized', warnings[0])
        return exc

    def assertCell2Unchanged(self):
        self.assertEqual(self.before, self.cell2_state())
        self.assertEqual('', self.log.output)

    # -- cell1 may not touch cell2 ---------------------------------------

    def test_releasing_cell2s_instance_releases_nothing(self):
        self.assertEqual({}, self.cell1_api.release_resources(
            self.ctx, self.instance2))
        self.assertCell2Unchanged()

    def test_releasing_on_cell2s_provider_releases_nothing(self):
        self.assertEqual({}, self.cell1_api.release_resources(
            self.ctx, self.instance2, self.host2))
        self.assertCell2Unchanged()

    def test_claiming_for_cell2s_instance_is_refused(self):
        exc = self.assertRefused(self.cell1_api.claim_resources,
                                 self.instance2, self.host1,
                                 FLAVOR_RESOURCES)
        self.assertIn(f'consumer {self.instance2} is no instance of the '
                      f'cell', str(exc))
        self.assertEqual({}, self.held(self.cell1, self.instance2))

    def test_claiming_for_an_unknown_consumer_is_refused(self):
        self.assertRefused(self.cell1_api.claim_resources,
                           uuidutils.generate_uuid(), self.host1,
                           FLAVOR_RESOURCES)

    def test_claiming_for_a_deleted_instance_is_refused(self):
        deleted = self.instance_of(self.cell1)
        with self.target(self.cell1) as cctxt:
            instance_obj.Instance.get_by_uuid(cctxt, deleted).destroy(cctxt)
        self.assertRefused(self.cell1_api.claim_resources, deleted,
                           self.host1, FLAVOR_RESOURCES)

    def test_claiming_on_cell2s_provider_finds_no_such_provider(self):
        exc = self.assertRaises(
            exception.ResourceProviderNotFound,
            self.cell1_api.claim_resources, self.ctx,
            self.instance_of(self.cell1), self.host2, FLAVOR_RESOURCES)
        self.assertNotIn('Traceback', str(exc))
        self.assertCell2Unchanged()

    def test_reporting_a_provider_as_cell2s_is_refused(self):
        exc = self.assertRefused(self.cell1_api.update_provider, self.host2,
                                 'host2', self.cell2.name,
                                 {'VCPU': {'total': 1}})
        self.assertIn(f'{self.cell2.name!r}, not of this one', str(exc))

    def test_reporting_cell2s_provider_as_cell1s_leaves_cell2s_alone(self):
        # It is a provider of cell1's database from then on: cell1 only
        # misleads itself (and map-host-to-cell refuses host2 offered by
        # cell1: it is mapped to cell2).
        self.cell1_api.update_provider(self.ctx, self.host2, 'host2',
                                       self.cell1.name,
                                       {'VCPU': {'total': 1}})
        self.assertCell2Unchanged()

    def test_placing_in_cell2_by_name_finds_no_host(self):
        exc = self.assertRaises(
            exception.NoValidHost, self.cell1_api.select_destinations,
            self.ctx, {'flavor': FLAVOR,
                       'scheduler_hints': {'target_cell': self.cell2.name}},
            [self.instance_of(self.cell1)])
        self.assertIn('CellFilter', str(exc))
        self.assertCell2Unchanged()

    def test_placing_cell2s_instance_claims_in_cell1_only(self):
        consumer = self.instance_of(self.cell2)
        answer = self.cell1_api.select_destinations(
            self.ctx, {'flavor': FLAVOR}, [consumer])
        [[chosen, *_alternates]] = answer['selections']
        self.assertEqual(self.host1, chosen['compute_node_uuid'])
        self.assertEqual({}, self.held(self.cell2, consumer))
        self.assertCell2Unchanged()

    def test_placing_what_only_cell2_holds_is_no_valid_host(self):
        instance = self.instance_of(self.cell1)
        self.assertRaises(exception.NoValidHost,
                          self.cell1_api.select_destinations, self.ctx,
                          {'flavor': BIG_FLAVOR}, [instance])
        self.assertEqual({}, self.held(self.cell1, instance))
        self.assertCell2Unchanged()

    def test_counting_a_failed_build_on_cell2s_host_changes_nothing(self):
        self.cell1_api.record_build_result(self.ctx, self.host2, False)
        self.assertCell2Unchanged()

    def test_clearing_cell2s_failed_builds_changes_nothing(self):
        self.cell1_api.record_build_result(self.ctx, self.host2, True)
        self.assertCell2Unchanged()

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
                 ('a spec', [self.instance1]))):
            with self.subTest(call=call.__name__, args=str(args)[:60]):
                exc = self.assertRaises(exception.Invalid, call, self.ctx,
                                        *args)
                self.assertNotIn('Traceback', str(exc))
        self.assertEqual(self.before, self.cell2_state())
        self.assertEqual({self.host1: FLAVOR_RESOURCES},
                         self.held(self.cell1, self.instance1))

    # -- cell1's own calls still work ----------------------------------------

    def test_cell1_claims_and_releases_its_own(self):
        instance = self.instance_of(self.cell1)
        self.cell1_api.claim_resources(self.ctx, instance, self.host1,
                                       FLAVOR_RESOURCES)
        self.assertEqual({self.host1: FLAVOR_RESOURCES},
                         self.cell1_api.release_resources(self.ctx, instance,
                                                          self.host1))
        self.assertEqual({self.host1: FLAVOR_RESOURCES},
                         self.cell1_api.release_resources(self.ctx,
                                                          self.instance1))
        self.assertCell2Unchanged()

    def test_cell1_reports_its_provider_and_counts_its_builds(self):
        generation = self.cell1_api.update_provider(
            self.ctx, self.host1, 'host1', self.cell1.name,
            dict(INVENTORY, VCPU={'total': 8}))
        self.cell1_api.record_build_result(self.ctx, self.host1, False)

        with self.target(self.cell1) as cctxt:
            provider = providers.get_provider(cctxt, self.host1)
        self.assertEqual((generation, 8),
                         (provider['generation'],
                          provider['inventories']['VCPU']['total']))
        self.assertEqual(1, self.failed_builds(self.cell1, self.host1))
        self.assertCell2Unchanged()

    def test_cell1_places_its_instance_in_cell1(self):
        answer = self.cell1_api.select_destinations(
            self.ctx, {'flavor': FLAVOR}, [self.instance_of(self.cell1)],
            return_alternates=False)
        [[chosen]] = answer['selections']
        self.assertEqual(self.host1, chosen['compute_node_uuid'])


class RabbitSchedulerAccessTest(_SchedulerAccessTests, base.SQLiteMixin,
                                base.DatabaseTestCase):
    """Each bus a vhost of its own, as create_cell wants."""

    def transport_urls(self):
        return (rpc_base.rabbit_url(), rpc_base.rabbit_url(vhost='cell1'),
                rpc_base.rabbit_url(vhost='cell2'))

    def test_cell2s_topic_is_not_served_on_cell1s_bus(self):
        other = rpc_client.RPCClient(rpc.get_cell_transport(self.cell1),
                                     topics.scheduler(self.cell2.name))
        self.assertRaises(exception.RPCTimeout, other.call, self.ctx,
                          'release_resources', timeout=2,
                          consumer_uuid=self.instance2, provider_uuid=None)
        self.assertCell2Unchanged()


class _SharedFakeBus:
    """Both cells on one in-process bus, apart from the API's."""

    def transport_urls(self):
        return 'fake://', 'fake:///cells', 'fake:///cells'


class FakeSharedTransportSchedulerAccessTest(
        _SharedFakeBus, _SchedulerAccessTests, base.SQLiteMixin,
        base.DatabaseTestCase):
    pass


class FakeMySQLSharedTransportSchedulerAccessTest(
        _SharedFakeBus, _SchedulerAccessTests, base.MySQLMixin,
        base.DatabaseTestCase):
    pass
