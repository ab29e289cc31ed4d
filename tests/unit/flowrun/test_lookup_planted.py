"""Reading planted flow rows on every database: corrupt, nothing run.

``lookup`` reads a flow's meta as text and parses it itself, so that a
row TaskFlow's column type cannot decode is one corrupt flow rather
than a failed listing; this runs that read on SQLite, MariaDB and
PostgreSQL, against rows that name code (``tests.functional.planted``).
"""

import sqlalchemy as sa

from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import kinds
from cellboot.flowrun import lookup
from cellboot.flowrun import schema as flow_schema
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional import planted


class _PlantedLookupTests:

    def setUp(self):
        super().setUp()
        self.url = self.useFixture(cb_fixtures.Database(
            self.BACKEND, reuse='flows')).url
        flow_schema.sync_tables(self.url)
        self.addCleanup(flow_db.reset)
        self.plants = planted.Plants(self.state_path, 'boot')
        self.plants.plant(self.url)
        self.plants.plant_meta(self.url, 'boot', {'kind': 'boot'})
        self.addCleanup(self.assertEqual, [], self.plants.ran())

    def test_the_planted_rows_are_found_corrupt_by_instance(self):
        found = lookup.find_flows(self.url,
                                  instance_uuid=self.plants.instance_uuid,
                                  level=kinds.SUPER)
        self.assertEqual(
            {self.plants.uuids['os.system']:
                "it names factory 'os.system', which is none of cellboot's",
             self.plants.uuids['os.mkdir']:
                "it names factory 'os.mkdir', which is none of cellboot's",
             self.plants.uuids['unknown kind']:
                "its kind 'exfiltrate' is none that cellboot runs (boot, "
                "cross-cell, reschedule)",
             self.plants.uuids['boot']: None},
            {flow['uuid']: flow['corrupt'] for flow in found})

    def test_a_planted_row_is_shown_with_its_meta_and_no_atoms(self):
        flow = lookup.get_flow(self.url, self.plants.uuids['os.system'],
                               level=kinds.SUPER)
        self.assertEqual(
            ('RUNNING', [], 'os.system', [self.plants.instance_uuid]),
            (flow['state'], flow['atoms'], flow['meta']['factory']['name'],
             flow['instance_uuids']))
        self.assertIn('os.system', flow['corrupt'])

    def test_a_boot_flow_is_corrupt_where_cells_keep_their_flows(self):
        (flow,) = [flow for flow in lookup.find_flows(self.url,
                                                      level=kinds.CELL)
                   if flow['uuid'] == self.plants.uuids['boot']]
        self.assertIn('a boot flow is run by the super conductors',
                      flow['corrupt'])


class _TextMetaTests(_PlantedLookupTests):
    """Where the meta column is text, it may hold what is not JSON."""

    def test_a_meta_that_is_not_json_is_one_corrupt_flow(self):
        engine = flow_db.get_backend(self.url).engine
        with engine.begin() as conn:
            conn.execute(sa.text(
                'UPDATE flowdetails SET meta = :meta WHERE uuid = :uuid'),
                {'meta': '{"kind": "boot", "factory": ',
                 'uuid': self.plants.uuids['boot']})
        found = {flow['uuid']: flow['corrupt']
                 for flow in lookup.find_flows(self.url)}
        self.assertEqual((4, 'its meta is not JSON'),
                         (len(found), found[self.plants.uuids['boot']]))


class SQLitePlantedLookupTest(_TextMetaTests, base.SQLiteMixin,
                              base.TestCase):
    pass


class MySQLPlantedLookupTest(_TextMetaTests, base.MySQLMixin,
                             base.TestCase):
    pass


class PostgreSQLPlantedLookupTest(_PlantedLookupTests, base.PostgreSQLMixin,
                                  base.TestCase):
    pass
