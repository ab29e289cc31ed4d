"""SQLite files: the first connection of a service puts them in WAL mode,
even while another process is writing to them; their connections are
pooled and not pinged."""

import sqlite3
import threading
from unittest import mock

import fixtures
import sqlalchemy as sa

from cellboot.db import facade
from cellboot.db import sqlite_files
from tests import base


class WalSwitchTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.path = self.useFixture(fixtures.TempDir()).path + '/cell.db'
        # A file made elsewhere, in the rollback-journal mode, that
        # another connection is writing to.
        self.writer = sqlite3.connect(self.path, isolation_level=None,
                                      check_same_thread=False)
        self.addCleanup(self.writer.close)
        self.writer.execute('CREATE TABLE t (x)')
        self.writer.execute('BEGIN IMMEDIATE')
        self.writer.execute('INSERT INTO t VALUES (1)')

    def _engine(self):
        engine = sa.create_engine(f'sqlite:///{self.path}')
        self.addCleanup(engine.dispose)
        sqlite_files.install_pragmas(engine)
        return engine

    def test_the_switch_waits_for_the_writer_instead_of_failing(self):
        # SQLite refuses the switch at once while another connection
        # holds the write lock, whatever the busy timeout.
        done = threading.Timer(0.3, self.writer.execute, ('COMMIT',))
        done.start()
        self.addCleanup(done.cancel)
        with self._engine().connect() as conn:
            mode = conn.exec_driver_sql('PRAGMA journal_mode').scalar()
            rows = conn.exec_driver_sql('SELECT count(*) FROM t').scalar()
        self.assertEqual(('wal', 1), (mode, rows))

    def test_a_file_in_wal_mode_already_is_left_as_it_is(self):
        self.writer.execute('COMMIT')
        self.writer.execute('PRAGMA journal_mode=WAL')
        self.writer.execute('BEGIN IMMEDIATE')  # no switch is asked for
        with self._engine().connect() as conn:
            mode = conn.exec_driver_sql('PRAGMA journal_mode').scalar()
        self.writer.execute('COMMIT')
        self.assertEqual('wal', mode)


class PoolTest(base.TestCase):

    def test_sqlite_file_engines_are_pooled_and_not_pinged(self):
        path = self.useFixture(fixtures.TempDir()).path
        manager = facade.new_context_manager(f'sqlite:///{path}/ping.db')
        engine = manager.writer.get_engine()
        self.addCleanup(engine.dispose)
        with mock.patch.object(engine.dialect, 'do_ping',
                               return_value=True) as ping:
            for _ in range(3):
                with engine.connect() as conn:
                    conn.execute(sa.text('SELECT 1'))
        self.assertEqual((sa.pool.QueuePool, 0),
                         (type(engine.pool), ping.call_count))
