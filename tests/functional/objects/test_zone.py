"""Zones against a real API database, on every backend."""

from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.api import models
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import host_mapping
from cellboot.objects import zone as zone_obj
from tests import base
from tests.functional.objects import spec_base

Zone = zone_obj.Zone
CellMapping = cell_mapping.CellMapping

BAD_NAMES = ('', 'x' * 256, ' region', 'region ', 'tab\there', 'nl\nhere',
             '0f9e6a3c-0d8b-4d55-9a39-2c3b0f6d7a11')


class _ZoneTests(spec_base.ObjectTests):

    def _rows(self):
        with self.api_engine().connect() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(
                models.Zone.__table__)).scalar()

    def api_engine(self):
        engine = sa.create_engine(self.api_url)
        self.addCleanup(engine.dispose)
        return engine

    def test_create_returns_the_stored_zone(self):
        zone = zone_obj.create(self.ctx, 'region1')
        self.assertTrue(uuidutils.is_uuid_like(zone.uuid))
        self.assertEqual(('region1', None), (zone.name, zone.parent_uuid))
        self.assertRecent(zone.created_at)

    def test_create_under_a_parent_named_by_name_or_uuid(self):
        region = zone_obj.create(self.ctx, 'region1')
        by_name = zone_obj.create(self.ctx, 'az1', parent='region1')
        by_uuid = zone_obj.create(self.ctx, 'az2', parent=region.uuid)
        self.assertEqual([region.uuid, region.uuid],
                         [by_name.parent_uuid, by_uuid.parent_uuid])

    def test_create_under_an_unknown_parent_is_refused(self):
        exc = self.assertRaises(exception.ZoneNotFound, zone_obj.create,
                                self.ctx, 'az1', parent='nowhere')
        self.assertIn('nowhere', str(exc))
        self.assertEqual(0, self._rows())

    def test_create_with_a_taken_name_raises_exists(self):
        zone_obj.create(self.ctx, 'region1')
        exc = self.assertRaises(exception.ZoneExists, zone_obj.create,
                                self.ctx, 'region1')
        self.assertIn('region1', str(exc))
        self.assertEqual(1, self._rows())

    def test_bad_names_are_refused_and_nothing_written(self):
        for name in BAD_NAMES:
            self.assertRaises(exception.InvalidZoneName, zone_obj.create,
                              self.ctx, name)
        self.assertEqual(0, self._rows())

    def test_get_accepts_uuid_or_name(self):
        zone = zone_obj.create(self.ctx, 'region1')
        self.assertEqual([zone.to_dict()] * 2,
                         [zone_obj.get(self.ctx, ident).to_dict()
                          for ident in (zone.uuid, 'region1')])

    def test_get_of_an_unknown_zone_raises_not_found(self):
        for ident in ('nope', uuidutils.generate_uuid()):
            exc = self.assertRaises(exception.ZoneNotFound, zone_obj.get,
                                    self.ctx, ident)
            self.assertIn(ident, str(exc))

    def test_get_all_is_by_name_with_parents(self):
        region = zone_obj.create(self.ctx, 'r')
        zone_obj.create(self.ctx, 'b', parent='r')
        zone_obj.create(self.ctx, 'a')
        self.assertEqual([('a', None), ('b', region.uuid), ('r', None)],
                         [(z.name, z.parent_uuid)
                          for z in zone_obj.get_all(self.ctx)])

    def test_destroy_deletes_an_empty_zone(self):
        zone_obj.create(self.ctx, 'region1')
        zone_obj.destroy(self.ctx, 'region1')
        self.assertEqual([], zone_obj.get_all(self.ctx))

    def test_destroy_of_an_unknown_zone_raises_not_found(self):
        self.assertRaises(exception.ZoneNotFound, zone_obj.destroy,
                          self.ctx, 'nope')

    def test_destroy_of_a_zone_holding_cells_and_zones_is_refused(self):
        region = zone_obj.create(self.ctx, 'region1')
        zone_obj.create(self.ctx, 'az1', parent='region1')
        self.make_cell('cell1', zone_uuid=region.uuid)
        self.make_cell('cell2', zone_uuid=region.uuid)
        exc = self.assertRaises(exception.ZoneInUse, zone_obj.destroy,
                                self.ctx, region.uuid)
        self.assertIn('2 cells and 1 zone', str(exc))
        self.assertEqual(2, self._rows())

    def test_depth_first_lists_children_under_parents(self):
        zone_obj.create(self.ctx, 'r2')
        zone_obj.create(self.ctx, 'r1')
        zone_obj.create(self.ctx, 'z2', parent='r1')
        zone_obj.create(self.ctx, 'z1', parent='r1')
        zone_obj.create(self.ctx, 'leaf', parent='z2')
        listed = zone_obj.depth_first(zone_obj.get_all(self.ctx))
        self.assertEqual([(0, 'r1'), (1, 'z1'), (1, 'z2'), (2, 'leaf'),
                          (0, 'r2')],
                         [(depth, z.name) for depth, z in listed])


class _CellZoneTests(spec_base.ObjectTests):

    def test_a_cell_has_no_zone_by_default(self):
        self.assertIsNone(self.make_cell('cell1').zone_uuid)

    def test_every_read_of_a_cell_carries_its_zone(self):
        zone = zone_obj.create(self.ctx, 'az1')
        cell = self.make_cell('cell1', zone_uuid=zone.uuid)
        host_mapping.HostMapping.create(self.ctx, 'host1', cell.uuid)
        reads = [cell,
                 CellMapping.get_by_uuid(self.ctx, cell.uuid),
                 CellMapping.get_by_name(self.ctx, 'cell1'),
                 CellMapping.get_by_uuid_or_name(self.ctx, 'cell1'),
                 CellMapping.get_all(self.ctx)[0],
                 CellMapping.get_enabled(self.ctx)[0],
                 CellMapping.get_page(self.ctx, 1)[0],
                 host_mapping.HostMapping.get_by_host(
                     self.ctx, 'host1').cell_mapping]
        self.assertEqual([zone.uuid] * len(reads),
                         [read.zone_uuid for read in reads])

    def test_create_in_an_unknown_zone_maps_nothing(self):
        self.assertRaises(exception.ZoneNotFound, self.make_cell, 'cell1',
                          zone_uuid=uuidutils.generate_uuid())
        self.assertEqual([], CellMapping.get_all(self.ctx))

    def test_update_moves_a_cell_in_and_out_of_a_zone(self):
        zone = zone_obj.create(self.ctx, 'az1')
        cell = self.make_cell('cell1')
        cell.update(self.ctx, zone_uuid=zone.uuid)
        self.assertEqual(zone.uuid, CellMapping.get_by_uuid(
            self.ctx, cell.uuid).zone_uuid)
        cell.update(self.ctx, zone_uuid=None)
        self.assertIsNone(cell.zone_uuid)
        self.assertIsNone(CellMapping.get_by_uuid(
            self.ctx, cell.uuid).zone_uuid)

    def test_update_to_an_unknown_zone_changes_nothing(self):
        zone = zone_obj.create(self.ctx, 'az1')
        cell = self.make_cell('cell1', zone_uuid=zone.uuid)
        self.assertRaises(exception.ZoneNotFound, cell.update, self.ctx,
                          name='renamed', zone_uuid=uuidutils.generate_uuid())
        stored = CellMapping.get_by_uuid(self.ctx, cell.uuid)
        self.assertEqual(('cell1', zone.uuid), (stored.name,
                                                stored.zone_uuid))

    def test_cell0_is_never_put_in_a_zone(self):
        zone = zone_obj.create(self.ctx, 'az1')
        cell0 = self.make_cell('cell0', uuid=cell_mapping.CELL0_UUID)
        exc = self.assertRaises(exception.Invalid, cell0.update, self.ctx,
                                zone_uuid=zone.uuid)
        self.assertIn('cell0', str(exc))
        self.assertIsNone(CellMapping.get_by_uuid(
            self.ctx, cell0.uuid).zone_uuid)


class SQLiteZoneTest(_ZoneTests, base.SQLiteMixin,
                     spec_base.ObjectTestCase):
    pass


class MySQLZoneTest(_ZoneTests, base.MySQLMixin, spec_base.ObjectTestCase):
    pass


class PostgreSQLZoneTest(_ZoneTests, base.PostgreSQLMixin,
                         spec_base.ObjectTestCase):
    pass


class SQLiteCellZoneTest(_CellZoneTests, base.SQLiteMixin,
                         spec_base.ObjectTestCase):
    pass


class MySQLCellZoneTest(_CellZoneTests, base.MySQLMixin,
                        spec_base.ObjectTestCase):
    pass


class PostgreSQLCellZoneTest(_CellZoneTests, base.PostgreSQLMixin,
                             spec_base.ObjectTestCase):
    pass
