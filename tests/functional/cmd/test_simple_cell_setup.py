"""``cell_v2 simple_cell_setup``: cell0 and a first cell in one command."""

import sqlalchemy as sa

from cellboot import context as cb_context
from cellboot.objects import cell_mapping
from cellboot.objects import compute_node
from cellboot.objects import host_mapping
from tests import base as test_base
from tests.functional.cmd import base
from tests.functional.cmd import test_db


class _SimpleCellSetupTests:

    EMPTY_DATABASES = True

    def setUp(self):
        super().setUp()
        api_url = sa.engine.make_url(self.api_url)
        if self.BACKEND != 'sqlite':
            # cell0's default database, next to the API database's; SQLite
            # creates the file itself.
            self._database(None, name=api_url.database + '_cell0')

    def setup_cells(self, *extra):
        return self.manage('cell_v2', 'simple_cell_setup', '--transport-url',
                           base.RABBIT_URL, *extra)

    def cells(self):
        return {cell.name: cell.database_connection
                for cell in cell_mapping.CellMapping.get_all(self.context)}

    def test_maps_cell0_and_cell1_and_syncs_their_databases(self):
        result = self.setup_cells()
        self.assertSucceeded(result)
        cells = self.cells()
        self.assertEqual(['cell0', 'cell1'], sorted(cells))
        self.assertEqual(self.cell1_url, cells['cell1'])
        for url in cells.values():
            self.assertIn('compute_nodes', test_db.table_names(url))

    def test_running_it_again_keeps_the_cells_and_maps_new_hosts(self):
        self.assertSucceeded(self.setup_cells())
        cell1 = cell_mapping.CellMapping.get_by_name(self.context, 'cell1')
        with cb_context.target_cell(self.context, cell1) as cctxt:
            compute_node.ComputeNode.create(cctxt, 'compute1', 'compute1',
                                            vcpus=4, memory_mb=4096,
                                            local_gb=40)
        result = self.setup_cells()
        self.assertSucceeded(result)
        self.assertIn('Mapped host compute1', result.stdout)
        self.assertEqual(['cell0', 'cell1'], sorted(self.cells()))
        self.assertEqual(['compute1'], [
            mapping.host for mapping in
            host_mapping.HostMapping.get_all(self.context)])

    def test_a_bad_transport_url_maps_nothing(self):
        result = self.manage('cell_v2', 'simple_cell_setup',
                             '--transport-url', 'carrier-pigeon://coop/')
        self.assertOneLineError(result, 1, 'Invalid transport URL')
        self.assertEqual({}, self.cells())

    def _on_the_api_bus(self):
        return self.write_config(name='api-bus.conf', extra=f"""
            [DEFAULT]
            transport_url = {base.RABBIT_URL}
            """)

    def test_the_api_transport_maps_nothing(self):
        result = self.manage('cell_v2', 'simple_cell_setup',
                             '--transport-url',
                             'rabbit://guest:guest@localhost//',
                             config_file=self._on_the_api_bus())
        self.assertOneLineError(result, 1, 'the API level',
                                '--allow-shared-transport')
        self.assertEqual({}, self.cells())

    def test_no_transport_url_maps_nothing(self):
        result = self.manage('cell_v2', 'simple_cell_setup',
                             config_file=self._on_the_api_bus())
        self.assertOneLineError(result, 1, '--transport-url')
        self.assertEqual({}, self.cells())

    def test_allow_shared_transport_maps_cell1_on_the_api_transport(self):
        result = self.manage('cell_v2', 'simple_cell_setup',
                             '--allow-shared-transport',
                             config_file=self._on_the_api_bus())
        self.assertSucceeded(result)
        self.assertEqual(['cell0', 'cell1'], sorted(self.cells()))
        self.assertEqual(base.RABBIT_URL, cell_mapping.CellMapping.get_by_name(
            self.context, 'cell1').transport_url)


class SQLiteSimpleCellSetupTest(_SimpleCellSetupTests, test_base.SQLiteMixin,
                                base.ManageTestCase):
    pass


class MySQLSimpleCellSetupTest(_SimpleCellSetupTests, test_base.MySQLMixin,
                               base.ManageTestCase):
    pass
