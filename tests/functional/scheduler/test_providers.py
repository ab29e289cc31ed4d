"""Resource providers: what a compute host's reports make of them."""

import threading

from oslo_utils import uuidutils

from cellboot import context
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.scheduler.resources import claims
from cellboot.scheduler.resources import providers
from tests import base
from tests.functional.scheduler import resources_base as rb


class _ProviderTests:

    def test_new_provider_starts_at_generation_one(self):
        generation = providers.update_provider(
            self.ctx, uuidutils.generate_uuid(), 'host1', rb.HOST_INVENTORY)
        self.assertEqual(1, generation)

    def test_new_provider_records_zone_and_name(self):
        uuid = self.create_provider(name='host1', availability_zone='az1')
        provider = providers.get_provider(self.ctx, uuid)
        self.assertEqual(
            {'uuid': uuid, 'name': 'host1', 'availability_zone': 'az1',
             'generation': 1},
            {k: v for k, v in provider.items() if k != 'inventories'})

    def test_inventory_defaults_are_filled_in(self):
        uuid = self.create_provider({'VCPU': {'total': 8}})
        self.assertEqual(
            {'VCPU': {'total': 8, 'reserved': 0, 'allocation_ratio': 1.0,
                      'min_unit': 1, 'max_unit': 8, 'step_size': 1}},
            providers.get_provider(self.ctx, uuid)['inventories'])

    def test_repeated_report_keeps_the_generation(self):
        uuid = self.create_provider()
        generation = providers.update_provider(
            self.ctx, uuid, 'host-' + uuid[:8], rb.HOST_INVENTORY)
        self.assertEqual(1, generation)
        self.assertEqual(1, self.generation(uuid))

    def test_changed_inventory_bumps_the_generation(self):
        uuid = self.create_provider({'VCPU': {'total': 8}})
        generation = providers.update_provider(
            self.ctx, uuid, 'host-' + uuid[:8],
            {'VCPU': {'total': 16, 'allocation_ratio': 4.0}})
        self.assertEqual(2, generation)
        inventory = providers.get_provider(self.ctx, uuid)['inventories']
        self.assertEqual((16, 4.0), (inventory['VCPU']['total'],
                                     inventory['VCPU']['allocation_ratio']))

    def test_update_changes_name_and_zone(self):
        uuid = self.create_provider(name='old')
        providers.update_provider(self.ctx, uuid, 'new', rb.HOST_INVENTORY,
                                  availability_zone='az2')
        provider = providers.get_provider(self.ctx, uuid)
        self.assertEqual(('new', 'az2', 2),
                         (provider['name'], provider['availability_zone'],
                          provider['generation']))

    def test_update_adds_and_removes_resource_classes(self):
        uuid = self.create_provider({'VCPU': {'total': 8},
                                     'DISK_GB': {'total': 10}})
        providers.update_provider(
            self.ctx, uuid, 'host-' + uuid[:8],
            {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 1024}})
        self.assertEqual(
            ['MEMORY_MB', 'VCPU'],
            sorted(providers.get_provider(self.ctx, uuid)['inventories']))

    def test_removing_an_allocated_resource_class_is_refused(self):
        uuid = self.create_provider()
        claims.claim_resources(self.ctx, 'instance-1', uuid, rb.SMALL)
        self.assertRaises(
            exception.InventoryInUse, providers.update_provider,
            self.ctx, uuid, 'host-' + uuid[:8],
            {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 16384}})
        self.assertIn('DISK_GB',
                      providers.get_provider(self.ctx, uuid)['inventories'])

    def test_shrinking_below_usage_is_accepted(self):
        uuid = self.create_provider({'VCPU': {'total': 8}})
        claims.claim_resources(self.ctx, 'instance-1', uuid, {'VCPU': 6})
        providers.update_provider(self.ctx, uuid, 'host-' + uuid[:8],
                                  {'VCPU': {'total': 4}})
        self.assertEqual(
            4, providers.get_provider(
                self.ctx, uuid)['inventories']['VCPU']['total'])

    def test_name_of_another_provider_is_refused(self):
        other = self.create_provider(name='host1')
        exc = self.assertRaises(
            exception.ResourceProviderExists, providers.update_provider,
            self.ctx, uuidutils.generate_uuid(), 'host1', rb.HOST_INVENTORY)
        self.assertIn(other, str(exc))

    def test_simultaneous_first_reports_create_one_provider(self):
        uuid = uuidutils.generate_uuid()
        barrier = threading.Barrier(4)
        generations = []

        def report():
            barrier.wait()
            generations.append(providers.update_provider(
                context.get_admin_context(), uuid, 'host1',
                rb.HOST_INVENTORY))

        threads = [threading.Thread(target=report) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual([1, 1, 1, 1], generations)
        self.assertEqual(
            sorted(rb.HOST_INVENTORY),
            sorted(providers.get_provider(self.ctx, uuid)['inventories']))

    def test_get_missing_provider_raises_not_found(self):
        self.assertRaises(exception.ResourceProviderNotFound,
                          providers.get_provider, self.ctx,
                          uuidutils.generate_uuid())

    def test_delete_removes_provider_and_inventories(self):
        uuid = self.create_provider()
        providers.delete_provider(self.ctx, uuid)
        self.assertRaises(exception.ResourceProviderNotFound,
                          providers.get_provider, self.ctx, uuid)
        # The name is free again: a re-installed host can register.
        self.create_provider(name='host-' + uuid[:8])

    def test_delete_while_allocated_is_refused(self):
        uuid = self.create_provider()
        claims.claim_resources(self.ctx, 'instance-1', uuid, rb.SMALL)
        exc = self.assertRaises(exception.ResourceProviderInUse,
                                providers.delete_provider, self.ctx, uuid)
        self.assertIn('1 consumer', str(exc))
        self.assertEqual(uuid, providers.get_provider(self.ctx, uuid)['uuid'])

    def test_delete_missing_provider_raises_not_found(self):
        self.assertRaises(exception.ResourceProviderNotFound,
                          providers.delete_provider, self.ctx,
                          uuidutils.generate_uuid())


class SQLiteProviderTest(_ProviderTests, base.SQLiteMixin,
                         rb.ResourcesTestCase):
    pass


class MySQLProviderTest(_ProviderTests, base.MySQLMixin,
                        rb.ResourcesTestCase):
    pass


class PostgreSQLProviderTest(_ProviderTests, base.PostgreSQLMixin,
                             rb.ResourcesTestCase):
    pass


class _CellDatabaseTests:
    """A provider lives in the database of its cell, and only there."""

    CELLS = 2

    def setUp(self):
        super().setUp()
        self.cell2 = cell_mapping.CellMapping.create(
            self.ctx, 'cell2', self.dbs.cell_urls[1], 'fake://')

    def test_a_targeted_report_writes_the_targeted_cell_only(self):
        uuid = uuidutils.generate_uuid()
        with context.target_cell(self.ctx, self.cell2) as cctxt:
            providers.update_provider(cctxt, uuid, 'host1',
                                      rb.HOST_INVENTORY)
            self.assertEqual('host1',
                             providers.get_provider(cctxt, uuid)['name'])
        # The local cell database ([database] connection) has no such row.
        self.assertRaises(exception.ResourceProviderNotFound,
                          providers.get_provider, self.ctx, uuid)

    def test_an_untargeted_report_writes_the_local_cell_only(self):
        uuid = self.create_provider(name='host1')
        with context.target_cell(self.ctx, self.cell2) as cctxt:
            self.assertRaises(exception.ResourceProviderNotFound,
                              providers.get_provider, cctxt, uuid)
        self.assertEqual(1, self.generation(uuid))

    def test_a_claim_through_another_cell_does_not_find_the_provider(self):
        local = self.create_provider(name='host1')
        remote = uuidutils.generate_uuid()
        with context.target_cell(self.ctx, self.cell2) as cctxt:
            providers.update_provider(cctxt, remote, 'host2',
                                      rb.HOST_INVENTORY)
            # A claim on the local provider through cell2 finds no such
            # provider there: it is not written anywhere.
            self.assertRaises(exception.ResourceProviderNotFound,
                              claims.claim_resources, cctxt,
                              uuidutils.generate_uuid(), local, rb.SMALL)
        self.assertEqual([], self.allocation_rows())


class SQLiteCellDatabaseProviderTest(_CellDatabaseTests, base.SQLiteMixin,
                                     rb.ResourcesTestCase):
    pass


class MySQLCellDatabaseProviderTest(_CellDatabaseTests, base.MySQLMixin,
                                    rb.ResourcesTestCase):
    pass


class PostgreSQLCellDatabaseProviderTest(_CellDatabaseTests,
                                         base.PostgreSQLMixin,
                                         rb.ResourcesTestCase):
    pass


class InventoryValidationTest(base.TestCase):
    """Bad reports are refused before any database work, naming the field."""

    def _assert_invalid(self, inventories, *words):
        exc = self.assertRaises(exception.InvalidInventory,
                                providers.update_provider, None,
                                'rp-1', 'host1', inventories)
        for word in words:
            self.assertIn(word, str(exc))

    def test_unknown_resource_class(self):
        self._assert_invalid({'VCPUS': {'total': 8}}, 'VCPUS',
                             'not a resource class')

    def test_missing_total(self):
        self._assert_invalid({'VCPU': {'reserved': 1}}, 'total')

    def test_zero_total(self):
        self._assert_invalid({'VCPU': {'total': 0}}, 'total must be')

    def test_reserved_above_total(self):
        self._assert_invalid({'VCPU': {'total': 8, 'reserved': 9}},
                             'reserved')

    def test_max_unit_above_total(self):
        self._assert_invalid({'VCPU': {'total': 8, 'max_unit': 9}},
                             'max_unit')

    def test_non_positive_allocation_ratio(self):
        self._assert_invalid(
            {'VCPU': {'total': 8, 'allocation_ratio': 0}}, 'allocation_ratio')

    def test_non_integer_total(self):
        self._assert_invalid({'MEMORY_MB': {'total': '1024'}}, 'integer')

    def test_unknown_field(self):
        self._assert_invalid({'VCPU': {'total': 8, 'totl': 9}}, 'totl')
