"""A real MariaDB connection made through cellboot has no TLS unless asked.

Checked from the server's side (``Ssl_cipher`` of the session is empty)
and from the driver's (it got ``ssl_disabled=True``, so it built no SSL
context), for the facade's engines and TaskFlow's persistence engine.
"""

import sqlalchemy as sa

from cellboot.db import facade
from cellboot.flowrun import backend as flow_db
from tests import base
from tests import fixtures as cb_fixtures


class NoTLSOnMariaDBTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.url = self.useFixture(cb_fixtures.Database('mysql')).url

    def _check(self, engine):
        seen = []
        sa.event.listen(engine, 'do_connect',
                        lambda d, r, cargs, cparams: seen.append(cparams))
        engine.pool.dispose()
        with engine.connect() as conn:
            cipher = conn.exec_driver_sql(
                "SHOW SESSION STATUS LIKE 'Ssl_cipher'").one()[1]
        self.assertEqual('', cipher)
        self.assertIs(True, seen[0]['ssl_disabled'])
        self.assertNotIn('ssl', seen[0])

    def test_facade_engine(self):
        manager = facade.new_context_manager(self.url)
        self.addCleanup(manager.dispose_pool)
        self._check(manager.writer.get_engine())

    def test_flow_engine(self):
        engine = flow_db._create_engine(self.url)
        self.addCleanup(engine.dispose)
        self._check(engine)
