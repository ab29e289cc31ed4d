"""The API and cell alembic trees, on SQLite, MariaDB and PostgreSQL.

Each specification runs on an empty database of every backend: the trees
build exactly the models' schema, record their revision in their own
version tables, and can be run again without effect.
"""

import json
import logging
import os
import socket
import threading
import time

import fixtures
import sqlalchemy as sa
from sqlalchemy import pool

from cellboot.db.api import models as api_models
from cellboot.db.cell import models as cell_models
from cellboot.db import migration
from cellboot import exception
from cellboot import masking
from cellboot.flowrun import schema as flow_schema
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional.db.schema import API_HEAD
from tests.functional.db.schema import CELL_HEAD
from tests.functional.db.schema import schema_differences
from tests.functional.db.schema import schema_snapshot
from tests.functional.db.schema import table_names

# The API revision before quotas, whose upgrade fills in mapping sizes.
API_BEFORE_QUOTAS = '55420de898bd'

# A failure to reach a server must be reported well within this (seconds).
FAIL_FAST_SECONDS = 10


class _MigrationTests:
    """Specification of db_sync / db_version on one backend."""

    def setUp(self):
        super().setUp()
        self.url = self.useFixture(cb_fixtures.Database(self.BACKEND)).url

    def test_api_tree_creates_the_api_models_tables(self):
        migration.db_sync('api', self.url)

        self.assertEqual(
            set(api_models.Base.metadata.tables) | {api_models.VERSION_TABLE},
            table_names(self.url))

    def test_cell_tree_creates_the_cell_models_tables(self):
        migration.db_sync('cell', self.url)

        self.assertEqual(
            set(cell_models.Base.metadata.tables)
            | {cell_models.VERSION_TABLE},
            table_names(self.url))

    def test_empty_database_has_no_version(self):
        self.assertIsNone(migration.db_version('api', self.url))

    def test_api_tree_records_head_in_its_own_version_table(self):
        migration.db_sync('api', self.url)

        self.assertEqual(API_HEAD, migration.db_version('api', self.url))
        self.assertNotIn('alembic_version', table_names(self.url))

    def test_cell_tree_records_head_in_its_own_version_table(self):
        migration.db_sync('cell', self.url)

        self.assertEqual(CELL_HEAD, migration.db_version('cell', self.url))
        self.assertNotIn('alembic_version', table_names(self.url))

    def test_trees_share_a_database_without_seeing_each_other(self):
        migration.db_sync('api', self.url)

        self.assertIsNone(migration.db_version('cell', self.url))

    def test_db_sync_twice_changes_nothing(self):
        migration.db_sync('cell', self.url)
        before = schema_snapshot(self.url)

        migration.db_sync('cell', self.url)

        self.assertEqual(before, schema_snapshot(self.url))
        self.assertEqual(CELL_HEAD, migration.db_version('cell', self.url))

    def test_db_sync_upgrades_to_a_named_version(self):
        migration.db_sync('api', self.url, version=API_HEAD)

        self.assertEqual(API_HEAD, migration.db_version('api', self.url))

    def test_unknown_version_is_refused_before_writing(self):
        self.assertRaises(exception.InvalidMigrationVersion,
                          migration.db_sync, 'api', self.url,
                          version='0123456789ab')

        self.assertEqual(set(), table_names(self.url))

    def test_api_models_and_migrations_agree(self):
        migration.db_sync('api', self.url)

        self.assertEqual(
            [], schema_differences(self.url, api_models.Base.metadata))

    def test_cell_models_and_migrations_agree(self):
        migration.db_sync('cell', self.url)

        self.assertEqual(
            [], schema_differences(self.url, cell_models.Base.metadata))

    def test_comparison_reports_a_column_the_migrations_lack(self):
        migration.db_sync('cell', self.url)
        changed = sa.MetaData()
        for table in cell_models.Base.metadata.tables.values():
            table.to_metadata(changed)
        changed.tables['services'].append_column(
            sa.Column('zone', sa.String(255)))

        diff = schema_differences(self.url, changed)

        self.assertEqual([('add_column', 'services', 'zone')],
                         [(d[0], d[2], d[3].name) for d in diff])

    def test_tables_made_without_migrations_fail_with_one_line(self):
        engine = sa.create_engine(self.url, poolclass=pool.NullPool)
        self.addCleanup(engine.dispose)
        cell_models.Base.metadata.tables['services'].create(engine)

        error = self.assertRaises(exception.DatabaseMigrationFailed,
                                  migration.db_sync, 'cell', self.url)

        self.assertIn('services', str(error))
        self.assertEqual(1, len(str(error).splitlines()))

    def test_quota_revision_sizes_existing_mappings_from_their_specs(self):
        migration.db_sync('api', self.url, version=API_BEFORE_QUOTAS)
        mappings = sa.table('instance_mappings', sa.column('instance_uuid'),
                            sa.column('project_id'),
                            sa.column('queued_for_delete'))
        specs = sa.table('request_specs', sa.column('instance_uuid'),
                         sa.column('spec'))
        engine = sa.create_engine(self.url, poolclass=pool.NullPool)
        self.addCleanup(engine.dispose)
        sized = json.dumps({'flavor': {'vcpus': 2, 'memory_mb': 1024}})
        with engine.begin() as conn:
            for uuid, spec in (('sized', sized), ('no-flavor', '{}'),
                               ('broken', 'not json'), ('no-spec', None)):
                conn.execute(sa.insert(mappings).values(
                    instance_uuid=uuid, project_id='p1',
                    queued_for_delete=False))
                if spec is not None:
                    conn.execute(sa.insert(specs).values(
                        instance_uuid=uuid, spec=spec))

        migration.db_sync('api', self.url)

        with engine.connect() as conn:
            sizes = dict((row[0], tuple(row[1:])) for row in conn.execute(
                sa.text('SELECT instance_uuid, vcpus, memory_mb '
                        'FROM instance_mappings')))
        self.assertEqual({'sized': (2, 1024), 'no-flavor': (0, 0),
                          'broken': (0, 0), 'no-spec': (0, 0)}, sizes)

    def test_db_sync_logs_the_tree_and_both_revisions(self):
        logger = self.useFixture(fixtures.FakeLogger(
            name='cellboot.db.migration', level=logging.INFO))

        migration.db_sync('api', self.url)

        self.assertIn(f'Upgrading the api database '
                      f'{masking.mask_url(self.url)} from an '
                      f'empty schema to {API_HEAD}', logger.output)


class SQLiteMigrationTest(_MigrationTests, base.SQLiteMixin, base.TestCase):

    def test_missing_sqlite_directory_is_created(self):
        path = os.path.join(self.state_path, 'new', 'dir', 'api.sqlite')

        migration.db_sync('api', 'sqlite:///' + path)

        self.assertTrue(os.path.isfile(path))


class MySQLMigrationTest(_MigrationTests, base.MySQLMixin, base.TestCase):
    pass


class PostgreSQLMigrationTest(_MigrationTests, base.PostgreSQLMixin,
                              base.TestCase):
    pass


DATABASE_EXISTS = {
    'mysql': 'SELECT COUNT(*) FROM information_schema.schemata '
             'WHERE schema_name = :name',
    'postgresql': 'SELECT COUNT(*) FROM pg_database WHERE datname = :name',
}


class _RefusedLoginTests:
    """A reachable server that refuses us: nothing is created on it."""

    def database_exists(self, server, name):
        with server.engine.connect() as conn:
            return bool(conn.execute(sa.text(DATABASE_EXISTS[self.BACKEND]),
                                     {'name': name}).scalar())

    def test_missing_database_is_reported_and_not_created(self):
        server = cb_fixtures.server_backend(self.BACKEND)
        name = 'cb_missing_' + os.urandom(4).hex()
        url = server.provisioned_database_url(name).render_as_string(
            hide_password=False)

        self.assertRaises(exception.DatabaseConnectionError,
                          flow_schema.sync_cell_database, url)

        self.assertFalse(self.database_exists(server, name))


class MySQLRefusedLoginTest(_RefusedLoginTests, base.MySQLMixin,
                            base.TestCase):
    pass


class PostgreSQLRefusedLoginTest(_RefusedLoginTests, base.PostgreSQLMixin,
                                 base.TestCase):
    pass


class SilentServer(fixtures.Fixture):
    """A TCP port that accepts connections and never says a word.

    Stands for a hung or firewalled-after-accept database server; ``port``
    is where it listens.
    """

    def _setUp(self):
        self._socket = socket.create_server(('127.0.0.1', 0))
        self.addCleanup(self._socket.close)
        self.port = self._socket.getsockname()[1]
        self._accepted = []
        self.addCleanup(self._close_accepted)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        try:
            while True:
                self._accepted.append(self._socket.accept()[0])
        except OSError:
            return  # closed at clean-up

    def _close_accepted(self):
        for conn in self._accepted:
            conn.close()


class BadInputTest(base.TestCase):
    """Wrong input fails with one domain error before anything is written."""

    def assertFailsFast(self, error_class, fn, *args):
        start = time.monotonic()
        error = self.assertRaises(error_class, fn, *args)
        self.assertLess(time.monotonic() - start, FAIL_FAST_SECONDS)
        return error

    def test_unknown_database_kind_is_refused(self):
        self.assertRaises(exception.InvalidDatabaseKind,
                          migration.db_sync, 'flows',
                          'sqlite:///' + self.state_path + '/x.sqlite')

    def test_malformed_url_is_refused(self):
        self.assertRaises(exception.InvalidDatabaseURL,
                          migration.db_sync, 'api', 'not a database url')

    def test_unknown_driver_is_refused_before_creating_anything(self):
        directory = os.path.join(self.state_path, 'never')

        self.assertRaises(exception.InvalidDatabaseURL,
                          flow_schema.sync_cell_database,
                          f'sqlite+nodriver:///{directory}/cell.sqlite')

        self.assertFalse(os.path.exists(directory))

    def test_uninstalled_driver_is_named(self):
        error = self.assertRaises(exception.InvalidDatabaseURL,
                                  migration.db_sync, 'api',
                                  'mssql+pymssql://u:p@127.0.0.1/x')

        self.assertIn('driver is not installed', str(error))

    def test_unreachable_mysql_server_fails_fast(self):
        self.assertFailsFast(exception.DatabaseConnectionError,
                             migration.db_sync, 'api',
                             'mysql+pymysql://u:p@127.0.0.1:1/x')

    def test_unreachable_postgresql_server_fails_fast(self):
        self.assertFailsFast(exception.DatabaseConnectionError,
                             migration.db_sync, 'cell',
                             'postgresql+psycopg2://u:p@127.0.0.1:1/x')

    def test_unreachable_flow_database_fails_fast(self):
        self.assertFailsFast(exception.DatabaseConnectionError,
                             flow_schema.sync_flow_database,
                             'mysql+pymysql://u:p@127.0.0.1:1/x')

    def test_silent_mysql_server_fails_within_the_timeout(self):
        self.useFixture(fixtures.MonkeyPatch(
            'cellboot.db.facade.CONNECT_TIMEOUT_SECONDS', 1))
        port = self.useFixture(SilentServer()).port

        self.assertFailsFast(exception.DatabaseConnectionError,
                             migration.db_sync, 'api',
                             f'mysql+pymysql://u:p@127.0.0.1:{port}/x')

    def test_silent_postgresql_server_fails_within_the_timeout(self):
        # libpq waits at least 2 seconds, whatever it is told.
        self.useFixture(fixtures.MonkeyPatch(
            'cellboot.db.facade.CONNECT_TIMEOUT_SECONDS', 2))
        port = self.useFixture(SilentServer()).port

        self.assertFailsFast(exception.DatabaseConnectionError,
                             migration.db_sync, 'api',
                             f'postgresql+psycopg2://u:p@127.0.0.1:{port}/x')

    def test_connection_error_is_one_line_without_the_password(self):
        error = self.assertRaises(exception.DatabaseConnectionError,
                                  migration.db_version, 'api',
                                  'mysql+pymysql://u:s3cr3t@127.0.0.1:1/x')

        self.assertNotIn('s3cr3t', str(error))
        self.assertIn('u:***@127.0.0.1:1', str(error))
        self.assertEqual(1, len(str(error).splitlines()))

    def test_sqlite_directory_that_cannot_be_made_is_reported(self):
        blocker = os.path.join(self.state_path, 'a-file')
        with open(blocker, 'w'):
            pass

        error = self.assertRaises(exception.DatabaseConnectionError,
                                  migration.db_sync, 'api',
                                  f'sqlite:///{blocker}/api.sqlite')

        self.assertIn('cannot create directory', str(error))
