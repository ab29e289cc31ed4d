"""TaskFlow persistence: where flows, atoms and their results are kept.

The flow database (``[flow_persistence] connection``) and every cell
database hold TaskFlow's own tables (logbooks, flowdetails, atomdetails),
created and upgraded by TaskFlow's migrations (``sync``). Engines load
flows with ``get_backend(url)``; code that reads or writes details
directly uses ``get_connection(url)``.

Why one persistence connection per URL: TaskFlow's storage asks its
backend for a connection (``backend.get_connection()``) for every state
change, progress update and result it saves, and the SQLAlchemy backend
builds a new ``Connection`` each time, which rebuilds the table metadata.
A ``Connection`` only holds immutable state (the engine, the table
definitions, a row converter) and takes a pooled database connection per
operation, so one object per URL is safe to share between threads; the
backends made here hand it out from ``get_connection()``.

The engine is ours, not TaskFlow's: SQLite files get the WAL pragmas of
every other cellboot database and a connection pool (TaskFlow opens the
file anew for every operation), server databases get READ COMMITTED
(TaskFlow's own choice), a liveness check on checkout and a pool sized
as the service's others (``cellboot.db.pools``). Measured here,
5-task linear flows persisted to SQLite: about 4 flows/s with TaskFlow's
backend as shipped, 14 with the reused connection alone, 60 with the
reused connection on our engine. It is a plain SQLAlchemy engine rather
than an enginefacade one because oslo.db would turn SQLAlchemy's errors
into its own, which TaskFlow does not catch.

TaskFlow's writers do not queue on the facade's per-file ``WriterQueue``
(its transactions start with a plain ``BEGIN`` and cannot tell reads from
writes up front) and meet cellboot's writers at SQLite's own lock and busy
timeout. As they never wait for a queue turn, a writer holding one can
only wait for them, never the other way round: no deadlock.

Errors are TaskFlow's (``StorageFailure``) or SQLAlchemy's; the
operator-facing wrappers are in ``cellboot.db.migration``.
"""

import threading

import sqlalchemy as sa
from sqlalchemy import pool
from taskflow.persistence.backends import impl_sqlalchemy

from cellboot.conf import CONF
from cellboot.db import checkouts
from cellboot.db import facade
from cellboot.db import pools
from cellboot.db import sqlite_files
from cellboot.db import tls

_SERVER_ISOLATION_LEVEL = 'READ COMMITTED'

_LOCK = threading.Lock()
_backends = {}


class ReusedConnectionBackend(impl_sqlalchemy.SQLAlchemyBackend):
    """TaskFlow's SQLAlchemy backend, handing out one shared connection."""

    def __init__(self, conf, engine=None):
        super().__init__(conf, engine=engine)
        self._connection = None
        self._connection_lock = threading.Lock()

    def get_connection(self):
        # The first call also validates the engine (TaskFlow connects
        # once); later calls return the same object.
        connection = self._connection
        if connection is None:
            with self._connection_lock:
                if self._connection is None:
                    self._connection = super().get_connection()
                connection = self._connection
        return connection


def get_backend(connection):
    """The (cached) TaskFlow persistence backend for a database URL."""
    backend = _backends.get(connection)
    if backend is None:
        with _LOCK:
            backend = _backends.get(connection)
            if backend is None:
                backend = ReusedConnectionBackend(
                    {'connection': connection},
                    engine=_create_engine(connection))
                _backends[connection] = backend
    return backend


def get_connection(connection):
    """The one persistence connection of a database URL, shared."""
    return get_backend(connection).get_connection()


def sync(connection):
    """Create or upgrade TaskFlow's tables at a URL (TaskFlow's migrations).

    On SQLite TaskFlow creates its tables from its models and keeps no
    version table; elsewhere it runs its alembic migrations, recording the
    revision in ``alembic_version``.
    """
    get_connection(connection).upgrade()


def reset():
    """Dispose of every cached engine (tests and long-lived commands)."""
    with _LOCK:
        for backend in _backends.values():
            backend.close()
            backend.engine.dispose()
        _backends.clear()


def _create_engine(connection):
    url = facade.parse_url(connection)
    if url.get_backend_name() == 'sqlite':
        if url.database in (None, '', ':memory:'):
            # One shared in-memory database, not one per connection.
            engine = sa.create_engine(
                url, poolclass=pool.StaticPool,
                connect_args={'check_same_thread': False})
        else:
            engine = sa.create_engine(url)
            sqlite_files.install_pragmas(engine)
        return engine
    # A cell's server may accept connections and never answer: the
    # driver's timeouts bound how long a reader waits on it. TLS as for
    # every other engine: none unless asked, one context per engine.
    # Its pool is sized as the facade's engines of this service are.
    pool_ = pools.sized(CONF.database.max_pool_size,
                        CONF.database.max_overflow)
    engine = sa.create_engine(
        url, plugins=[tls.PLUGIN],
        connect_args=facade.timeout_args(url, CONF.api.cell_read_timeout),
        isolation_level=_SERVER_ISOLATION_LEVEL,
        pool_size=pool_.size, max_overflow=pool_.overflow,
        # As oslo.db's: below MySQL's wait_timeout.
        pool_recycle=CONF.database.connection_recycle_time)
    # Pings and resets as the facade's engines: only when needed.
    checkouts.install(engine)
    return engine
