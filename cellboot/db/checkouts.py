"""Check-outs and check-ins that cost no round trip in steady state.

As oslo.db sets it up, SQLAlchemy's pool pings the server at every
check-out (``pool_pre_ping``) and rolls back at every check-in
(``reset_on_return='rollback'``), the latter also after a COMMIT that
left no transaction open. That is two round trips to the server per
transaction on top of the transaction's own statements: on the cost
benchmark's deployment, about a third of what MariaDB was sent per
boot, and CPU in both the service and the server for each.

On server databases (MySQL, PostgreSQL), ``install`` makes the pool:

* ping at check-out only a connection that sat unused in the pool for
  more than ``IDLE_PING_SECONDS`` (or was never used). One given back a
  moment ago worked then. A server that went away since fails the first
  statement instead, which oslo.db turns into ``DBConnectionError``
  with the connection invalidated, for the callers' retries
  (``cellboot.db.retry``, ``cellboot.db.outage``): what happens anyway
  when a server goes away right after a ping. A ping that fails at
  check-out makes the pool replace that connection, as pre-ping does.
* roll back at check-in only a connection whose transaction may be
  open. A check-out counts as open until a COMMIT or ROLLBACK ends it,
  and a statement after that opens it again; a connection handed out
  raw (``engine.raw_connection()``, TaskFlow's and the fences' own
  work), whose statements SQLAlchemy does not see, is always rolled
  back.

SQLite engines are left alone: their connections are in-process.
"""

import time

import sqlalchemy
from sqlalchemy import exc as sa_exc

# A connection given back less than this long ago is not pinged when it
# is taken again. Under load connections go round in milliseconds, so
# the ping is skipped nearly always; an idle service pings as before.
IDLE_PING_SECONDS = 1.0

# connection_record.info keys.
_OPEN = 'cellboot_transaction_open'
_RETURNED_AT = 'cellboot_returned_at'

SERVER_BACKENDS = ('mysql', 'postgresql')


def install(engine):
    """Make ``engine``'s pool ping and reset only when needed (see above).

    Called when the engine is created, before it has made a connection.
    """
    if engine.dialect.name not in SERVER_BACKENDS:
        return
    pool = engine.pool
    # oslo.db builds the engine (with pre_ping and rollback resets) and
    # offers no option for either: the pool's own settings are turned
    # off here, before its first check-out. tests/unit/db/
    # test_checkouts.py fails if a SQLAlchemy upgrade moves them.
    pool._pre_ping = False
    pool._reset_on_return = sqlalchemy.pool.base.reset_none
    dialect = engine.dialect

    @sqlalchemy.event.listens_for(pool, 'checkout')
    def _checkout(dbapi_connection, record, proxy):
        record.info[_OPEN] = True
        returned_at = record.info.get(_RETURNED_AT)
        if returned_at is not None and \
                time.monotonic() - returned_at <= IDLE_PING_SECONDS:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as exc:
            if dialect.is_disconnect(exc, dbapi_connection, None):
                # The pool replaces the connection and checks out again.
                raise sa_exc.DisconnectionError(str(exc)) from exc
            raise

    @sqlalchemy.event.listens_for(pool, 'reset')
    def _reset(dbapi_connection, record, reset_state):
        if reset_state.terminate_only:
            return
        if not reset_state.transaction_was_reset and \
                record.info.get(_OPEN, True):
            dialect.do_rollback(dbapi_connection)
        record.info[_OPEN] = False

    @sqlalchemy.event.listens_for(pool, 'connect')
    @sqlalchemy.event.listens_for(pool, 'checkin')
    def _fresh(dbapi_connection, record):
        # Just made, or given back: known to work now.
        record.info[_RETURNED_AT] = time.monotonic()

    @sqlalchemy.event.listens_for(engine, 'begin')
    def _begin(connection):
        _mark(connection, True)

    # Before the COMMIT or ROLLBACK is sent: one that fails ends the
    # transaction on MySQL and PostgreSQL alike (or the connection, which
    # is then invalidated).
    @sqlalchemy.event.listens_for(engine, 'commit')
    @sqlalchemy.event.listens_for(engine, 'rollback')
    def _ended(connection):
        _mark(connection, False)


def _mark(connection, is_open):
    # An invalidated connection (lost) has no record left to mark; the
    # pool drops it.
    if not connection.invalidated:
        connection.info[_OPEN] = is_open
