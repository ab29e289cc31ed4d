"""SQLite files as cellboot opens them: WAL, a busy timeout, a pool.

The embedded and test deployments keep their databases in SQLite files,
which several threads and processes open at once. Every engine on one
(through ``cellboot.db.facade``, and TaskFlow's persistence) gets here:

* the per-connection pragmas (``install_pragmas``): a busy timeout, WAL
  so that readers never block the single writer, ``synchronous=NORMAL``
  (in WAL mode it survives an application crash and only risks the last
  commits on power loss, an accepted trade for the embedded mode);
* a connection pool (``pool_connections``), which oslo.db would not give.
"""

import sqlite3

import sqlalchemy
import tenacity

# How long a SQLite connection waits for another's lock before "database
# is locked" (and how long the switch to WAL is retried).
BUSY_TIMEOUT_MS = 30000


def install_pragmas(engine):
    """Install the per-connection pragmas on SQLite file engines.

    Also used for engines built outside enginefacade (TaskFlow's
    persistence, see ``cellboot.flowrun.backend``).
    """
    if engine.dialect.name != 'sqlite':
        return
    if engine.url.database in (None, '', ':memory:'):
        return

    @sqlalchemy.event.listens_for(engine, 'connect')
    def _sqlite_pragmas(dbapi_con, con_record):
        dbapi_con.execute(f'PRAGMA busy_timeout={BUSY_TIMEOUT_MS}')
        _use_wal(dbapi_con)
        dbapi_con.execute('PRAGMA synchronous=NORMAL')


def _locked(exc):
    return isinstance(exc, sqlite3.OperationalError) and \
        'locked' in str(exc)


@tenacity.retry(retry=tenacity.retry_if_exception(_locked),
                wait=tenacity.wait_random(0.001, 0.05),
                stop=tenacity.stop_after_delay(BUSY_TIMEOUT_MS / 1000),
                reraise=True)
def _use_wal(dbapi_con):
    """Put the file in WAL mode unless it is already (it stays so).

    Switching a file from the rollback journal needs it to itself, and
    SQLite refuses at once, without its busy timeout, when another
    process opened it meanwhile: several services (or scheduler
    processes) starting together on a file made elsewhere failed their
    first connection with "database is locked". The switch is tried
    again until one of them made it.
    """
    if dbapi_con.execute('PRAGMA journal_mode').fetchone()[0] != 'wal':
        dbapi_con.execute('PRAGMA journal_mode=WAL')


def pool_connections(engine):
    """Give an enginefacade SQLite file engine a connection pool back.

    oslo.db replaces SQLAlchemy's QueuePool with NullPool for SQLite
    files, so every transaction opens a new connection and closing it (the
    last one, in WAL mode) checkpoints the log: about 4 ms per transaction
    here, against 0.07 ms with pooled connections — the difference between
    ~100 and ~700 scheduler claims per second. Connections are pooled
      (5 kept, unlimited overflow, so no caller ever waits for one, as with
    NullPool); the old pool's event listeners are carried over. The pool
    arguments mirror ``NullPool.recreate()``, but for the ping at every
    check-out: the file is opened in this process, a pooled connection to
    it cannot have gone away, and the ping was a statement per
    transaction (a twentieth of a scheduler decision's CPU).
    """
    old = engine.pool
    if not isinstance(old, sqlalchemy.pool.NullPool):
        return
    engine.pool = sqlalchemy.pool.QueuePool(
        old._creator, pool_size=5, max_overflow=-1,
        recycle=old._recycle, echo=old.echo,
        logging_name=old._orig_logging_name,
        reset_on_return=old._reset_on_return, pre_ping=False,
        _dispatch=old.dispatch, dialect=old._dialect)
    old.dispose()
