"""SQLite file engines keep a connection pool (and their pragmas)."""

import os

import sqlalchemy as sa

from cellboot.db import facade
from tests import base


class SQLitePoolTest(base.TestCase):

    def setUp(self):
        super().setUp()
        url = 'sqlite:///' + os.path.join(self.state_path, 'pool.sqlite')
        self.manager = facade.new_context_manager(url)
        self.engine = self.manager.writer.get_engine()
        self.addCleanup(self.manager.dispose_pool)

    def test_engine_pools_its_connections(self):
        self.assertIsInstance(self.engine.pool, sa.pool.QueuePool)

    def test_a_connection_is_reused_between_transactions(self):
        seen = set()
        for _ in range(2):
            with self.engine.connect() as conn:
                seen.add(id(conn.connection.dbapi_connection))
        self.assertEqual(1, len(seen))

    def test_pooled_connections_keep_the_wal_pragmas(self):
        with self.engine.connect() as conn:
            mode = conn.exec_driver_sql('PRAGMA journal_mode').scalar()
        self.assertEqual('wal', mode)
