"""Engines and transactions, the same way for every cellboot database.

Every database (API, each cell, cell0) is reached through an oslo.db
enginefacade transaction context created here, so that they all get the
same engine set-up:

* SQLite files run in WAL mode with a busy timeout, and their
  connections are pooled, which oslo.db would not do
  (``cellboot.db.sqlite_files``).
* Writers to one SQLite file queue in this process (``WriterQueue``)
  before they ask SQLite for its write lock.
* Server databases keep oslo.db's reconnects, with pools sized to the
  service (``cellboot.db.pools``) that ping and roll back only when it
  is needed (``cellboot.db.checkouts``), and MySQL connections skip TLS
  unless asked for it (``cellboot.db.tls``).

``transactional(pick, mode)`` builds the ``reader``/``writer`` decorators:
the decorated function takes the request context first and runs inside a
transaction of whichever context manager ``pick(context)`` returns.
"""

import collections
import functools
import os
import threading

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import exc_filters
import sqlalchemy
from sqlalchemy.engine import url as sa_url

from cellboot import exception
from cellboot import masking
from cellboot.db import checkouts
# Imported for its oslo.db filter: connections refused at a server's
# connection limit become DBConnectionError on every facade engine.
from cellboot.db import pools
from cellboot.db import refusals  # noqa: F401
from cellboot.db import sqlite_files
from cellboot.db import tls
# Imported for its filter too: text MySQL's utf8 cannot hold becomes
# DBDataError.
from cellboot.db import unstorable  # noqa: F401

SQLITE_BUSY_TIMEOUT_MS = sqlite_files.BUSY_TIMEOUT_MS

# Seconds to wait for a database server to accept a connection (and, for
# the migrations' probe, to answer it) before giving up: long enough for
# a loaded server, short enough that an operator with a wrong host name,
# or a server that accepts connections but never answers, is told so at
# once.
CONNECT_TIMEOUT_SECONDS = 5

# Per DB-API driver: the connect() argument that bounds the connection
# attempt, and the one that bounds reads. The MySQL drivers' connect
# timeout covers the TCP connection only, so what must not hang also
# bounds its reads (the server's greeting is one); libpq's covers the
# whole start-up, and it has no read timeout.
TIMEOUT_ARGS = {
    'pymysql': ('connect_timeout', 'read_timeout'),
    'mysqldb': ('connect_timeout', 'read_timeout'),
    'psycopg2': ('connect_timeout', None),
    'psycopg': ('connect_timeout', None),
}

# oslo.db [database]-style options that enginefacade.configure() accepts.
FACADE_OPTS = frozenset({
    'connection', 'slave_connection', 'sqlite_synchronous',
    'connection_recycle_time', 'mysql_sql_mode', 'mysql_wsrep_sync_wait',
    'mysql_enable_ndb', 'max_pool_size', 'max_overflow', 'pool_timeout',
    'connection_debug', 'connection_trace', 'max_retries', 'retry_interval',
    'connection_parameters', 'db_max_retries', 'db_retry_interval',
    'db_inc_retry_interval', 'db_max_retry_interval', 'sqlite_fk',
})


@exc_filters.filters('postgresql', sqlalchemy.exc.OperationalError,
                     r'.*connection to server (?:at|on) .* failed')
def _postgresql_connection_failed(error, match, engine_name, is_disconnect):
    """A PostgreSQL server that refused or timed out a connection.

    oslo.db recognises libpq's message of old ("could not connect to
    server") as a DBConnectionError; libpq 12 and later say "connection
    to server at HOST, port P failed: Connection refused" (or "timeout
    expired"), which oslo.db passes on as a bare OperationalError. The
    API answers DBConnectionError with a 503, and the engine's pre-ping
    treats it as a disconnect, on PostgreSQL as on MariaDB.
    """
    raise db_exc.DBConnectionError(error)


def new_context_manager(connection, **options):
    """A new, unstarted transaction context for the database at a URL.

    Its engines connect without TLS set-up unless the URL asks for TLS,
    and then share one SSL context (``cellboot.db.tls``).
    """
    connection = tls.with_tls(connection, parse_url(connection))
    options = {k: v for k, v in options.items()
               if k in FACADE_OPTS and k != 'connection'}
    # The pool this service needs, unless the options set one.
    options['max_pool_size'], options['max_overflow'] = pools.sized(
        options.get('max_pool_size'), options.get('max_overflow'))
    manager = enginefacade.transaction_context()
    # thread_checkin makes oslo.db call time.sleep(0) on every connection
    # check-in so that eventlet greenthreads get a turn; cellboot runs on
    # native threads, where it only costs ~0.1 ms per transaction.
    manager.configure(connection=connection, thread_checkin=False,
                      **options)
    if parse_url(connection).get_backend_name() == 'sqlite':
        manager.append_on_engine_create(sqlite_files.pool_connections)
    manager.append_on_engine_create(sqlite_files.install_pragmas)
    manager.append_on_engine_create(queue_sqlite_writers)
    manager.append_on_engine_create(checkouts.install)
    return manager


def transactional(pick, mode):
    """Decorator factory: run ``fn(context, ...)`` in a transaction.

    ``pick(context)`` returns the transaction context manager to use, so
    the choice of database is made per call (a targeted context reaches
    its cell) and after configuration, not at import time.
    """
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(context, *args, **kwargs):
            outermost = not _in_transaction(context)
            with getattr(pick(context), mode).using(context) as session:
                if mode == 'writer' and outermost:
                    take_sqlite_write_lock(session)
                return fn(context, *args, **kwargs)
        return wrapper
    return decorator


def _in_transaction(context):
    """True when ``context`` already has a transaction open."""
    try:
        context.session
    except db_exc.NoEngineContextEstablished:
        return False
    return True


def take_sqlite_write_lock(session):
    """Make a new SQLite writer transaction take the write lock first.

    oslo.db begins every SQLite transaction with a deferred ``BEGIN``:
    in a function that reads before it writes, SQLite takes a read
    snapshot at the first read and, if another connection committed in
    between, cannot upgrade it at the first write: "database is locked",
    at once, whatever the busy timeout. The fresh transaction (nothing
    has run in it yet) is therefore restarted as ``BEGIN IMMEDIATE``, so
    that concurrent writers queue on the busy timeout instead. Readers
    are left alone (WAL lets them run beside the writer), and so are
    other databases, which lock rows.

    Before ``BEGIN IMMEDIATE`` the transaction waits for its turn in the
    file's ``WriterQueue`` (when its engine releases turns, see
    ``queue_sqlite_writers``); the turn is given back when the connection
    returns to the pool, after the commit or rollback. It waits *before*
    it takes a connection from the pool: hundreds of queued writers (a
    multi-create's builds) would otherwise each hold a connection, which
    the pool opens for them and closes after them (a new SQLite
    connection and its pragmas cost more than a small transaction).
    """
    engine = session.get_bind()
    if engine.dialect.name != 'sqlite':
        return
    queue = _queue_of(engine)
    turn = queue is not None and queue.acquire(
        timeout=SQLITE_BUSY_TIMEOUT_MS / 1000.0)
    try:
        fairy = session.connection().connection
    except BaseException:
        if turn:
            queue.release()
        raise
    if turn:
        if _TURN in fairy.info:
            queue.release()  # this connection's transaction has one
        else:
            fairy.info[_TURN] = queue
    dbapi_connection = fairy.driver_connection
    try:
        dbapi_connection.execute('ROLLBACK')
        dbapi_connection.execute('BEGIN IMMEDIATE')
    except BaseException:
        _give_back_turn(fairy.info)
        raise


class WriterQueue:
    """A first-come, first-served lock for the writers of one SQLite file.

    SQLite lets one connection write at a time; the others wait in its
    busy handler, which sleeps 1 to 100 ms between attempts, so under
    contention the write lock often sits free while every writer sleeps
    (measured: two thirds of a batch boot). Writers of this process
    rather wait here, each woken the moment the previous one is done.
    Other processes still meet them at SQLite's lock and busy timeout.

    The turn may be given back by another thread than the one that took
    it (the pool's check-in is not bound to a thread).
    """

    def __init__(self):
        self._mutex = threading.Lock()
        self._waiters = collections.deque()
        self._held = False
        self.owner = None

    def acquire(self, timeout=-1):
        """Wait for the turn; False if ``timeout`` seconds passed first."""
        with self._mutex:
            if not self._held:
                self._held = True
                self.owner = threading.get_ident()
                return True
            waiter = threading.Lock()
            waiter.acquire()
            self._waiters.append(waiter)
        if not waiter.acquire(timeout=timeout):
            with self._mutex:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                    return False
            # The turn was handed over while the wait timed out.
        self.owner = threading.get_ident()
        return True

    def release(self):
        """Hand the turn to the longest waiter, or free it."""
        with self._mutex:
            self.owner = None
            if self._waiters:
                self._waiters.popleft().release()
            else:
                self._held = False

    @property
    def held(self):
        return self._held


_TURN = 'cellboot_writer_turn'
_QUEUES_LOCK = threading.Lock()
_queues = {}


def writer_queue(path):
    """The one ``WriterQueue`` of this process for a SQLite file."""
    key = os.path.realpath(path)
    with _QUEUES_LOCK:
        return _queues.setdefault(key, WriterQueue())


def queue_sqlite_writers(engine):
    """Let ``take_sqlite_write_lock`` queue this SQLite file's writers.

    The turn taken for a transaction is kept in its pooled connection's
    ``info`` and given back whenever the connection leaves use: checked
    in after commit or rollback (also after an exception, and when it
    was invalidated), or detached from the pool. Engines without these
    listeners (in-memory databases, other dialects) never queue, so a
    turn can never be taken that nothing gives back.
    """
    if engine.dialect.name != 'sqlite':
        return
    if engine.url.database in (None, '', ':memory:'):
        return
    for name in ('checkin', 'detach', 'close', 'invalidate'):
        sqlalchemy.event.listen(engine.pool, name, _on_pool_event)
    engine.cellboot_writer_queue = writer_queue(engine.url.database)


def _queue_of(engine):
    queue = getattr(engine, 'cellboot_writer_queue', None)
    if queue is None or queue.owner == threading.get_ident():
        # Another transaction of this thread holds the turn: a wait
        # here would never end. SQLite's busy timeout decides, as it
        # did before the queue existed.
        return None
    return queue


def _on_pool_event(dbapi_connection, connection_record, *args):
    if connection_record is not None:
        _give_back_turn(connection_record.info)


def _give_back_turn(info):
    queue = info.pop(_TURN, None)
    if queue is not None:
        queue.release()


def timeout_args(url, read_timeout=None):
    """DB-API connect() arguments that bound the waits on ``url``'s server.

    Always the connect timeout; the read timeout when ``read_timeout``
    (seconds) is given and the driver has one. Arguments the URL already
    sets are left alone; drivers we do not know get none (an unknown
    argument would make them fail).
    """
    url = parse_url(url) if isinstance(url, str) else url
    connect_arg, read_arg = TIMEOUT_ARGS.get(url.get_driver_name(),
                                             (None, None))
    args = {}
    if connect_arg:
        args[connect_arg] = CONNECT_TIMEOUT_SECONDS
    if read_timeout and read_arg:
        args[read_arg] = read_timeout
    return {k: v for k, v in args.items() if k not in url.query}


def bounded_waits(connection, parameters, read_timeout=None):
    """oslo.db ``connection_parameters`` plus the driver's timeouts.

    ``parameters`` (the configured ones) with ``timeout_args``: a server
    that is down or partitioned makes a connection attempt fail within
    seconds, which a request answers with a 503, instead of waiting on
    the operating system's TCP time-outs.
    """
    args = timeout_args(connection, read_timeout)
    extra = '&'.join(f'{key}={value}' for key, value in args.items())
    return '&'.join(part for part in (parameters, extra) if part) or None


def parse_url(url):
    """Parse a database URL or raise InvalidDatabaseURL with the reason."""
    if not url or not isinstance(url, str):
        raise exception.InvalidDatabaseURL(url=url, reason='it is empty')
    try:
        parsed = sa_url.make_url(url)
        parsed.get_dialect()
    except Exception as exc:  # ArgumentError, NoSuchModuleError, ...
        raise exception.InvalidDatabaseURL(
            url=masking.mask_url(url),
            reason=masking.mask_text(exc, url))
    return parsed
