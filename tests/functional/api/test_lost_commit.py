"""A boot whose COMMIT's answer is lost: accepted once, never twice.

When the API database restarts just as a boot's transaction commits, the
API cannot tell from the error whether the rows were written. Answering
503 when they were would make the client send the request again and get
a second server (the fault test of a MariaDB restart found one); the API
reads the rows back instead and accepts the request when they are there.

The lost answer is made on MariaDB, under the API's own process: its
dialect's COMMIT of the next transaction that inserted build requests
raises PyMySQL's "lost connection during query" (2013), either after
the server committed or before it was asked to, and SQLAlchemy and
oslo.db then do with it what they do with a real one.
"""

import fixtures
import pymysql
import sqlalchemy as sa
from sqlalchemy.dialects.mysql import pymysql as mysql_pymysql
from sqlalchemy import event

from cellboot.db.api import models as api_models
from tests import base
from tests.functional.api import fixtures as api_fixtures


class LostCommitTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(
            cells=1, hosts_per_cell=1, backend='mysql'))
        self.cluster = self.api.cluster
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)

    def lose_answer(self, committed):
        """Lose the answer to the next boot's COMMIT; what was lost.

        ``committed``: whether the server commits before the answer is
        lost.
        """
        lost = []
        real_commit = mysql_pymysql.MySQLDialect_pymysql.do_commit

        def mark(conn, cursor, statement, *args):
            if statement.startswith('INSERT INTO build_requests'):
                conn.connection.dbapi_connection.cellboot_boot = True

        def do_commit(dialect, dbapi_connection):
            if lost or not getattr(dbapi_connection, 'cellboot_boot', False):
                return real_commit(dialect, dbapi_connection)
            lost.append(committed)
            if committed:
                real_commit(dialect, dbapi_connection)
            raise pymysql.err.OperationalError(
                2013, 'Lost connection to MySQL server during query')

        event.listen(sa.engine.Engine, 'before_cursor_execute', mark)
        self.addCleanup(event.remove, sa.engine.Engine,
                        'before_cursor_execute', mark)
        self.useFixture(fixtures.MockPatchObject(
            mysql_pymysql.MySQLDialect_pymysql, 'do_commit', do_commit))
        return lost

    def mappings(self):
        engine = sa.create_engine(self.cluster.direct_urls['api'])
        try:
            with engine.connect() as conn:
                return conn.execute(sa.select(sa.func.count()).select_from(
                    api_models.InstanceMapping.__table__)).scalar()
        finally:
            engine.dispose()

    def test_a_commit_that_got_through_is_accepted_and_boots(self):
        lost = self.lose_answer(committed=True)
        response = self.alice.boot(count=2)
        self.assertEqual([True], lost)
        self.assertEqual(202, response.status_code, response.text)
        uuids = [s['id'] for s in response.json()['servers']]
        self.assertEqual(2, len(uuids))
        self.assertEqual(2, self.mappings())
        self.cluster.wait_for_quiet()
        for uuid in uuids:
            server = self.alice.get(f'/servers/{uuid}').json()['server']
            self.assertEqual('ACTIVE', server['status'])

    def test_a_commit_that_did_not_happen_answers_503_and_wrote_nothing(self):
        lost = self.lose_answer(committed=False)
        response = self.alice.boot()
        self.assertEqual([False], lost)
        self.assertEqual(503, response.status_code, response.text)
        self.assertIn('Retry-After', response.headers)
        self.assertEqual(0, self.mappings())
        self.assertEqual(0, self.api.app.unexpected)
