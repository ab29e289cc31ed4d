"""HostMapping against a real API database, on every backend."""

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.objects import host_mapping
from tests import base
from tests.functional.objects import spec_base

HostMapping = host_mapping.HostMapping


class _HostMappingTests(spec_base.ObjectTests):

    def setUp(self):
        super().setUp()
        self.cell1 = self.make_cell('cell1')
        self.cell2 = self.make_cell('cell2')

    def test_create_returns_the_mapping_with_its_cell(self):
        mapping = HostMapping.create(self.ctx, 'host1', self.cell1.uuid)
        self.assertEqual('host1', mapping.host)
        self.assertEqual(self.cell1.to_dict(), mapping.cell_mapping.to_dict())

    def test_create_for_an_unknown_cell_raises_cell_not_found(self):
        self.assertRaises(exception.CellMappingNotFound, HostMapping.create,
                          self.ctx, 'host1', uuidutils.generate_uuid())

    def test_create_for_a_mapped_host_raises_exists(self):
        HostMapping.create(self.ctx, 'host1', self.cell1.uuid)
        exc = self.assertRaises(exception.HostMappingExists,
                                HostMapping.create, self.ctx, 'host1',
                                self.cell2.uuid)
        self.assertIn('host1', str(exc))

    def test_get_by_host_returns_the_mapping(self):
        HostMapping.create(self.ctx, 'host1', self.cell2.uuid)
        self.assertEqual(
            self.cell2.uuid,
            HostMapping.get_by_host(self.ctx, 'host1').cell_mapping.uuid)

    def test_get_by_host_of_an_unmapped_host_raises_not_found(self):
        exc = self.assertRaises(exception.HostMappingNotFound,
                                HostMapping.get_by_host, self.ctx, 'host1')
        self.assertIn('host1', str(exc))

    def test_get_all_lists_every_host_by_name(self):
        for host, cell in (('b', self.cell1), ('a', self.cell2)):
            HostMapping.create(self.ctx, host, cell.uuid)
        self.assertEqual(['a', 'b'],
                         [m.host for m in HostMapping.get_all(self.ctx)])

    def test_get_all_of_a_cell_lists_only_its_hosts(self):
        for host, cell in (('b', self.cell1), ('a', self.cell2)):
            HostMapping.create(self.ctx, host, cell.uuid)
        self.assertEqual(
            ['b'], [m.host for m in HostMapping.get_all(self.ctx,
                                                        self.cell1.uuid)])

    def test_count_by_cell_counts_only_that_cells_hosts(self):
        for host, cell in (('a', self.cell1), ('b', self.cell1),
                           ('c', self.cell2)):
            HostMapping.create(self.ctx, host, cell.uuid)
        self.assertEqual(
            [2, 1, 0],
            [HostMapping.count_by_cell(self.ctx, uuid) for uuid in
             (self.cell1.uuid, self.cell2.uuid, uuidutils.generate_uuid())])

    def test_destroy_by_cell_unmaps_that_cells_hosts_only(self):
        for host, cell in (('a', self.cell1), ('b', self.cell1),
                           ('c', self.cell2)):
            HostMapping.create(self.ctx, host, cell.uuid)
        self.assertEqual(2, HostMapping.destroy_by_cell(self.ctx,
                                                        self.cell1.uuid))
        self.assertEqual(['c'],
                         [m.host for m in HostMapping.get_all(self.ctx)])

    def test_destroy_unmaps_the_host(self):
        HostMapping.create(self.ctx, 'host1', self.cell1.uuid).destroy(
            self.ctx)
        self.assertRaises(exception.HostMappingNotFound,
                          HostMapping.get_by_host, self.ctx, 'host1')

    def test_destroy_twice_raises_not_found(self):
        mapping = HostMapping.create(self.ctx, 'host1', self.cell1.uuid)
        mapping.destroy(self.ctx)
        self.assertRaises(exception.HostMappingNotFound, mapping.destroy,
                          self.ctx)

    def test_to_dict_nests_the_cell_mapping(self):
        mapping = HostMapping.create(self.ctx, 'host1', self.cell1.uuid)
        self.assertEqual({'id': mapping.id, 'host': 'host1',
                          'cell_mapping': self.cell1.to_dict()},
                         mapping.to_dict())


class SQLiteHostMappingTest(_HostMappingTests, base.SQLiteMixin,
                            spec_base.ObjectTestCase):
    pass


class MySQLHostMappingTest(_HostMappingTests, base.MySQLMixin,
                           spec_base.ObjectTestCase):
    pass


class PostgreSQLHostMappingTest(_HostMappingTests, base.PostgreSQLMixin,
                                spec_base.ObjectTestCase):
    pass
