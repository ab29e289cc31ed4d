"""``zone create | list | delete`` and the zone of cells in ``cell_v2``."""

from oslo_utils import uuidutils

from cellboot.objects import cell_mapping
from cellboot.objects import zone as zone_obj
from tests import base as test_base
from tests.functional.cmd import base

CellMapping = cell_mapping.CellMapping

# Names the zone commands refuse, and the words their error must hold.
BAD_NAMES = (('', 'empty'), ('x' * 256, '255'),
             (' region', 'space'), ('region ', 'space'),
             ('bell\x07', 'printable'),
             ('0f9e6a3c-0d8b-4d55-9a39-2c3b0f6d7a11', 'uuid'))


def table_rows(result):
    return [[value.strip() for value in line.split('|')[1:-1]]
            for line in result.stdout.splitlines() if line.startswith('|')]


class _ZoneCommandTests:

    def test_create_prints_the_uuid_of_the_new_zone(self):
        result = self.manage('zone', 'create', 'region1')
        self.assertSucceeded(result)
        zone = zone_obj.get(self.context, 'region1')
        self.assertEqual(zone.uuid, result.stdout.strip())
        self.assertIsNone(zone.parent_uuid)

    def test_create_under_a_parent(self):
        region = zone_obj.create(self.context, 'region1')
        result = self.manage('zone', 'create', 'az1', '--parent', 'region1')
        self.assertSucceeded(result)
        self.assertEqual(region.uuid,
                         zone_obj.get(self.context, 'az1').parent_uuid)

    def test_create_with_bad_names_is_refused_and_writes_nothing(self):
        before = self.api_snapshot()
        for name, words in BAD_NAMES:
            result = self.manage('zone', 'create', '--', name)
            self.assertOneLineError(result, 1, 'zone name', words)
        self.assertEqual(before, self.api_snapshot())

    def test_create_under_an_unknown_parent_is_refused(self):
        result = self.manage('zone', 'create', 'az1', '--parent', 'nowhere')
        self.assertOneLineError(result, 1, 'nowhere')
        self.assertEqual([], zone_obj.get_all(self.context))

    def test_create_with_a_taken_name_exits_2(self):
        zone_obj.create(self.context, 'region1')
        result = self.manage('zone', 'create', 'region1')
        self.assertOneLineError(result, 2, 'region1', 'already exists')
        self.assertEqual(1, len(zone_obj.get_all(self.context)))

    def test_list_shows_the_tree_with_parents_and_counts(self):
        region = zone_obj.create(self.context, 'region1')
        az = zone_obj.create(self.context, 'az1', parent=region.uuid)
        zone_obj.create(self.context, 'alone')
        CellMapping.create(self.context, 'cell1', self.cell1_url,
                           base.RABBIT_URL, zone_uuid=az.uuid)
        result = self.manage('zone', 'list')
        self.assertSucceeded(result)
        rows = table_rows(result)
        self.assertEqual(['Name', 'UUID', 'Parent', 'Cells', 'Zones'],
                         rows[0])
        self.assertEqual([['alone', '', '0', '0'],
                          ['region1', '', '0', '1'],
                          ['az1', 'region1', '1', '0']],
                         [[row[0], row[2], row[3], row[4]]
                          for row in rows[1:]])
        self.assertIn('|   az1', result.stdout)  # indented under region1

    def test_delete_removes_an_empty_zone(self):
        zone = zone_obj.create(self.context, 'region1')
        result = self.manage('zone', 'delete', zone.uuid)
        self.assertSucceeded(result)
        self.assertIn('region1', result.stdout)
        self.assertEqual([], zone_obj.get_all(self.context))

    def test_delete_of_a_zone_holding_cells_and_zones_is_refused(self):
        region = zone_obj.create(self.context, 'region1')
        zone_obj.create(self.context, 'az1', parent='region1')
        CellMapping.create(self.context, 'cell1', self.cell1_url,
                           base.RABBIT_URL, zone_uuid=region.uuid)
        before = self.api_snapshot()
        result = self.manage('zone', 'delete', 'region1')
        self.assertOneLineError(result, 3, 'region1', '1 cell and 1 zone')
        self.assertEqual(before, self.api_snapshot())

    def test_delete_of_an_unknown_zone_exits_1(self):
        result = self.manage('zone', 'delete', 'nope')
        self.assertOneLineError(result, 1, 'nope', 'does not exist')


class _CellZoneCommandTests:

    def test_create_cell_in_a_zone(self):
        zone = zone_obj.create(self.context, 'az1')
        result = self.manage('cell_v2', 'create_cell', '--name', 'cell1',
                             '--transport-url', base.RABBIT_URL,
                             '--zone', 'az1')
        self.assertSucceeded(result)
        self.assertEqual(zone.uuid, CellMapping.get_by_name(
            self.context, 'cell1').zone_uuid)

    def test_create_cell_in_an_unknown_zone_maps_nothing(self):
        result = self.manage('cell_v2', 'create_cell', '--name', 'cell1',
                             '--transport-url', base.RABBIT_URL,
                             '--zone', 'nowhere')
        self.assertOneLineError(result, 1, 'nowhere')
        self.assertEqual([], CellMapping.get_all(self.context))

    def test_list_cells_shows_the_zone(self):
        zone = zone_obj.create(self.context, 'az1')
        self.map_cell1().update(self.context, zone_uuid=zone.uuid)
        self.map_cell1(name='cell2', url='sqlite://',
                       transport_url=base.CELL2_RABBIT_URL)
        rows = table_rows(self.manage('cell_v2', 'list_cells'))
        zone_at = rows[0].index('Zone')
        self.assertEqual([('cell1', 'az1'), ('cell2', '')],
                         [(row[0], row[zone_at]) for row in rows[1:]])

    def test_update_cell_moves_it_in_and_out_of_a_zone(self):
        zone_obj.create(self.context, 'az1')
        cell = self.map_cell1()
        result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                             cell.uuid, '--zone', 'az1')
        self.assertSucceeded(result)
        self.assertIn(cell.uuid, result.stdout)
        self.assertEqual(zone_obj.get(self.context, 'az1').uuid,
                         CellMapping.get_by_uuid(self.context,
                                                 cell.uuid).zone_uuid)
        result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                             'cell1', '--no-zone')
        self.assertSucceeded(result)
        self.assertIsNone(CellMapping.get_by_uuid(self.context,
                                                  cell.uuid).zone_uuid)

    def test_update_cell_renames(self):
        cell = self.map_cell1()
        result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                             cell.uuid, '--name', 'renamed')
        self.assertSucceeded(result)
        self.assertEqual('renamed', CellMapping.get_by_uuid(
            self.context, cell.uuid).name)

    def test_update_cell_to_an_unknown_zone_changes_nothing(self):
        cell = self.map_cell1()
        before = self.api_snapshot()
        result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                             cell.uuid, '--name', 'renamed', '--zone',
                             'nowhere')
        self.assertOneLineError(result, 1, 'nowhere', 'does not exist')
        self.assertEqual(before, self.api_snapshot())

    def test_update_of_an_unknown_cell_exits_1(self):
        result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                             uuidutils.generate_uuid(), '--no-zone')
        self.assertOneLineError(result, 1, 'does not exist')

    def test_update_cell_to_a_taken_name_exits_2(self):
        self.map_cell1()
        cell2 = self.map_cell1(name='cell2', url='sqlite://',
                               transport_url=base.CELL2_RABBIT_URL)
        before = self.api_snapshot()
        result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                             cell2.uuid, '--name', 'cell1')
        self.assertOneLineError(result, 2, 'cell1')
        self.assertEqual(before, self.api_snapshot())

    def test_update_cell_to_another_cells_database_exits_2(self):
        self.map_cell1()
        cell2 = self.map_cell1(name='cell2', url='sqlite://',
                               transport_url=base.CELL2_RABBIT_URL)
        before = self.api_snapshot()
        result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                             cell2.uuid, '--database_connection',
                             self.cell1_url)
        self.assertEqual(2, result.code, result)
        self.assertEqual(before, self.api_snapshot())

    def test_cell0_is_never_put_in_a_zone(self):
        zone_obj.create(self.context, 'az1')
        self.map_cell0()
        before = self.api_snapshot()
        result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                             'cell0', '--zone', 'az1')
        self.assertOneLineError(result, 5, 'cell0')
        self.assertEqual(before, self.api_snapshot())

    def test_update_cell_with_nothing_to_change_exits_1(self):
        cell = self.map_cell1()
        result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                             cell.uuid)
        self.assertOneLineError(result, 1, 'nothing to change')

    def test_zone_and_no_zone_together_are_a_usage_error(self):
        cell = self.map_cell1()
        result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                             cell.uuid, '--zone', 'az1', '--no-zone')
        self.assertEqual(2, result.code, result)
        self.assertNotIn('Traceback', result.stderr)

    def test_update_cell_disables_and_enables_it(self):
        cell = self.map_cell1()
        result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                             'cell1', '--disable')
        self.assertSucceeded(result)
        self.assertTrue(CellMapping.get_by_uuid(self.context,
                                                cell.uuid).disabled)
        self.assertNotIn(cell.uuid, [
            c.uuid for c in CellMapping.get_enabled(self.context)])
        result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                             cell.uuid, '--enable')
        self.assertSucceeded(result)
        self.assertFalse(CellMapping.get_by_uuid(self.context,
                                                 cell.uuid).disabled)

    def test_disable_and_enable_together_are_a_usage_error(self):
        cell = self.map_cell1()
        before = self.api_snapshot()
        result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                             cell.uuid, '--disable', '--enable')
        self.assertEqual(2, result.code, result)
        self.assertNotIn('Traceback', result.stderr)
        self.assertEqual(before, self.api_snapshot())

    def test_cell0_is_never_enabled_or_disabled(self):
        self.map_cell0()
        before = self.api_snapshot()
        for flag in ('--disable', '--enable'):
            result = self.manage('cell_v2', 'update_cell', '--cell_uuid',
                                 'cell0', flag, '--name', 'renamed')
            self.assertOneLineError(result, 5, 'cell0')
            self.assertEqual(before, self.api_snapshot())


class _ZoneTests(_ZoneCommandTests, _CellZoneCommandTests):
    pass


class SQLiteZoneCommandTest(_ZoneTests, test_base.SQLiteMixin,
                            base.ManageTestCase):
    pass


class MySQLZoneCommandTest(_ZoneTests, test_base.MySQLMixin,
                           base.ManageTestCase):
    pass
