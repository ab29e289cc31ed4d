"""CellMapping against a real API database, on every backend."""

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import host_mapping
from tests import base
from tests.functional.objects import spec_base

CellMapping = cell_mapping.CellMapping


class _CellMappingTests(spec_base.ObjectTests):

    def test_create_returns_the_stored_cell(self):
        cell = CellMapping.create(self.ctx, 'cell1', 'mysql://db/cell1',
                                  'rabbit://mq/')
        self.assertTrue(uuidutils.is_uuid_like(cell.uuid))
        self.assertIsNotNone(cell.id)
        self.assertEqual(('cell1', 'mysql://db/cell1', 'rabbit://mq/', False),
                         (cell.name, cell.database_connection,
                          cell.transport_url, cell.disabled))
        self.assertRecent(cell.created_at)

    def test_create_keeps_a_given_uuid(self):
        uuid = uuidutils.generate_uuid()
        self.assertEqual(uuid, self.make_cell('cell1', uuid=uuid).uuid)

    def test_create_with_a_taken_name_raises_exists(self):
        self.make_cell('cell1')
        exc = self.assertRaises(exception.CellMappingExists,
                                self.make_cell, 'cell1')
        self.assertIn('cell1', str(exc))

    def test_create_with_a_taken_uuid_raises_uuid_exists(self):
        cell = self.make_cell('cell1')
        exc = self.assertRaises(exception.CellMappingUuidExists,
                                self.make_cell, 'cell2', uuid=cell.uuid)
        self.assertIn(cell.uuid, str(exc))

    def test_get_by_uuid_returns_the_cell(self):
        cell = self.make_cell('cell1')
        self.assertEqual(cell.to_dict(),
                         CellMapping.get_by_uuid(self.ctx,
                                                 cell.uuid).to_dict())

    def test_get_by_uuid_of_unknown_cell_raises_not_found(self):
        self.assertRaises(exception.CellMappingNotFound,
                          CellMapping.get_by_uuid, self.ctx,
                          uuidutils.generate_uuid())

    def test_get_by_name_returns_the_cell(self):
        cell = self.make_cell('cell1')
        self.assertEqual(cell.uuid,
                         CellMapping.get_by_name(self.ctx, 'cell1').uuid)

    def test_get_by_name_of_unknown_cell_raises_not_found(self):
        exc = self.assertRaises(exception.CellMappingNotFound,
                                CellMapping.get_by_name, self.ctx, 'nope')
        self.assertIn('nope', str(exc))

    def test_get_by_uuid_or_name_accepts_either(self):
        cell = self.make_cell('cell1')
        self.assertEqual(
            [cell.uuid, cell.uuid],
            [CellMapping.get_by_uuid_or_name(self.ctx, ident).uuid
             for ident in (cell.uuid, 'cell1')])

    def test_get_by_uuid_or_name_prefers_the_uuid_match(self):
        cell = self.make_cell('cell1')
        self.make_cell(cell.uuid)  # a cell named like the first one's uuid
        self.assertEqual(
            'cell1', CellMapping.get_by_uuid_or_name(self.ctx,
                                                     cell.uuid).name)

    def test_get_by_uuid_or_name_of_unknown_cell_raises_not_found(self):
        self.assertRaises(exception.CellMappingNotFound,
                          CellMapping.get_by_uuid_or_name, self.ctx, 'nope')

    def test_get_all_lists_cell0_first_then_by_name(self):
        for name in ('zeta', 'alpha'):
            self.make_cell(name)
        self.make_cell('zzz-cell0', uuid=cell_mapping.CELL0_UUID)
        self.assertEqual(['zzz-cell0', 'alpha', 'zeta'],
                         [c.name for c in CellMapping.get_all(self.ctx)])

    def test_get_all_without_cells_is_empty(self):
        self.assertEqual([], CellMapping.get_all(self.ctx))

    def test_get_enabled_skips_disabled_cells_but_not_cell0(self):
        self.make_cell('cell0', uuid=cell_mapping.CELL0_UUID)
        self.make_cell('on')
        self.make_cell('off', disabled=True)
        self.assertEqual(['cell0', 'on'],
                         [c.name for c in CellMapping.get_enabled(self.ctx)])

    def test_is_cell0_only_for_the_cell0_uuid(self):
        self.assertEqual(
            [True, False],
            [self.make_cell('cell0', uuid=cell_mapping.CELL0_UUID).is_cell0,
             self.make_cell('cell1').is_cell0])

    def test_update_writes_the_new_values(self):
        cell = self.make_cell('cell1')
        cell.update(self.ctx, name='renamed', disabled=True,
                    transport_url='rabbit://other/')
        stored = CellMapping.get_by_uuid(self.ctx, cell.uuid)
        self.assertEqual(('renamed', True, 'rabbit://other/'),
                         (stored.name, stored.disabled, stored.transport_url))
        self.assertEqual(stored.to_dict(), cell.to_dict())

    def test_update_to_a_taken_name_raises_exists(self):
        self.make_cell('cell1')
        cell = self.make_cell('cell2')
        self.assertRaises(exception.CellMappingExists, cell.update, self.ctx,
                          name='cell1')

    def test_update_of_an_unknown_field_raises_invalid(self):
        cell = self.make_cell('cell1')
        self.assertRaises(exception.Invalid, cell.update, self.ctx,
                          uuid=uuidutils.generate_uuid())

    def test_update_of_a_deleted_cell_raises_not_found(self):
        cell = self.make_cell('cell1')
        cell.destroy(self.ctx)
        self.assertRaises(exception.CellMappingNotFound, cell.update,
                          self.ctx, disabled=True)

    def test_destroy_removes_the_cell(self):
        cell = self.make_cell('cell1')
        cell.destroy(self.ctx)
        self.assertRaises(exception.CellMappingNotFound,
                          CellMapping.get_by_uuid, self.ctx, cell.uuid)

    def test_destroy_twice_raises_not_found(self):
        cell = self.make_cell('cell1')
        cell.destroy(self.ctx)
        self.assertRaises(exception.CellMappingNotFound, cell.destroy,
                          self.ctx)

    def test_destroy_of_a_cell_with_hosts_is_refused(self):
        cell = self.make_cell('cell1')
        host_mapping.HostMapping.create(self.ctx, 'host1', cell.uuid)
        exc = self.assertRaises(exception.CellHasResources, cell.destroy,
                                self.ctx)
        self.assertIn('host mappings', str(exc))
        self.assertEqual(cell.uuid,
                         CellMapping.get_by_uuid(self.ctx, cell.uuid).uuid)

    def test_to_dict_has_every_field(self):
        cell = self.make_cell('cell1')
        self.assertEqual(set(CellMapping.FIELDS), set(cell.to_dict()))
        self.assertEqual('cell1', cell.to_dict()['name'])


class SQLiteCellMappingTest(_CellMappingTests, base.SQLiteMixin,
                            spec_base.ObjectTestCase):
    pass


class MySQLCellMappingTest(_CellMappingTests, base.MySQLMixin,
                           spec_base.ObjectTestCase):
    pass


class PostgreSQLCellMappingTest(_CellMappingTests, base.PostgreSQLMixin,
                                spec_base.ObjectTestCase):
    pass
