"""``cellboot-manage db sync`` and ``db version`` on empty databases."""

import sqlalchemy as sa

from cellboot.db.api import models as api_models
from cellboot.db.cell import models as cell_models
from cellboot.db import migration
from tests import base as test_base
from tests.functional.cmd import base


def table_names(url):
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def schema_state(url):
    """Tables, columns and recorded revisions: what a re-sync could change."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        inspector = sa.inspect(engine)
        state = {table: sorted(col['name']
                               for col in inspector.get_columns(table))
                 for table in inspector.get_table_names()}
        with engine.connect() as conn:
            for table in list(state):
                if table.endswith('alembic_version'):
                    state[table + ' rows'] = sorted(
                        tuple(row) for row in conn.execute(
                            sa.text(f'SELECT * FROM {table}')))
        return state
    finally:
        engine.dispose()


class _DbSyncTests:

    EMPTY_DATABASES = True

    def test_sync_creates_the_api_and_flow_databases(self):
        result = self.manage('db', 'sync')
        self.assertSucceeded(result)
        self.assertIn('Synced the API database', result.stdout)
        self.assertIn('Synced the flow database', result.stdout)
        self.assertIn('cell_mappings', table_names(self.api_url))
        self.assertIn(api_models.VERSION_TABLE, table_names(self.api_url))
        self.assertIn('logbooks', table_names(self.flow_url))

    def test_sync_migrates_every_mapped_cell_database_with_flow_tables(self):
        self.assertSucceeded(self.manage('db', 'sync'))
        self.map_cell0()
        self.map_cell1()
        result = self.manage('db', 'sync')
        self.assertSucceeded(result)
        self.assertIn('Synced the cell cell0', result.stdout)
        self.assertIn('Synced the cell cell1', result.stdout)
        for url in (self.cell0_url, self.cell1_url):
            tables = table_names(url)
            self.assertIn('compute_nodes', tables)
            self.assertIn(cell_models.VERSION_TABLE, tables)
            self.assertIn('logbooks', tables)

    def test_sync_prints_one_line_per_database(self):
        self.assertSucceeded(self.manage('db', 'sync'))
        self.map_cell0()
        self.map_cell1()
        result = self.manage('db', 'sync')
        self.assertEqual(4, len(result.stdout.splitlines()), result)

    def test_sync_twice_changes_nothing(self):
        self.assertSucceeded(self.manage('db', 'sync'))
        self.map_cell0()
        self.map_cell1()
        first = self.manage('db', 'sync')
        urls = (self.api_url, self.flow_url, self.cell0_url, self.cell1_url)
        before = [schema_state(url) for url in urls]
        api_rows = self.api_snapshot()
        second = self.manage('db', 'sync')
        self.assertSucceeded(second)
        self.assertEqual(first.stdout, second.stdout)
        self.assertEqual(before, [schema_state(url) for url in urls])
        self.assertEqual(api_rows, self.api_snapshot())

    def test_sync_never_prints_a_password(self):
        self.assertSucceeded(self.manage('db', 'sync'))
        self.map_cell1()
        result = self.manage('db', 'sync')
        for url in (self.api_url, self.cell1_url):
            password = sa.engine.make_url(url).password
            if password:
                self.assertNotIn(f':{password}@', result.stdout)

    def test_sync_reports_a_cell_that_is_down_and_syncs_the_others(self):
        self.assertSucceeded(self.manage('db', 'sync'))
        self.map_cell1()
        self.map_cell1(name='dead', url=base.DEAD_DATABASE_URL)
        result = self.manage('db', 'sync')
        self.assertOneLineError(result, 1, 'cell dead', '127.0.0.1:1')
        self.assertNotIn(base.DEAD_PASSWORD, result.stderr)
        self.assertIn('compute_nodes', table_names(self.cell1_url))

    def test_local_cell_syncs_only_the_local_cell_database(self):
        result = self.manage('db', 'sync', '--local_cell')
        self.assertSucceeded(result)
        self.assertIn('compute_nodes', table_names(self.cell1_url))
        self.assertIn('logbooks', table_names(self.cell1_url))
        self.assertEqual(set(), table_names(self.api_url))

    def test_version_prints_the_revision_of_each_database(self):
        self.assertSucceeded(self.manage('db', 'sync'))
        self.map_cell1()
        self.assertSucceeded(self.manage('db', 'sync'))
        result = self.manage('db', 'version')
        self.assertSucceeded(result)
        api_line, cell_line = result.stdout.splitlines()
        self.assertTrue(api_line.endswith(
            ': ' + migration.db_version('api', self.api_url)), result)
        self.assertTrue(cell_line.endswith(
            ': ' + migration.db_version('cell', self.cell1_url)), result)

    def test_version_says_when_a_cell_is_not_synced_yet(self):
        self.assertSucceeded(self.manage('db', 'sync'))
        self.map_cell1()
        result = self.manage('db', 'version')
        self.assertSucceeded(result)
        self.assertIn('cell1', result.stdout.splitlines()[1])
        self.assertIn('not synced yet', result.stdout.splitlines()[1])


class SQLiteDbSyncTest(_DbSyncTests, test_base.SQLiteMixin,
                       base.ManageTestCase):
    pass


class MySQLDbSyncTest(_DbSyncTests, test_base.MySQLMixin,
                      base.ManageTestCase):
    pass


class PostgreSQLDbSyncTest(_DbSyncTests, test_base.PostgreSQLMixin,
                           base.ManageTestCase):
    pass
