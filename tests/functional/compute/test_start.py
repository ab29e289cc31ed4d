"""A compute host's start: its service, node and provider, and heartbeat."""

from cellboot.compute import manager as compute_manager
from cellboot import exception
from cellboot.objects import compute_node
from cellboot.objects import service
from cellboot.scheduler.resources import provider_traits
from cellboot.scheduler.resources import providers
from tests import base
from tests.functional.compute import base as compute_base


class _StartTests:

    def _service(self, host='host1'):
        return service.Service.get_by_host_and_binary(
            self.ctx, host, compute_manager.BINARY)

    def test_start_registers_the_compute_service_as_up(self):
        self.start_manager()
        self.assertTrue(self._service().is_up(60))

    def test_start_registers_the_node_named_after_the_host(self):
        manager = self.start_manager()
        node = compute_node.ComputeNode.get_by_host_and_node(
            self.ctx, 'host1', 'host1')
        self.assertEqual(manager.node.uuid, node.uuid)

    def test_node_capacity_and_ratios_come_from_the_configuration(self):
        self.flags(vcpus=4, memory_mb=2048, local_gb=40,
                   cpu_allocation_ratio=2.0, group='compute')
        node = self.start_manager().node
        self.assertEqual((4, 2048, 40, 2.0),
                         (node.vcpus, node.memory_mb, node.local_gb,
                          node.cpu_allocation_ratio))

    def test_start_reports_the_provider_in_its_cell_and_zone(self):
        self.flags(availability_zone='az1', group='compute')
        manager = self.start_manager()
        # Read from the cell's own database: where its scheduler keeps it.
        provider = providers.get_provider(self.ctx, manager.node.uuid)
        self.assertEqual(('host1', 'az1'),
                         (provider['name'], provider['availability_zone']))

    def test_provider_inventories_carry_capacity_and_ratios(self):
        self.flags(vcpus=4, memory_mb=2048, local_gb=40,
                   cpu_allocation_ratio=2.0, ram_allocation_ratio=1.5,
                   disk_allocation_ratio=1.0, group='compute')
        manager = self.start_manager()
        inventories = providers.get_provider(
            self.ctx, manager.node.uuid)['inventories']
        self.assertEqual(
            {'VCPU': (4, 2.0), 'MEMORY_MB': (2048, 1.5),
             'DISK_GB': (40, 1.0)},
            {rc: (inv['total'], inv['allocation_ratio'])
             for rc, inv in inventories.items()})

    def test_no_local_disk_reports_no_disk_inventory(self):
        self.flags(local_gb=0, group='compute')
        manager = self.start_manager()
        inventories = providers.get_provider(
            self.ctx, manager.node.uuid)['inventories']
        self.assertEqual({'VCPU', 'MEMORY_MB'}, set(inventories))

    def test_configured_classes_and_traits_are_reported(self):
        self.flags(extra_inventories=['CUSTOM_FPGA:2', 'VGPU:4'],
                   traits=['HW_CPU_X86_AVX2', 'CUSTOM_SSD'], group='compute')
        manager = self.start_manager()
        provider = providers.get_provider(self.ctx, manager.node.uuid)
        self.assertEqual(
            (2, 4, ['CUSTOM_SSD', 'HW_CPU_X86_AVX2']),
            (provider['inventories']['CUSTOM_FPGA']['total'],
             provider['inventories']['VGPU']['total'], provider['traits']))

    def test_operator_traits_survive_reports_without_configured_ones(self):
        manager = self.start_manager()
        provider_traits.set_traits(self.ctx, manager.node.uuid,
                                   ['CUSTOM_SSD'])
        manager.report_provider(self.ctx)
        self.assertEqual(['CUSTOM_SSD'], providers.get_provider(
            self.ctx, manager.node.uuid)['traits'])

    def test_configured_traits_replace_operator_ones_at_the_report(self):
        self.flags(traits=['HW_CPU_X86_AVX2'], group='compute')
        manager = self.start_manager()
        provider_traits.set_traits(self.ctx, manager.node.uuid,
                                   ['CUSTOM_SSD'])
        manager.report_provider(self.ctx)
        self.assertEqual(['HW_CPU_X86_AVX2'], providers.get_provider(
            self.ctx, manager.node.uuid)['traits'])

    def test_a_bad_trait_stops_the_start_before_any_row(self):
        self.flags(traits=['not a trait'], group='compute')
        self.assertRaises(exception.ConfigurationError, self.start_manager)
        self.assertRaises(exception.ServiceNotFound, self._service)

    def test_restart_reuses_the_node_uuid(self):
        first = self.start_manager().node.uuid
        second = self.start_manager().node.uuid
        self.assertEqual(first, second)

    def test_restart_keeps_one_service_one_node_one_provider(self):
        self.start_manager()
        self.start_manager()
        self.assertEqual(
            (1, 1, 1),
            (len(service.Service.get_all(self.ctx, compute_manager.BINARY)),
             compute_node.ComputeNode.count(self.ctx),
             len(self.scheduler_api.host_states(self.ctx))))

    def test_restart_with_new_capacity_updates_node_and_provider(self):
        self.start_manager()
        self.flags(vcpus=32, group='compute')
        manager = self.start_manager()
        inventories = providers.get_provider(
            self.ctx, manager.node.uuid)['inventories']
        self.assertEqual((32, 32),
                         (manager.node.vcpus, inventories['VCPU']['total']))

    def test_start_without_a_cell_name_is_a_configuration_error(self):
        manager = self.make_manager()
        manager.cell_name = None
        self.assertRaises(exception.ConfigurationError, manager.init_host,
                          self.ctx)

    def test_report_state_counts_a_heartbeat(self):
        manager = self.start_manager()
        before = self._service().report_count
        manager.report_state(self.ctx)
        self.assertEqual(before + 1, self._service().report_count)

    def test_report_state_moves_last_seen_up_on(self):
        manager = self.start_manager()
        before = self._service().last_seen_up
        manager.report_state(self.ctx)
        self.assertGreaterEqual(self._service().last_seen_up, before)

    def test_heartbeat_thread_reports_periodically(self):
        manager = self.start_manager()
        before = self._service().report_count
        manager.start_heartbeat(interval=0.05)
        self.assertTrue(compute_base.wait_for(
            lambda: self._service().report_count >= before + 2))

    def test_stop_ends_the_heartbeat(self):
        manager = self.start_manager()
        manager.start_heartbeat(interval=0.05)
        manager.stop()
        count = self._service().report_count
        compute_base.wait_for(lambda: False, timeout=0.2)
        self.assertEqual(count, self._service().report_count)


class SQLiteStartTest(_StartTests, base.SQLiteMixin,
                      compute_base.ComputeTestCase):
    pass


class MySQLStartTest(_StartTests, base.MySQLMixin,
                     compute_base.ComputeTestCase):
    pass


class PostgreSQLStartTest(_StartTests, base.PostgreSQLMixin,
                          compute_base.ComputeTestCase):
    pass
