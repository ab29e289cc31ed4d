"""The API level's scheduler descending a tree of zones, cells in-process.

Four cells: region ``eu`` holds zone ``eu-a`` (cells 1 and 2) and zone
``eu-b`` (cell 3); cell 4 is in no zone. The zones are what the API
database would give (``cell_aggregates.read_zones`` and each cell
mapping's ``zone_uuid``). A request naming a zone lands in one of its
cells; a full zone is skipped; a zone whose cells refuse hands the
request to the next; and a zone no cell is in says so.
"""

import types

import fixtures

from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.scheduler import cell_aggregates
from tests import base
from tests.functional.scheduler import cell_doubles
from tests.functional.scheduler import placement_base
from tests.functional.scheduler.placement_base import spec

ZONES = [types.SimpleNamespace(uuid='zone-eu', name='eu', parent_uuid=None),
         types.SimpleNamespace(uuid='zone-eu-a', name='eu-a',
                               parent_uuid='zone-eu'),
         types.SimpleNamespace(uuid='zone-eu-b', name='eu-b',
                               parent_uuid='zone-eu'),
         types.SimpleNamespace(uuid='zone-empty', name='empty',
                               parent_uuid=None)]
ZONE_OF_CELL = ['zone-eu-a', 'zone-eu-a', 'zone-eu-b', None]


class _ZonesTestCase(placement_base.RamWeighedSelection,
                     placement_base.FleetTestCase):

    CELLS = 4

    def setUp(self):
        super().setUp()
        zone_of = {cell.uuid: ZONE_OF_CELL[i]
                   for i, cell in enumerate(self.cells)}
        get_enabled = cell_mapping.CellMapping.get_enabled

        def enabled_in_zones(context):
            cells = get_enabled(context)
            for cell in cells:
                cell.zone_uuid = zone_of.get(cell.uuid)
            return cells

        self.useFixture(fixtures.MockPatchObject(
            cell_mapping.CellMapping, 'get_enabled', enabled_in_zones))
        self.useFixture(fixtures.MockPatchObject(
            cell_aggregates, 'read_zones', lambda context: list(ZONES)))

    def fleet(self, memory=(8192, 8192, 8192, 65536), vcpus=8):
        """One host per cell (``h1``..``h4``); cell 4, in no zone, has
        the most memory: a request free to go anywhere goes there."""
        for i, memory_mb in enumerate(memory):
            self.add_host(f'h{i + 1}', cell=i, memory_mb=memory_mb,
                          vcpus=vcpus)
        self.start()

    def in_zone(self, zone, **values):
        hints = dict(values.pop('scheduler_hints', {}), zone=zone)
        return spec(scheduler_hints=hints, **values)


class _ZoneTests:

    def test_a_request_naming_no_zone_goes_to_the_roomiest_cell(self):
        self.fleet()
        _instances, selections = self._select()
        self.assertEqual(['h4'], self._hosts_of(selections))

    def test_a_zone_hint_lands_in_one_of_its_cells(self):
        self.fleet(memory=(4096, 8192, 16384, 65536))
        _instances, selections = self._select(self.in_zone('eu-a'))
        self.assertEqual(['h2'], self._hosts_of(selections))

    def test_an_availability_zone_that_is_a_tree_zone_confines(self):
        # The cell is not sent the name: its hosts are in zone 'nova'.
        self.fleet()
        _instances, selections = self._select(spec(availability_zone='eu-b'))
        self.assertEqual(['h3'], self._hosts_of(selections))

    def test_the_hint_leaves_the_availability_zone_to_the_hosts(self):
        self.fleet()
        _instances, selections = self._select(
            self.in_zone('eu', availability_zone='nova'))
        self.assertIn(self._hosts_of(selections)[0], ('h1', 'h2', 'h3'))
        self.assertRaises(exception.NoValidHost, self._select,
                          self.in_zone('eu', availability_zone='az9'))

    def test_a_full_zone_is_skipped(self):
        self.fleet(memory=(1024, 1024, 4096, 1024))
        _instances, selections = self._select(self.in_zone('eu'))
        self.assertEqual(['h3'], self._hosts_of(selections))

    def test_a_zone_whose_cells_refuse_hands_over_to_the_next(self):
        self.fleet(memory=(1024, 1024, 4096, 1024))
        # eu-a's cells say they have room, and have none.
        self.scheduler.aggregates.take(self.cells[0], cell_doubles.roomy())
        _instances, selections = self._select(self.in_zone('eu'))
        self.assertEqual((['h3'], 1), (self._hosts_of(selections),
                                       self.scheduler.stats['cells refused']))

    def test_a_multi_create_is_split_across_the_zones_cells(self):
        self.fleet(memory=(2048, 2048, 65536, 65536))
        _instances, selections = self._select(self.in_zone('eu-a'), count=2)
        self.assertEqual(['h1', 'h2'], sorted(self._hosts_of(selections)))

    def test_a_zone_hint_naming_no_zone_is_no_valid_host(self):
        self.fleet()
        error = str(self.assertRaises(exception.NoValidHost, self._select,
                                      self.in_zone('mars')))
        self.assertIn("No zone called 'mars' has a cell", error)

    def test_a_zone_with_no_cell_is_no_valid_host(self):
        self.fleet()
        error = str(self.assertRaises(exception.NoValidHost, self._select,
                                      self.in_zone('empty')))
        self.assertIn("No zone called 'empty' has a cell", error)

    def test_no_valid_host_names_the_zones_pruned(self):
        self.fleet(memory=(1024, 1024, 1024, 1024))
        error = str(self.assertRaises(exception.NoValidHost, self._select))
        self.assertIn('ResourceFilter removed the last 4 cell(s)', error)
        self.assertIn('Zones pruned: eu (ResourceFilter).', error)

    def test_a_hint_that_is_no_name_is_invalid_and_claims_nothing(self):
        self.fleet()
        error = str(self.assertRaises(exception.Invalid, self._select,
                                      self.in_zone({'name': 'eu'})))
        self.assertIn('scheduler hint zone takes a zone name', error)
        self.assertEqual(0, self.scheduler.stats['requests placed'])


class SQLiteZonesTest(_ZoneTests, base.SQLiteMixin, _ZonesTestCase):
    pass


class MySQLZonesTest(_ZoneTests, base.MySQLMixin, _ZonesTestCase):
    pass


class PostgreSQLZonesTest(_ZoneTests, base.PostgreSQLMixin, _ZonesTestCase):
    pass
