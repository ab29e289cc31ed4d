"""The API database goes away and comes back: 503s, then service, no restart.

The deployment runs on MariaDB (then PostgreSQL), its API database
behind a TCP proxy of this test's (``tests.functional.tcp_proxy``):
cutting the proxy is an outage as cellboot sees it (connections
refused, those open dropped) while the machine's server goes on serving
the other tests. During the
cut, booting, listing, showing and deleting answer 503 with Retry-After
within seconds and write nothing; once the proxy is back the same API
process answers them again.
"""

import logging
import time

import fixtures
import sqlalchemy as sa
from sqlalchemy.engine import url as sa_url

from cellboot.api import errors
from cellboot.db.api import models as api_models
from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional import tcp_proxy

# A refused connection fails at once; the rest is a loaded machine.
ANSWER_WITHIN = 5.0

_TABLES = (api_models.BuildRequest.__table__,
           api_models.InstanceMapping.__table__,
           api_models.RequestSpec.__table__)


class DatabaseBlipTest(base.TestCase):
    """On MariaDB."""

    BACKEND = 'mysql'
    PORT = 3306

    def setUp(self):
        super().setUp()
        self.proxy = None
        self.api = self.useFixture(api_fixtures.APIServer(
            cells=1, hosts_per_cell=1, backend=self.BACKEND,
            reroute={'api': self._through_proxy}))
        self.cluster = self.api.cluster
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.log = self.useFixture(fixtures.FakeLogger(
            name='cellboot.api.errors', level=logging.WARNING))

    def _through_proxy(self, url):
        url = sa_url.make_url(url)
        self.proxy = tcp_proxy.TCPProxy(url.host or '127.0.0.1',
                                        url.port or self.PORT).start()
        # After the deployment's stop (registered later, run earlier).
        self.addCleanup(self.proxy.stop)
        return url.set(host='127.0.0.1', port=self.proxy.port) \
            .render_as_string(hide_password=False)

    def counts(self):
        """Rows of the API database's boot tables, read around the proxy."""
        engine = sa.create_engine(self.cluster.direct_urls['api'])
        try:
            with engine.connect() as conn:
                return {table.name: conn.execute(sa.select(
                    sa.func.count()).select_from(table)).scalar()
                    for table in _TABLES}
        finally:
            engine.dispose()

    def assert503(self, call, *args, **kwargs):
        started = time.monotonic()
        response = call(*args, **kwargs)
        elapsed = time.monotonic() - started
        self.assertEqual(503, response.status_code, response.text)
        self.assertLess(elapsed, ANSWER_WITHIN)
        self.assertEqual(str(errors.DATABASE_RETRY_AFTER),
                         response.headers['Retry-After'])
        self.assertEqual(errors.DATABASE_UNAVAILABLE,
                         response.json()['serviceUnavailable']['message'])

    def boot_one(self):
        response = self.alice.boot()
        self.assertEqual(202, response.status_code, response.text)
        return response.json()['server']['id']

    def test_outage_answers_503_writes_nothing_and_recovers(self):
        uuid = self.boot_one()
        self.cluster.wait_for_quiet()
        before = self.counts()
        self.proxy.cut()
        try:
            self.assert503(self.alice.boot)
            self.assert503(self.alice.get, '/servers')
            self.assert503(self.alice.get, f'/servers/{uuid}')
            self.assert503(self.alice.delete, f'/servers/{uuid}')
        finally:
            self.proxy.restore()
        self.assertEqual(before, self.counts())
        self.assertEqual(0, self.api.app.unexpected)
        warnings = self.log.output.splitlines()
        self.assertEqual(4, len(warnings), self.log.output)
        self.assertNotIn('Traceback', self.log.output)

        # The same process, reconnected by itself.
        self.assertEqual(200, self.alice.get(f'/servers/{uuid}').status_code)
        listed = self.alice.get('/servers')
        self.assertEqual(200, listed.status_code, listed.text)
        self.assertEqual([uuid], [s['id'] for s in listed.json()['servers']])
        second = self.boot_one()
        self.assertEqual(204, self.alice.delete(f'/servers/{uuid}')
                         .status_code)
        self.cluster.wait_for_quiet()
        self.assertEqual('ACTIVE', self.alice.get(f'/servers/{second}')
                         .json()['server']['status'])


class PostgreSQLDatabaseBlipTest(DatabaseBlipTest):
    """The same on PostgreSQL."""

    BACKEND = 'postgresql'
    PORT = 5432
