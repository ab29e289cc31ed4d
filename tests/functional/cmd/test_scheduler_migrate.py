"""``cellboot-manage scheduler migrate_to_cells``, and ``db sync``'s notice.

A deployment made before the cell schedulers is prepared in-process
(providers, inventories and allocations written into the API database's
tables, as the old schedulers left them); the move is a real
``cellboot-manage`` process, whose exit code, stdout and stderr are
checked with what it left in the databases.
"""

import sqlalchemy as sa

from cellboot.db.api import models as api_models
from cellboot.db.cell import models as cell_models
from cellboot.scheduler.resources import providers as providers_api
from cellboot import context as cb_context
from tests import base as test_base
from tests.functional.cmd import base
from tests.functional.scheduler import test_migrate_to_cells as moves

NOTICE = ('still in the API database: run "cellboot-manage scheduler '
          'migrate_to_cells" (with the schedulers stopped) to move them to '
          "their cells' databases.")


def count(url, table):
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(
                table)).scalar()
    finally:
        engine.dispose()


class _Deployment:
    """Helpers: providers in the API database, rows counted anywhere."""

    def add_providers(self, cell, number, consumers=2):
        engine = sa.create_engine(self.api_url, poolclass=sa.pool.NullPool)
        try:
            return [moves.insert_api_provider(
                engine, cell.id if cell is not None else None,
                consumers=consumers)[0] for _ in range(number)]
        finally:
            engine.dispose()

    def api_providers(self):
        return count(self.api_url, api_models.ResourceProvider.__table__)

    def cell_allocations(self, url):
        return count(url, cell_models.Allocation.__table__)

    def migrate(self, *extra):
        return self.manage('scheduler', 'migrate_to_cells', *extra)

    def assertNoErrors(self, result):
        self.assertSucceeded(result)
        self.assertNotIn('ERROR', result.stderr, result)


class _MigrateCommandTests(_Deployment):

    def setUp(self):
        super().setUp()
        self.cell1 = self.map_cell1()

    def test_help_says_to_stop_the_schedulers_and_lists_exit_codes(self):
        result = base.run('scheduler', 'migrate_to_cells', '--help')
        self.assertEqual(0, result.code, result)
        text = ' '.join(result.stdout.split())
        for fragment in ('the super conductors and the API stopped',
                         'compute hosts may keep running',
                         'Safe to run again and to interrupt',
                         '--batch N', 'exit codes:',
                         '1 a cell database could not be reached'):
            self.assertIn(fragment, text)

    def test_moves_every_cell_and_prints_a_line_per_cell(self):
        cell2 = self.map_cell1(name='cell2', url=self._database('cell'))
        self.add_providers(self.cell1, 2, consumers=3)
        self.add_providers(cell2, 1)
        result = self.migrate()
        self.assertNoErrors(result)
        self.assertEqual('', result.stderr)
        self.assertEqual([
            f'cell cell1 ({self.cell1.uuid}): moved 2 of 2 resource '
            f'provider(s), 6 inventories, 18 allocation(s)',
            f'cell cell2 ({cell2.uuid}): moved 1 of 1 resource '
            f'provider(s), 3 inventories, 6 allocation(s)',
            'Moved 3 resource provider(s) and 24 allocation(s) into 2 '
            'cell(s); none left in the API database'],
            result.stdout.splitlines())
        self.assertEqual(0, self.api_providers())
        self.assertEqual(18, self.cell_allocations(self.cell1_url))
        self.assertEqual(6, self.cell_allocations(cell2.database_connection))

    def test_second_run_moves_nothing(self):
        self.add_providers(self.cell1, 2)
        self.assertNoErrors(self.migrate())
        result = self.migrate()
        self.assertNoErrors(result)
        self.assertEqual([
            f'cell cell1 ({self.cell1.uuid}): nothing to move',
            'Moved 0 resource provider(s) and 0 allocation(s) into 1 '
            'cell(s); none left in the API database'],
            result.stdout.splitlines())
        self.assertEqual(12, self.cell_allocations(self.cell1_url))

    def test_a_cell_of_many_batches_prints_progress_on_stderr(self):
        self.add_providers(self.cell1, 3)
        result = self.migrate('--batch', '2')
        self.assertNoErrors(result)
        self.assertEqual([
            f'cell cell1 ({self.cell1.uuid}): 2 of 3 resource provider(s) '
            f'moved so far',
            f'cell cell1 ({self.cell1.uuid}): 3 of 3 resource provider(s) '
            f'moved so far'], result.stderr_lines)
        self.assertIn('moved 3 of 3', result.stdout)

    def test_a_bad_batch_is_a_usage_error(self):
        result = self.migrate('--batch', '0')
        self.assertOneLineError(result, 2, '--batch')

    def test_a_cell_that_is_down_exits_1_and_the_others_are_moved(self):
        self.add_providers(self.cell1, 1)
        dead = self.map_cell1(name='dead', url=base.DEAD_DATABASE_URL)
        self.add_providers(dead, 2)
        result = self.migrate()
        self.assertOneLineError(
            result, 1, f'cell dead ({dead.uuid})', '127.0.0.1:1',
            '2 of its resource provider(s) were left in the API database')
        self.assertNotIn(base.DEAD_PASSWORD, result.stdout + result.stderr)
        self.assertIn(f'cell cell1 ({self.cell1.uuid}): moved 1 of 1',
                      result.stdout)
        self.assertIn('2 host resource provider(s) left in the API database',
                      result.stdout)
        self.assertEqual(2, self.api_providers())

    def test_a_name_taken_in_the_cell_exits_1_and_names_both(self):
        [moved] = self.add_providers(self.cell1, 1)
        other = '0b7a3f52-8a0a-4b55-9a39-3c5b4a0a1e01'
        with cb_context.target_cell(self.context, self.cell1) as cctxt:
            name = 'taken-host'
            providers_api.update_provider(cctxt, other, name,
                                          {'VCPU': {'total': 4}})
        engine = sa.create_engine(self.api_url, poolclass=sa.pool.NullPool)
        try:
            skipped, _rows = moves.insert_api_provider(engine, self.cell1.id,
                                                       name=name)
        finally:
            engine.dispose()
        result = self.migrate()
        self.assertOneLineError(result, 1, skipped, other, name,
                                'left in the API database')
        self.assertIn('moved 1 of 2', result.stdout)
        self.assertEqual(1, self.api_providers())

    def test_providers_without_a_cell_are_warned_of_and_exit_0(self):
        self.add_providers(self.cell1, 1)
        [orphan] = self.add_providers(None, 1)
        result = self.migrate()
        self.assertSucceeded(result)
        self.assertEqual(1, len(result.stderr_lines), result)
        self.assertTrue(result.stderr_lines[0].startswith('WARNING: '))
        self.assertIn(orphan, result.stderr)
        self.assertIn('has no cell', result.stderr)
        self.assertIn('1 host resource provider(s) left in the API database',
                      result.stdout)


class _SyncNoticeTests(_Deployment):

    EMPTY_DATABASES = True

    def test_sync_says_what_is_left_until_it_is_moved(self):
        self.assertNoErrors(self.manage('db', 'sync'))
        cell1 = self.map_cell1()
        result = self.manage('db', 'sync')
        self.assertNoErrors(result)
        self.assertNotIn('API database: run', result.stdout)
        self.add_providers(cell1, 2)
        result = self.manage('db', 'sync')
        self.assertNoErrors(result)
        self.assertEqual(
            f'2 compute host resource providers are {NOTICE}',
            result.stdout.splitlines()[-1])
        self.assertNoErrors(self.migrate())
        result = self.manage('db', 'sync')
        self.assertNoErrors(result)
        self.assertNotIn(NOTICE, result.stdout)

    def test_a_cell_not_synced_yet_is_reported(self):
        self.assertNoErrors(self.manage('db', 'sync'))
        cell1 = self.map_cell1()
        self.add_providers(cell1, 1)
        result = self.migrate()
        self.assertOneLineError(result, 1, 'cell1',
                                'run `cellboot-manage db sync` first')
        self.assertEqual(1, self.api_providers())


class SQLiteMigrateCommandTest(_MigrateCommandTests, test_base.SQLiteMixin,
                               base.ManageTestCase):
    pass


class MySQLMigrateCommandTest(_MigrateCommandTests, test_base.MySQLMixin,
                              base.ManageTestCase):
    pass


class SQLiteSyncNoticeTest(_SyncNoticeTests, test_base.SQLiteMixin,
                           base.ManageTestCase):
    pass


class MySQLSyncNoticeTest(_SyncNoticeTests, test_base.MySQLMixin,
                          base.ManageTestCase):
    pass


class PostgreSQLSyncNoticeTest(_SyncNoticeTests, test_base.PostgreSQLMixin,
                               base.ManageTestCase):
    pass
