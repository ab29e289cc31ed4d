"""A burst beyond the database user's connection limit: every write lands.

The test's own database user is limited to 2 connections (MariaDB: a
user ``WITH MAX_USER_CONNECTIONS 2``; PostgreSQL: a role with
``CONNECTION LIMIT 2``; no other test shares it), and eight writers,
each holding its transaction open for a moment, run through the outage
policy at once: the server refuses the connections beyond two ("has
exceeded the 'max_user_connections' resource", 1226; "too many
connections for role"), the writers wait and run again instead of
failing, every row is written, and the log has one WARNING naming the
limit.
"""

import logging
import threading
import time
import uuid

import fixtures
import sqlalchemy as sa

from cellboot import context as cb_context
from cellboot.db import facade
from cellboot.db import outage
from cellboot.db import refusals
from tests import base
from tests import fixtures as cb_fixtures

LIMIT = 2
WRITERS = 8
# How long each writer keeps its connection: long enough that the
# writers overlap, so that more than LIMIT want a connection at once.
HOLD_SECONDS = 0.3

_METADATA = sa.MetaData()
_ROWS = sa.Table('rows', _METADATA,
                 sa.Column('id', sa.Integer, primary_key=True),
                 sa.Column('name', sa.String(36)))


class LimitedUser(fixtures.Fixture):
    """A user of its own on ``database``, limited to ``limit``
    connections; ``url`` connects as that user."""

    def __init__(self, database, limit):
        super().__init__()
        self.database = database
        self.limit = limit

    def _setUp(self):
        admin_url = sa.engine.make_url(self.database.url)
        self.name = 'cb_lim_' + uuid.uuid4().hex[:8]
        password = uuid.uuid4().hex
        admin = sa.create_engine(admin_url, poolclass=sa.pool.NullPool)
        self.addCleanup(admin.dispose)
        if self.database.backend == 'mysql':
            statements = [
                f"CREATE USER '{self.name}'@'%' IDENTIFIED BY "
                f"'{password}' WITH MAX_USER_CONNECTIONS {self.limit}",
                f"GRANT ALL ON `{admin_url.database}`.* TO "
                f"'{self.name}'@'%'"]
            self.drop = f"DROP USER IF EXISTS '{self.name}'@'%'"
        else:
            statements = [
                f"CREATE ROLE {self.name} LOGIN PASSWORD '{password}' "
                f"CONNECTION LIMIT {self.limit}",
                f'GRANT ALL ON DATABASE "{admin_url.database}" TO '
                f'{self.name}',
                f'GRANT ALL ON ALL TABLES IN SCHEMA public TO {self.name}',
                f'GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO '
                f'{self.name}']
            self.drop = (f'DROP OWNED BY {self.name}; '
                         f'DROP ROLE IF EXISTS {self.name}')
        with admin.begin() as conn:
            for statement in statements:
                conn.execute(sa.text(statement))
        self.addCleanup(self._drop, admin)
        self.url = admin_url.set(
            username=self.name, password=password).render_as_string(
                hide_password=False)

    def _drop(self, admin):
        # The pools of the limited user are disposed of by then (the
        # test's clean-ups run first).
        with admin.begin() as conn:
            conn.execute(sa.text(self.drop))


class _ConnectionLimitSpec:
    """The specification; the classes below run it on each server."""

    BACKEND = None
    LIMIT_NAME = None

    def setUp(self):
        super().setUp()
        database = self.useFixture(cb_fixtures.Database(self.BACKEND))
        engine = sa.create_engine(database.url, poolclass=sa.pool.NullPool)
        _METADATA.create_all(engine)
        engine.dispose()
        self.user = self.useFixture(LimitedUser(database, LIMIT))
        self.manager = facade.new_context_manager(self.user.url)
        self.addCleanup(self.manager.dispose_pool)
        self.writer = facade.transactional(lambda ctx: self.manager,
                                           'writer')
        refusals.WARNINGS.reset()
        self.addCleanup(refusals.WARNINGS.reset)
        self.log = self.useFixture(fixtures.FakeLogger(
            name='cellboot.db', level=logging.INFO,
            format='%(levelname)s %(message)s'))

    def _write(self, name):
        def insert(ctx):
            ctx.session.execute(_ROWS.insert().values(name=name))
            time.sleep(HOLD_SECONDS)
        write = self.writer(insert)
        outage.ride_out(lambda: write(cb_context.get_admin_context()),
                        what=f'write {name}')

    def test_a_burst_beyond_the_limit_is_ridden_out(self):
        errors = []
        start = threading.Barrier(WRITERS)

        def writer(name):
            start.wait()
            try:
                self._write(name)
            except Exception as exc:    # reported below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(f'w{i}',))
                   for i in range(WRITERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual([], errors)
        with self.manager.writer.get_engine().connect() as conn:
            names = conn.execute(sa.select(_ROWS.c.name)).scalars().all()
        self.assertEqual(sorted(f'w{i}' for i in range(WRITERS)),
                         sorted(names))
        warnings = [line for line in self.log.output.splitlines()
                    if line.startswith('WARNING')]
        self.assertEqual(1, len(warnings), warnings)
        self.assertIn(f'{self.LIMIT_NAME} limit is reached', warnings[0])
        self.assertIn(self.user.name, warnings[0])
        self.assertGreater(outage.OUTAGE.count, 0)


class MySQLConnectionLimitTest(base.MySQLMixin, _ConnectionLimitSpec,
                               base.TestCase):
    LIMIT_NAME = 'max_user_connections'


class PostgreSQLConnectionLimitTest(base.PostgreSQLMixin,
                                    _ConnectionLimitSpec, base.TestCase):
    LIMIT_NAME = 'CONNECTION LIMIT'
