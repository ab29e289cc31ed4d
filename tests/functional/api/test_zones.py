"""``/os-zones``: the zone tree over HTTP, each zone with its aggregate."""

import datetime

from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.api import models
from cellboot.objects import zone as zone_obj
from tests import base
from tests.functional.api import fixtures as api_fixtures


class ZonesTest(base.TestCase):
    """region1 holds az1 (which holds cell1) and cell2; empty is empty."""

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=2,
                                                          hosts_per_cell=2))
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        ctx = self.api.cluster.ctx
        self.region = zone_obj.create(ctx, 'region1')
        self.az = zone_obj.create(ctx, 'az1', parent='region1')
        self.empty = zone_obj.create(ctx, 'empty')
        cluster = self.api.cluster
        self.cell1 = cluster.cell_by_name('cell1')
        self.cell2 = cluster.cell_by_name('cell2')
        self.cell1.update(ctx, zone_uuid=self.az.uuid)
        self.cell2.update(ctx, zone_uuid=self.region.uuid)
        for scheduler in cluster.cell_schedulers.values():
            scheduler.publisher.publish_now()

    def zones(self):
        response = self.admin.get('/os-zones')
        self.assertEqual(200, response.status_code, response.text)
        return {zone['name']: zone for zone in response.json()['zones']}

    def test_zones_are_listed_by_name_with_what_they_hold(self):
        zones = self.zones()
        self.assertEqual(['az1', 'empty', 'region1'], sorted(zones))
        self.assertEqual(
            {'az1': (self.region.uuid, [self.cell1.uuid], []),
             'empty': (None, [], []),
             'region1': (None, [self.cell2.uuid], [self.az.uuid])},
            {name: (zone['parent_id'], zone['cells'], zone['zones'])
             for name, zone in zones.items()})

    def test_a_zones_aggregate_is_that_of_the_cells_below_it(self):
        cells = {cell['name']: cell.get('aggregate') for cell in
                 self.admin.get('/os-cells').json()['cells']}
        zones = self.zones()
        region = zones['region1']['aggregate']
        self.assertEqual(
            (cells['cell1']['hosts'] + cells['cell2']['hosts'],
             cells['cell1']['resources']['VCPU']['capacity']
             + cells['cell2']['resources']['VCPU']['capacity']),
            (region['hosts'], region['resources']['VCPU']['capacity']))
        self.assertEqual(cells['cell1']['resources'],
                         zones['az1']['aggregate']['resources'])
        self.assertIsNone(zones['empty']['aggregate'])

    def test_a_disabled_or_stale_cell_adds_nothing_to_its_zone(self):
        # What the scheduler may send requests to, no more: a disabled
        # cell takes none, nor one whose schedulers stopped publishing.
        ctx = self.api.cluster.ctx
        cell1_only = self.zones()['az1']['aggregate']
        self.cell2.update(ctx, disabled=True)
        self.assertEqual(cell1_only['resources'],
                         self.zones()['region1']['aggregate']['resources'])
        self.cell2.update(ctx, disabled=False)
        self.flags(aggregate_max_age=60, group='scheduler')
        timeutils.set_time_override(timeutils.utcnow()
                                    + datetime.timedelta(seconds=61))
        self.addCleanup(timeutils.clear_time_override)
        zones = self.zones()
        self.assertEqual((None, None), (zones['region1']['aggregate'],
                                        zones['az1']['aggregate']))
        self.assertEqual([self.cell1.uuid], zones['az1']['cells'])

    def test_a_zone_is_shown_by_uuid_or_name(self):
        by_uuid = self.admin.get(f'/os-zones/{self.az.uuid}')
        by_name = self.admin.get('/os-zones/az1')
        self.assertEqual((200, 200), (by_uuid.status_code,
                                      by_name.status_code))
        self.assertEqual(by_uuid.json(), by_name.json())
        self.assertEqual(self.zones()['az1'], by_uuid.json()['zone'])

    def test_cells_show_their_zone(self):
        cells = {cell['name']: cell['zone'] for cell in
                 self.admin.get('/os-cells').json()['cells']}
        self.assertEqual({'cell0': None, 'cell1': self.az.uuid,
                          'cell2': self.region.uuid}, cells)

    def test_zones_are_paged(self):
        first = self.admin.get('/os-zones?limit=2').json()
        self.assertEqual(['az1', 'empty'],
                         [zone['name'] for zone in first['zones']])
        following = first['zones_links'][0]['href']
        self.assertIn(f'marker={self.empty.uuid}', following)
        rest = self.admin.get(
            f'/os-zones?limit=2&marker={self.empty.uuid}').json()
        self.assertEqual(['region1'], [zone['name']
                                       for zone in rest['zones']])
        self.assertNotIn('zones_links', rest)

    # -- hostile -------------------------------------------------------------

    def test_a_user_is_refused_403_on_every_zone_path(self):
        for path in ('/os-zones', f'/os-zones/{self.az.uuid}',
                     '/os-zones/nope'):
            response = self.alice.get(path)
            self.assertEqual(403, response.status_code, path)

    def test_an_unknown_zone_is_404_naming_it(self):
        for ident in ('nope', uuidutils.generate_uuid()):
            response = self.admin.get(f'/os-zones/{ident}')
            self.assertEqual(404, response.status_code, ident)
            self.assertIn(f'Zone {ident} could not be found',
                          response.text)

    def test_bad_limits_and_markers_are_400(self):
        for query in ('limit=0', 'limit=-1', 'limit=x', 'limit=' + '9' * 30,
                      'marker=' + 'm' * 300,
                      f'marker={uuidutils.generate_uuid()}'):
            response = self.admin.get(f'/os-zones?{query}')
            self.assertEqual(400, response.status_code, query)
            self.assertNotIn('Traceback', response.text)

    def test_odd_zone_ids_in_the_path_are_404(self):
        for ident in ('%07bell', 'x' * 300, '%20region1', 'region1%20'):
            response = self.admin.get(f'/os-zones/{ident}')
            self.assertIn(response.status_code, (400, 404), ident)
            self.assertNotIn('Traceback', response.text)

    def test_a_cycle_edited_into_the_rows_does_not_hang_the_listing(self):
        zones = models.Zone.__table__
        engine = sa.create_engine(self.api.cluster.api_url)
        self.addCleanup(engine.dispose)
        with engine.begin() as conn:
            region_id = conn.execute(sa.select(zones.c.id).where(
                zones.c.uuid == self.region.uuid)).scalar()
            az_id = conn.execute(sa.select(zones.c.id).where(
                zones.c.uuid == self.az.uuid)).scalar()
            conn.execute(sa.update(zones).where(
                zones.c.id == region_id).values(parent_id=az_id))
        zones = self.zones()
        self.assertEqual(zones['region1']['aggregate'],
                         zones['az1']['aggregate'])
        self.assertEqual(self.az.uuid, zones['region1']['parent_id'])
