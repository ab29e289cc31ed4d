"""Bad input: one ERROR line, a non-zero exit, no traceback, no writes."""

import os
import textwrap

from tests import base as test_base
from tests.functional.cmd import base

UNKNOWN_UUID = '9d4c4bd5-57a7-4c55-9c1f-7b1cfa2a7c0e'


class _BadDatabaseInputTests:
    """Refusals that need the API database: checked on every backend."""

    def setUp(self):
        super().setUp()
        self.cell = self.map_cell1()
        self.before = self.api_snapshot()

    def assertNothingWritten(self):
        self.assertEqual(self.before, self.api_snapshot())

    def create_cell(self, *args):
        return self.manage('cell_v2', 'create_cell', *args)

    def test_create_cell_with_a_malformed_database_url(self):
        result = self.create_cell('--name', 'cell2', '--database_connection',
                                  'not a url', '--transport-url',
                                  base.CELL2_RABBIT_URL)
        self.assertOneLineError(result, 1, 'Invalid database URL')
        self.assertNothingWritten()

    def test_create_cell_with_an_unreachable_database(self):
        result = self.create_cell('--name', 'cell2', '--database_connection',
                                  base.DEAD_DATABASE_URL, '--transport-url',
                                  base.CELL2_RABBIT_URL)
        self.assertOneLineError(result, 1, 'Cannot use database',
                                '127.0.0.1:1')
        self.assertNotIn(base.DEAD_PASSWORD, result.stderr)
        self.assertNothingWritten()

    def test_create_cell_with_a_duplicate_name_exits_2(self):
        result = self.create_cell('--name', 'cell1', '--database_connection',
                                  self.cell0_url, '--transport-url',
                                  base.CELL2_RABBIT_URL)
        self.assertOneLineError(result, 2, 'cell1', 'already exists')
        self.assertNothingWritten()

    def test_create_cell_named_cell0_exits_2(self):
        result = self.create_cell('--name', 'cell0', '--database_connection',
                                  self.cell0_url, '--transport-url',
                                  base.CELL2_RABBIT_URL)
        self.assertOneLineError(result, 2, 'cell0')
        self.assertNothingWritten()

    def test_create_cell_on_the_database_of_another_cell_exits_2(self):
        result = self.create_cell('--name', 'cell2', '--database_connection',
                                  self.cell1_url, '--transport-url',
                                  base.CELL2_RABBIT_URL)
        self.assertOneLineError(result, 2, 'cell1', 'database')
        self.assertNothingWritten()

    def test_create_cell_with_an_unknown_transport(self):
        result = self.create_cell('--name', 'cell2', '--database_connection',
                                  self.cell0_url, '--transport-url',
                                  'carrier-pigeon://coop/')
        self.assertOneLineError(result, 1, 'Invalid transport URL', 'rabbit')
        self.assertNothingWritten()

    def test_create_cell_with_a_transport_url_without_scheme(self):
        result = self.create_cell('--name', 'cell2', '--database_connection',
                                  self.cell0_url, '--transport-url',
                                  'guest:guest@127.0.0.1:5672')
        self.assertOneLineError(result, 1, 'Invalid transport URL')
        self.assertNotIn('guest:guest', result.stderr)
        self.assertNothingWritten()

    def test_map_cell0_with_an_unreachable_database(self):
        result = self.manage('cell_v2', 'map_cell0', '--database_connection',
                             base.DEAD_DATABASE_URL)
        self.assertOneLineError(result, 1, 'Cannot use database')
        self.assertNotIn(base.DEAD_PASSWORD, result.stderr)
        self.assertNothingWritten()

    def test_delete_cell_with_an_unknown_uuid(self):
        result = self.manage('cell_v2', 'delete_cell', '--cell_uuid',
                             UNKNOWN_UUID)
        self.assertOneLineError(result, 1, UNKNOWN_UUID, 'does not exist')
        self.assertNothingWritten()

    def test_discover_hosts_in_an_unknown_cell(self):
        result = self.manage('cell_v2', 'discover_hosts', '--cell_uuid',
                             'nowhere')
        self.assertOneLineError(result, 1, 'nowhere', 'does not exist')
        self.assertNothingWritten()

    def test_an_unreachable_api_database(self):
        config = self.write_config(name='dead.conf',
                                   api_url=base.DEAD_DATABASE_URL)
        result = self.manage('cell_v2', 'list_cells', config_file=config)
        self.assertOneLineError(result, 1, 'database')
        self.assertNotIn(base.DEAD_PASSWORD, result.stderr)


class _EmptyApiDatabaseTests:

    EMPTY_DATABASES = True

    def test_a_command_before_db_sync_says_to_run_it(self):
        result = self.manage('cell_v2', 'list_cells')
        self.assertOneLineError(result, 1, 'db sync')


class SQLiteBadDatabaseInputTest(_BadDatabaseInputTests,
                                 test_base.SQLiteMixin, base.ManageTestCase):
    pass


class MySQLBadDatabaseInputTest(_BadDatabaseInputTests, test_base.MySQLMixin,
                                base.ManageTestCase):
    pass


class SQLiteEmptyApiDatabaseTest(_EmptyApiDatabaseTests,
                                 test_base.SQLiteMixin, base.ManageTestCase):
    pass


class MySQLEmptyApiDatabaseTest(_EmptyApiDatabaseTests, test_base.MySQLMixin,
                                base.ManageTestCase):
    pass


class PostgreSQLEmptyApiDatabaseTest(_EmptyApiDatabaseTests,
                                     test_base.PostgreSQLMixin,
                                     base.ManageTestCase):
    pass


class BadCommandLineTest(base.ManageTestCase):
    """Refused before any database is reached, so SQLite is enough."""

    def setUp(self):
        super().setUp()
        self.before = self.api_snapshot()

    def tearDown(self):
        self.assertEqual(self.before, self.api_snapshot())
        super().tearDown()

    def test_a_missing_config_file(self):
        missing = os.path.join(self.state_path, 'missing.conf')
        result = self.manage('cell_v2', 'list_cells', config_file=missing)
        self.assertOneLineError(result, 1, 'not found', missing)

    def test_a_config_file_that_does_not_parse(self):
        path = os.path.join(self.state_path, 'broken.conf')
        with open(path, 'w') as conf:
            conf.write('[DEFAULT\nstate_path = /tmp\n')
        result = self.manage('cell_v2', 'list_cells', config_file=path)
        self.assertOneLineError(result, 1, 'configuration')

    def test_a_non_integer_vcpus(self):
        result = self.manage('flavor', 'create', 'm1', '--vcpus', 'two',
                             '--ram', '512', '--disk', '1')
        self.assertOneLineError(result, 2, '--vcpus', "'two'")

    def test_a_missing_required_option(self):
        result = self.manage('cell_v2', 'create_cell')
        self.assertOneLineError(result, 2, '--name')

    def test_an_unknown_command(self):
        result = self.manage('cell_v2', 'frobnicate')
        self.assertOneLineError(result, 2, 'frobnicate')

    def test_no_command_at_all(self):
        result = self.manage()
        self.assertOneLineError(result, 2, 'GROUP')


# Replaces a command's handler with one that fails as no command should,
# then runs cellboot-manage's main() on the remaining arguments.
_BROKEN_COMMAND = textwrap.dedent("""\
    import sys
    from cellboot.cmd import manage

    def broken(context, args):
        raise RuntimeError('something nobody foresaw')

    manage.flavor.list_flavors = broken
    sys.exit(manage.main(sys.argv[1:]))
    """)


class UnexpectedErrorTest(base.ManageTestCase):

    def test_an_unexpected_error_is_one_line_pointing_at_debug(self):
        result = base.run_python(_BROKEN_COMMAND, '--config-file',
                                 self.config_file, 'flavor', 'list')
        self.assertOneLineError(result, 255, 'RuntimeError',
                                'something nobody foresaw', '--debug')

    def test_debug_shows_the_traceback_of_an_unexpected_error(self):
        result = base.run_python(_BROKEN_COMMAND, '--config-file',
                                 self.config_file, '--debug', 'flavor',
                                 'list')
        self.assertEqual(255, result.code, result)
        self.assertIn('Traceback', result.stderr)
        self.assertIn('something nobody foresaw', result.stderr)
