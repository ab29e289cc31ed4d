"""ComputeNode against a real cell database, on every backend."""

from oslo_utils import uuidutils

from cellboot import context
from cellboot import exception
from cellboot.objects import compute_node
from tests import base
from tests.functional.objects import spec_base

ComputeNode = compute_node.ComputeNode


class _ComputeNodeTests(spec_base.ObjectTests):

    def _create(self, host='host1', node='node1', **kwargs):
        return ComputeNode.create(self.ctx, host, node, 4, 8192, 100,
                                  **kwargs)

    def test_create_returns_an_unmapped_node_with_unit_ratios(self):
        node = self._create()
        self.assertTrue(uuidutils.is_uuid_like(node.uuid))
        self.assertEqual(
            ('host1', 'node1', 4, 8192, 100, 1.0, 1.0, 1.0, False),
            (node.host, node.hypervisor_hostname, node.vcpus, node.memory_mb,
             node.local_gb, node.cpu_allocation_ratio,
             node.ram_allocation_ratio, node.disk_allocation_ratio,
             node.mapped))

    def test_create_keeps_the_given_uuid_and_ratios(self):
        uuid = uuidutils.generate_uuid()
        node = self._create(uuid=uuid, cpu_allocation_ratio=16.0,
                            ram_allocation_ratio=1.5)
        self.assertEqual(
            node.to_dict(), ComputeNode.get_by_uuid(self.ctx, uuid).to_dict())
        self.assertEqual((16.0, 1.5, 1.0),
                         (node.cpu_allocation_ratio,
                          node.ram_allocation_ratio,
                          node.disk_allocation_ratio))

    def test_create_with_an_unknown_ratio_raises_invalid(self):
        self.assertRaises(exception.Invalid, self._create,
                          gpu_allocation_ratio=2.0)

    def test_create_with_a_taken_uuid_raises_exists(self):
        node = self._create()
        self.assertRaises(exception.ComputeNodeExists, self._create,
                          host='host2', uuid=node.uuid)

    def test_create_of_a_known_host_and_node_raises_exists(self):
        self._create()
        exc = self.assertRaises(exception.ComputeNodeExists, self._create)
        self.assertIn('node1', str(exc))

    def test_get_by_uuid_of_unknown_raises_not_found(self):
        self.assertRaises(exception.ComputeNodeNotFound,
                          ComputeNode.get_by_uuid, self.ctx,
                          uuidutils.generate_uuid())

    def test_get_by_host_and_node_returns_the_node(self):
        self._create(node='a')
        node = self._create(node='b')
        self.assertEqual(node.uuid, ComputeNode.get_by_host_and_node(
            self.ctx, 'host1', 'b').uuid)

    def test_get_by_host_and_node_of_unknown_raises_not_found(self):
        self._create()
        exc = self.assertRaises(exception.ComputeNodeNotFound,
                                ComputeNode.get_by_host_and_node, self.ctx,
                                'host2', 'node1')
        self.assertIn('host2', str(exc))

    def test_get_all_lists_nodes_by_host(self):
        self._create(host='b')
        self._create(host='a')
        self.assertEqual(['a', 'b'],
                         [n.host for n in ComputeNode.get_all(self.ctx)])

    def test_get_unmapped_skips_mapped_nodes(self):
        self._create(host='a').mark_mapped(self.ctx)
        self._create(host='b')
        self.assertEqual(['b'],
                         [n.host for n in ComputeNode.get_unmapped(self.ctx)])

    def test_mark_mapped_is_stored(self):
        node = self._create()
        node.mark_mapped(self.ctx)
        self.assertTrue(ComputeNode.get_by_uuid(self.ctx, node.uuid).mapped)

    def test_count_counts_the_nodes(self):
        self._create(host='a')
        self._create(host='b')
        self.assertEqual(2, ComputeNode.count(self.ctx))

    def test_update_writes_capacity_and_ratios(self):
        node = self._create()
        node.update(self.ctx, vcpus=8, disk_allocation_ratio=2.0)
        stored = ComputeNode.get_by_uuid(self.ctx, node.uuid)
        self.assertEqual((8, 2.0), (stored.vcpus,
                                    stored.disk_allocation_ratio))
        self.assertEqual(stored.to_dict(), node.to_dict())

    def test_update_of_an_unknown_field_raises_invalid(self):
        node = self._create()
        self.assertRaises(exception.Invalid, node.update, self.ctx,
                          host='host2')

    def test_update_of_a_deleted_node_raises_not_found(self):
        node = self._create()
        node.destroy(self.ctx)
        self.assertRaises(exception.ComputeNodeNotFound, node.mark_mapped,
                          self.ctx)

    def test_destroy_twice_raises_not_found(self):
        node = self._create()
        node.destroy(self.ctx)
        self.assertRaises(exception.ComputeNodeNotFound, node.destroy,
                          self.ctx)

    def test_targeted_cell_holds_its_own_nodes_only(self):
        remote = self.make_remote_cell('cell2')
        self._create(host='local')
        with context.target_cell(self.ctx, remote) as cctxt:
            ComputeNode.create(cctxt, 'remote', 'node1', 1, 512, 1)
            self.assertEqual(['remote'],
                             [n.host for n in ComputeNode.get_all(cctxt)])
        self.assertEqual(['local'],
                         [n.host for n in ComputeNode.get_all(self.ctx)])


class SQLiteComputeNodeTest(_ComputeNodeTests, base.SQLiteMixin,
                            spec_base.ObjectTestCase):
    CELL_DATABASES = 2


class MySQLComputeNodeTest(_ComputeNodeTests, base.MySQLMixin,
                           spec_base.ObjectTestCase):
    CELL_DATABASES = 2


class PostgreSQLComputeNodeTest(_ComputeNodeTests, base.PostgreSQLMixin,
                                spec_base.ObjectTestCase):
    CELL_DATABASES = 2
