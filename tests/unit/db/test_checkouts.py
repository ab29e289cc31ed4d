"""Pools ping and roll back only when needed, on real servers.

Each test takes its engine as the services do (``facade``, and
TaskFlow's persistence engine) on the test's own database, counts the
pings and check-in rollbacks the dialect is asked for, and checks what
the server then holds: a transaction left open is rolled back, a
connection the server dropped is replaced.
"""

from unittest import mock

import fixtures
from oslo_db import exception as db_exc
import sqlalchemy as sa

from cellboot.db import checkouts
from cellboot.db import facade
from cellboot.flowrun import backend as flow_db
from tests import base

# What each server calls its connection's id, and how another
# connection drops it.
SERVER_IDS = {
    'mysql': ('SELECT CONNECTION_ID()', 'KILL {}'),
    'postgresql': ('SELECT pg_backend_pid()',
                   'SELECT pg_terminate_backend({})'),
}


class _CheckoutTests:

    CELLS = 0

    def setUp(self):
        super().setUp()
        self.manager = facade.new_context_manager(self.dbs.api_url)
        self.addCleanup(self.manager.dispose_pool)
        self.engine = self.manager.writer.get_engine()
        with self.engine.begin() as conn:
            conn.execute(sa.text('CREATE TABLE checkout_probe (n INTEGER)'))
        self.pings = self.counting('do_ping')
        self.rollbacks = self.counting('do_rollback')

    def counting(self, name):
        dialect = self.engine.dialect
        return self.useFixture(fixtures.MockPatchObject(
            dialect, name, side_effect=getattr(dialect, name))).mock

    def write(self, n=1):
        with self.manager.writer.using(self.context()) as session:
            session.execute(sa.text('INSERT INTO checkout_probe VALUES (:n)'),
                            {'n': n})

    def read(self):
        with self.manager.reader.using(self.context()) as session:
            return session.execute(sa.text(
                'SELECT COUNT(*) FROM checkout_probe')).scalar()

    @staticmethod
    def context():
        return mock.Mock(spec=['session'])

    def server_id(self, conn):
        return conn.execute(sa.text(SERVER_IDS[self.BACKEND][0])).scalar()

    def drop_connection(self, server_id):
        """Drop a connection from the server's side, as a restart would."""
        other = sa.create_engine(self.dbs.api_url, poolclass=sa.pool.NullPool)
        self.addCleanup(other.dispose)
        with other.connect() as conn:
            conn.execute(sa.text(
                SERVER_IDS[self.BACKEND][1].format(int(server_id))))

    def test_a_committed_transaction_costs_no_ping_and_no_rollback(self):
        self.write()
        self.pings.reset_mock()
        self.rollbacks.reset_mock()
        for n in range(5):
            self.write(n)
        self.assertEqual(0, self.pings.call_count)
        self.assertEqual(0, self.rollbacks.call_count)
        self.assertEqual(6, self.read())

    def test_a_reader_is_rolled_back_once(self):
        self.write()
        self.rollbacks.reset_mock()
        self.assertEqual(1, self.read())
        self.assertLessEqual(self.rollbacks.call_count, 1)

    def test_an_open_transaction_is_rolled_back_at_check_in(self):
        with self.engine.connect() as conn:
            conn.execute(sa.text('INSERT INTO checkout_probe VALUES (1)'))
            # Given back without commit: SQLAlchemy rolls it back.
        raw = self.engine.raw_connection()
        try:
            cursor = raw.cursor()
            cursor.execute('INSERT INTO checkout_probe VALUES (2)')
            cursor.close()
        finally:
            # Given back raw, with its transaction open.
            raw.close()
        self.assertEqual(0, self.read())
        self.write()
        self.assertEqual(1, self.read())

    def test_a_connection_idle_for_long_is_pinged(self):
        self.write()
        self.pings.reset_mock()
        self.useFixture(fixtures.MockPatchObject(
            checkouts, 'IDLE_PING_SECONDS', -1))
        self.write()
        self.assertEqual(1, self.pings.call_count)

    def test_an_idle_connection_the_server_dropped_is_replaced(self):
        with self.engine.connect() as conn:
            dropped = self.server_id(conn)
        self.drop_connection(dropped)
        self.useFixture(fixtures.MockPatchObject(
            checkouts, 'IDLE_PING_SECONDS', -1))
        self.write()
        with self.engine.connect() as conn:
            self.assertNotEqual(dropped, self.server_id(conn))
        self.assertEqual(1, self.read())

    def test_a_connection_dropped_just_after_its_use_fails_once(self):
        # The trade: not pinged, its first statement finds it gone and
        # fails as a lost connection (what callers retry); the pool
        # replaces it.
        with self.engine.connect() as conn:
            dropped = self.server_id(conn)
        self.drop_connection(dropped)
        self.assertRaises(db_exc.DBConnectionError, self.write)
        self.write()
        self.assertEqual(1, self.read())

    def test_the_flow_engine_pings_and_resets_the_same_way(self):
        engine = flow_db._create_engine(self.dbs.api_url)
        self.addCleanup(engine.dispose)
        for _ in range(2):
            with engine.begin() as conn:
                conn.execute(sa.text('SELECT 1'))
        self.assertFalse(engine.pool._pre_ping)
        with mock.patch.object(engine.dialect, 'do_ping') as ping, \
                mock.patch.object(engine.dialect, 'do_rollback') as back:
            with engine.begin() as conn:
                conn.execute(sa.text('SELECT 1'))
        ping.assert_not_called()
        back.assert_not_called()


class MySQLCheckoutTest(_CheckoutTests, base.MySQLMixin,
                        base.DatabaseTestCase):
    pass


class PostgreSQLCheckoutTest(_CheckoutTests, base.PostgreSQLMixin,
                             base.DatabaseTestCase):
    pass


class SQLiteCheckoutTest(base.TestCase):

    def test_sqlite_engines_are_left_alone(self):
        engine = sa.create_engine('sqlite://')
        self.addCleanup(engine.dispose)
        before = (engine.pool._pre_ping, engine.pool._reset_on_return)
        checkouts.install(engine)
        self.assertEqual(before,
                         (engine.pool._pre_ping, engine.pool._reset_on_return))
