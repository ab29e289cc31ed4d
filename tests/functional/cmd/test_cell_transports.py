"""``cell_v2 create_cell``: a cell gets a bus of its own, unless told.

What a request to the scheduler may touch is decided by the bus it
arrives on, so a cell mapped onto the API's bus, or onto another cell's,
would not be confined. ``create_cell`` refuses both, comparing buses
rather than strings (other credentials, a host alias, the default port
or vhost spelt out are the same bus), with one ERROR line, exit code 2
and nothing written; ``--allow-shared-transport`` says the operator
accepts it.
"""

from cellboot.objects import cell_mapping
from tests import base as test_base
from tests.functional.cmd import base

CellMapping = cell_mapping.CellMapping

API_URL = 'rabbit://guest:guest@127.0.0.1:5672/api'
# The API's bus, written otherwise.
API_URL_SPELLINGS = (
    'rabbit://cell:other-secret@127.0.0.1/api',
    'rabbit://guest:guest@LOCALHOST:5672/api?heartbeat=30',
    'rabbit://guest:guest@mq.invalid:5672,guest:guest@127.0.0.1/api',
)
CELL1_URL = 'rabbit://guest:guest@127.0.0.1:5672/cell1'


class _CreateCellBusTests:

    def setUp(self):
        super().setUp()
        self.config_file = self.write_config(extra=f"""
            [DEFAULT]
            transport_url = {API_URL}
            """)

    def create_cell(self, name, transport_url, *extra):
        return self.manage('cell_v2', 'create_cell', '--name', name,
                           '--database_connection', self.cell1_url,
                           '--transport-url', transport_url, *extra)

    def assertRefusedAsShared(self, result, *fragments):
        self.assertOneLineError(result, 2, '--allow-shared-transport',
                                *fragments)
        self.assertNotIn('secret', result.stderr)

    def test_the_api_transport_is_refused(self):
        before = self.api_snapshot()

        result = self.create_cell('cell1', API_URL)

        self.assertRefusedAsShared(result, 'the API level',
                                   'guest:***@127.0.0.1:5672/api')
        self.assertEqual(before, self.api_snapshot())

    def test_the_api_transport_written_otherwise_is_refused(self):
        before = self.api_snapshot()
        for url in API_URL_SPELLINGS:
            with self.subTest(url=url):
                self.assertRefusedAsShared(self.create_cell('cell1', url),
                                           'the API level')
        self.assertEqual(before, self.api_snapshot())

    def test_another_cells_transport_is_refused(self):
        cell1 = self.map_cell1(url=self.cell0_url, transport_url=CELL1_URL)
        before = self.api_snapshot()

        result = self.create_cell(
            'cell2', 'rabbit://cell2:secret@localhost/cell1')

        self.assertRefusedAsShared(result, f'cell cell1 ({cell1.uuid})')
        self.assertEqual(before, self.api_snapshot())

    def test_a_vhost_of_its_own_is_accepted(self):
        self.map_cell1(url=self.cell0_url, transport_url=CELL1_URL)

        result = self.create_cell(
            'cell2', 'rabbit://guest:guest@127.0.0.1:5672/cell2')

        self.assertSucceeded(result)
        self.assertEqual('rabbit://guest:guest@127.0.0.1:5672/cell2',
                         CellMapping.get_by_name(self.context,
                                                 'cell2').transport_url)

    def test_allow_shared_transport_maps_the_api_transport(self):
        result = self.create_cell('cell1', API_URL,
                                  '--allow-shared-transport')

        self.assertSucceeded(result)
        self.assertEqual(API_URL, CellMapping.get_by_name(
            self.context, 'cell1').transport_url)

    def test_allow_shared_transport_maps_another_cells_transport(self):
        self.map_cell1(url=self.cell0_url, transport_url=CELL1_URL)

        result = self.create_cell('cell2', CELL1_URL,
                                  '--allow-shared-transport')

        self.assertSucceeded(result)
        self.assertEqual(CELL1_URL, CellMapping.get_by_name(
            self.context, 'cell2').transport_url)


class SQLiteCreateCellBusTest(_CreateCellBusTests, test_base.SQLiteMixin,
                              base.ManageTestCase):
    pass


class MySQLCreateCellBusTest(_CreateCellBusTests, test_base.MySQLMixin,
                             base.ManageTestCase):
    pass
