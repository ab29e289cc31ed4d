"""Test fixtures: real databases on SQLite, MariaDB/MySQL and PostgreSQL.

Server databases are provisioned with oslo.db's provisioning (the
``openstack_citest`` convention: ``make test`` creates that user), one
database per fixture, dropped at clean-up, or emptied and kept for the
next fixture of the same kind (``tests.recycled_databases``). When a
server cannot be reached the test is skipped with the reason, except
with ``CI=true``, where a missing service is a failure.
"""

import os
import tempfile
import unittest
import uuid

import fixtures
from oslo_config import fixture as config_fixture
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import provision
import sqlalchemy as sa

from cellboot.conf import CONF
from cellboot.db.api import connection as api_connection
from cellboot.db.api import models as api_models
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot.db import pools
from cellboot.flowrun import backend as flow_db
from cellboot import policy
from tests import recycled_databases

BACKENDS = ('sqlite', 'mysql', 'postgresql')

SCHEMAS = {
    'api': api_models.Base.metadata,
    'cell': cell_models.Base.metadata,
}


def in_ci():
    return os.environ.get('CI', '').lower() == 'true'


def service_unavailable(message):
    """Skip with ``message``, or fail with it under ``CI=true``."""
    if in_ci():
        raise AssertionError(f'CI=true and {message}')
    raise unittest.SkipTest(message)


def backend_unavailable(backend, reason):
    """Skip, or fail under CI, because a database server is unreachable."""
    service_unavailable(
        f'{backend} is not reachable as openstack_citest ({reason}); run '
        f'`make test` (it prepares the services) or start the server')


def server_backend(backend):
    """oslo.db's provisioning backend for 'mysql' or 'postgresql'."""
    try:
        return provision.Backend.backend_for_database_type(backend)
    except db_exc.BackendNotAvailable as exc:
        backend_unavailable(backend, exc)


class Database(fixtures.Fixture):
    """A new, empty database; ``url`` is its SQLAlchemy URL.

    ``schema`` ('api' or 'cell') creates that model's tables directly from
    the models (fast; the migration tests prove models and migrations
    agree). Leave it None to get an empty database, e.g. to migrate it.

    ``reuse``, for a server database the caller migrates to head itself:
    a key naming what it becomes, under which an earlier fixture's
    database, already migrated and emptied, may be handed out instead of
    a new one (``tests.recycled_databases``). A server database with a
    ``schema`` and no ``name`` is reused that way too.
    """

    def __init__(self, backend='sqlite', schema=None, name=None,
                 reuse=None):
        super().__init__()
        if backend not in BACKENDS:
            raise ValueError(f'unknown backend {backend!r}')
        self.backend = backend
        self.schema = schema
        if name:
            reuse = None
        elif schema:
            reuse = recycled_databases.schema_key(schema)
        self.reuse = reuse
        self.name = name or 'cb_' + uuid.uuid4().hex[:16]

    def _setUp(self):
        if self.backend == 'sqlite':
            tmp = self.useFixture(fixtures.TempDir()).path
            self.url = 'sqlite:///' + os.path.join(tmp, self.name + '.sqlite')
        else:
            be = server_backend(self.backend)
            kept = self.reuse and recycled_databases.take(self.backend,
                                                          self.reuse)
            if kept:
                self.name = kept
            else:
                be.create_named_database(self.name)
            self.addCleanup(self._drop, be)
            self.url = be.provisioned_database_url(self.name).render_as_string(
                hide_password=False)
            if kept:
                return
        if self.schema:
            engine = sa.create_engine(self.url)
            try:
                SCHEMAS[self.schema].create_all(engine)
            finally:
                engine.dispose()

    def _drop(self, be):
        # Engines cached by cellboot hold connections; drop them first or
        # DROP DATABASE waits on PostgreSQL.
        api_connection.reset()
        cell_connection.reset()
        flow_db.reset()
        if self.reuse and recycled_databases.give_back(
                be, self.backend, self.reuse, self.name, self.url,
                SCHEMAS.get(self.schema)):
            return
        try:
            be.drop_named_database(self.name, conditional=True)
        except sa.exc.OperationalError:
            # The server was restarted since the provisioning engine's
            # connection was pooled (make faults): a new one drops it.
            be.engine.dispose()
            be.drop_named_database(self.name, conditional=True)


class ConfFixture(fixtures.Fixture):
    """A clean ``cfg.CONF`` per test, state_path in a temp dir."""

    def _setUp(self):
        self.conf = self.useFixture(config_fixture.Config(CONF))
        CONF([], project='cellboot', default_config_files=[])
        self.state_path = self.useFixture(fixtures.TempDir()).path
        self.conf.config(state_path=self.state_path)
        # The rules in code, or a test's own file here: never a policy
        # file of the machine (/etc/cellboot/policy.yaml).
        self.policy_file = os.path.join(self.state_path, 'policy.yaml')
        self.conf.config(policy_file=self.policy_file, group='oslo_policy')
        policy.reset()
        self.addCleanup(policy.reset)
        self.addCleanup(api_connection.reset)
        self.addCleanup(cell_connection.reset)
        self.addCleanup(flow_db.reset)
        # A service's entry point run by a test sizes the pools.
        self.addCleanup(pools.reset)
        api_connection.reset()
        cell_connection.reset()


class DatabasesFixture(fixtures.Fixture):
    """An API database and ``cells`` cell databases, configured in CONF.

    ``api_url`` is set as ``[api_database] connection``; ``cell_urls`` are
    plain URLs for the caller to map (the first is also set as the local
    ``[database] connection``).
    """

    def __init__(self, backend='sqlite', cells=1):
        super().__init__()
        self.backend = backend
        self.cells = cells

    def _setUp(self):
        conf = self.useFixture(ConfFixture())
        self.api_url = self.useFixture(
            Database(self.backend, schema='api')).url
        self.cell_urls = [self.useFixture(
            Database(self.backend, schema='cell')).url
            for _ in range(self.cells)]
        conf.conf.config(connection=self.api_url, group='api_database')
        if self.cell_urls:
            conf.conf.config(connection=self.cell_urls[0], group='database')
        api_connection.reset()
        cell_connection.reset()


# The Redis server of the jobboard tests (override with CELLBOOT_TEST_REDIS).
REDIS_URL = os.environ.get('CELLBOOT_TEST_REDIS', 'redis://127.0.0.1:6379/0')


class Redis(fixtures.Fixture):
    """A Redis namespace of one test's own on the local server.

    ``url`` is the server, ``namespace`` a unique key prefix to give
    ``[jobboard] namespace``; every key under it is deleted at clean-up,
    so that tests sharing the server never see each other's jobs. Skips
    (fails under CI) when the server does not answer.
    """

    def _setUp(self):
        import redis
        self.url = REDIS_URL
        self.namespace = f'cbtest-{uuid.uuid4().hex[:12]}'
        self.client = redis.Redis.from_url(self.url, socket_timeout=5)
        try:
            self.client.ping()
        except redis.RedisError as exc:
            service_unavailable(
                f'Redis is not reachable at {self.url} ({exc}); start '
                f'redis-server or set CELLBOOT_TEST_REDIS')
        self.addCleanup(self._delete_keys)

    def _delete_keys(self):
        keys = list(self.client.scan_iter(match=f'{self.namespace}*'))
        if keys:
            self.client.delete(*keys)
        self.client.close()


def temp_dir():
    return tempfile.mkdtemp(prefix='cellboot-test-')
