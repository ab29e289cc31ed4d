"""``/os-flows`` over flow rows a compromised cell planted.

A cell writes its own database, where its reschedule flows are. Rows
naming code (``tests.functional.planted``) in cell1's database and in
the flow database are shown as corrupt, and nothing they name runs in
the API process; rows whose values have the wrong type, or whose meta
is not even JSON, are shown too, never answered with a 500.
"""

import sqlalchemy as sa
from taskflow.persistence.backends.sqlalchemy import tables as tf_tables

from cellboot.flowrun import backend as flow_db
from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional import planted

_FLOWS = tf_tables.fetch(sa.MetaData()).flowdetails


class PlantedFlowsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=1))
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        cluster = self.api.cluster
        self.cell_url = cluster.cells[0].database_connection
        self.in_cell = planted.Plants(self.state_path, 'reschedule')
        self.in_flows = planted.Plants(self.state_path, 'boot',
                                       self.in_cell.instance_uuid)
        self.in_cell.plant(self.cell_url)
        self.in_flows.plant(cluster.flow_url)
        self.addCleanup(self.assertEqual, ([], []),
                        (self.in_cell.ran(), self.in_flows.ran()))

    def _corrupt(self, flows):
        return {flow['uuid']: flow['corrupt'] for flow in flows}

    def test_each_planted_flow_is_shown_corrupt_and_runs_nothing(self):
        for plants, where in ((self.in_cell, 'cell cell1'),
                              (self.in_flows, 'flow database')):
            for label, flow_uuid in plants.uuids.items():
                with self.assertLogs('cellboot.flowrun.lookup',
                                     'WARNING') as log:
                    response = self.admin.get(f'/os-flows/{flow_uuid}')
                self.assertEqual(200, response.status_code, response.text)
                flow = response.json()['flow']
                self.assertEqual(
                    (flow_uuid, 'RUNNING', where, []),
                    (flow['uuid'], flow['state'], flow['location'],
                     flow['atoms']))
                self.assertIn(
                    'exfiltrate' if label == 'unknown kind'
                    else f"names factory '{label}'", flow['corrupt'])
                self.assertIn(f'Flow {flow_uuid} in the {where} is corrupt',
                              '\n'.join(log.output))

    def test_the_flows_of_an_instance_list_the_planted_ones_corrupt(self):
        response = self.admin.get(
            f'/os-flows?instance_uuid={self.in_cell.instance_uuid}')
        self.assertEqual(200, response.status_code, response.text)
        corrupt = self._corrupt(response.json()['flows'])
        self.assertEqual(
            set(self.in_cell.uuids.values()) |
            set(self.in_flows.uuids.values()), set(corrupt))
        self.assertNotIn(None, corrupt.values())

    def test_a_real_flow_beside_them_is_not_corrupt(self):
        uuid = self.api.client().boot().json()['server']['id']
        self.api.cluster.wait_for_quiet()
        (flow,) = self.admin.get(
            f'/os-flows?instance_uuid={uuid}').json()['flows']
        detail = self.admin.get(f'/os-flows/{flow["uuid"]}').json()['flow']
        # The boot flow's seven atoms (claim-pool among them).
        self.assertEqual((None, None, 'SUCCESS', 7),
                         (flow['corrupt'], detail['corrupt'],
                          detail['state'], len(detail['atoms'])))

    def _set_meta_text(self, url, flow_uuid, text):
        """Write the meta column as raw text, as a cell's SQL client may."""
        engine = flow_db.get_backend(url).engine
        with engine.begin() as conn:
            conn.execute(sa.text(
                'UPDATE flowdetails SET meta = :meta WHERE uuid = :uuid'),
                {'meta': text, 'uuid': flow_uuid})

    def test_metas_of_the_wrong_shape_are_shown_never_a_500(self):
        system = self.in_cell.uuids['os.system']
        mkdir = self.in_cell.uuids['os.mkdir']
        unknown = self.in_cell.uuids['unknown kind']
        self._set_meta_text(self.cell_url, system, '{"kind": "resch')
        self._set_meta_text(self.cell_url, mkdir, '["kind", "reschedule"]')
        self._set_meta_text(
            self.cell_url, unknown,
            '{"kind": "reschedule", "instance_uuids": 7, "duration": "long",'
            ' "owner": {"a": 1}, "started_at": 12, "resumptions": "x"}')
        response = self.admin.get('/os-flows')
        self.assertEqual(200, response.status_code, response.text)
        corrupt = self._corrupt(response.json()['flows'])
        self.assertEqual(
            ('its meta is not JSON', 'its meta is not a mapping', None),
            (corrupt[system], corrupt[mkdir], corrupt[unknown]))
        for flow_uuid in (system, mkdir, unknown):
            response = self.admin.get(f'/os-flows/{flow_uuid}')
            self.assertEqual(200, response.status_code, response.text)
        flow = response.json()['flow']
        self.assertEqual(([], None, None, None, []),
                         (flow['instance_uuids'], flow['duration'],
                          flow['owner'], flow['started_at'],
                          flow['resumptions']))

    def test_atoms_that_cannot_be_read_make_the_flow_corrupt(self):
        uuid = self.api.client().boot().json()['server']['id']
        self.api.cluster.wait_for_quiet()
        (flow,) = self.admin.get(
            f'/os-flows?instance_uuid={uuid}').json()['flows']
        engine = flow_db.get_backend(self.api.cluster.flow_url).engine
        with engine.begin() as conn:
            conn.execute(sa.text(
                "UPDATE atomdetails SET failure = '{\"version\": 1, "
                "\"exc_type_names\": 5}', results = 'not json' "
                "WHERE parent_uuid = :uuid"), {'uuid': flow['uuid']})
        response = self.admin.get(f'/os-flows/{flow["uuid"]}')
        self.assertEqual(200, response.status_code, response.text)
        detail = response.json()['flow']
        self.assertEqual(([], 'its atoms cannot be read (JSONDecodeError)'),
                         (detail['atoms'], detail['corrupt']))
