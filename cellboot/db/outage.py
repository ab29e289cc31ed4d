"""Riding out a database outage: the services that run builds wait.

A database outage (a restart, a failover, a partition of a few
seconds) has a policy of its own, ``on_outage``/``ride_out``, beside
``cellboot.db.retry``'s for contention, for the services that run
builds (conductors' flows, compute hosts): a write
that lost its connection (``is_connection_lost``) is run again until the
database answers, for at most ``[database] outage_retry_seconds`` (30 s)
from the first failure, pausing with jitter from ``OUTAGE_FIRST_PAUSE``
(0.1 s) doubling up to ``OUTAGE_MAX_PAUSE`` (2 s), so that a database
that is back is used again within two seconds. The first call that meets
an outage logs one WARNING for the process, the others DEBUG, and the
last one through logs one INFO (``OUTAGE``); a call that gives up logs a
WARNING and raises the last error.

A lost connection is the one error where the database does not say
whether the transaction happened: a COMMIT whose answer was lost may have
committed. ``on_outage`` may therefore only wrap a write that is safe to
run again after it committed (an update to the values it wrote already),
and ``ride_out`` takes a second function, ``again``, run for every retry,
that first finds out whether an earlier attempt committed (a conditional
update that finds its target state, a row that is there already) and
acts on that. Each user says in its docstring why it is safe.

A server that refuses a connection at its connection limit (a burst
beyond ``max_connections``) is ridden out the same way: the call waits
for a connection to free up. Its WARNING names the limit to raise
(``cellboot.db.refusals``), once per limit, instead of the outage's.
"""

import contextlib
import threading
import time

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa
import tenacity

from cellboot.conf import CONF
from cellboot.db import refusals
from cellboot.db import retry

LOG = logging.getLogger(__name__)

# The pauses of the outage policy (see the module's docstring); its bound
# is ``[database] outage_retry_seconds``.
OUTAGE_FIRST_PAUSE = 0.1
OUTAGE_MAX_PAUSE = 2.0

# MySQL client errors of a connection that could not be made or was lost
# (the flow database's engine is no oslo.db one, which would translate
# them to DBConnectionError).
CONNECTION_LOST_MYSQL_ERRNOS = frozenset({
    2002,   # cannot connect through the socket
    2003,   # cannot connect to the server (refused, timed out)
    2006,   # server has gone away
    2013,   # lost connection during query
    2055,   # lost connection, system error
})


def is_connection_lost(exc):
    """Whether ``exc`` says the database could not be reached.

    oslo.db's ``DBConnectionError`` (a refused or timed-out connection, a
    connection dropped before or inside a transaction, its COMMIT
    included); a connection refused at the server's connection limit
    (``cellboot.db.refusals``); on an engine that is no oslo.db one (the
    flow database), SQLAlchemy's error for a connection it invalidated,
    or the driver's error of a connection that could not be made: a
    MySQL client error (``CONNECTION_LOST_MYSQL_ERRNOS``) or a PostgreSQL
    ``OperationalError`` without a SQLSTATE (errors of a statement always
    have one; libpq's failures to connect or to read have none).
    """
    if isinstance(exc, db_exc.DBConnectionError):
        return True
    if refusals.refused_for(exc) is not None:
        return True
    if isinstance(exc, db_exc.DBError) and exc.inner_exception is not None:
        exc = exc.inner_exception
    if not isinstance(exc, sa.exc.DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    orig = exc.orig
    args = getattr(orig, 'args', None) or (None,)
    if isinstance(args[0], int):
        return args[0] in CONNECTION_LOST_MYSQL_ERRNOS
    module = type(orig).__module__ or ''
    return (module.startswith('psycopg') and
            isinstance(exc, sa.exc.OperationalError) and
            not (getattr(orig, 'pgcode', None) or
                 getattr(orig, 'sqlstate', None)))


class _Outage:
    """The calls of this process riding out a database outage now.

    One WARNING when the first starts, one INFO when the last is through:
    an outage met by a hundred builds is two lines in the log, not a
    hundred (each retry is at DEBUG).
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._riding = 0
        self._since = None
        self._calls = 0
        self.count = 0      # retries, process-wide (tests, benchmarks)

    @contextlib.contextmanager
    def riding(self, fn, exc):
        with self._lock:
            self._riding += 1
            self._calls += 1
            first = self._riding == 1
            if first:
                self._since = time.monotonic()
                self._calls = 1
        self._log_start(fn, exc, first)
        through = False
        try:
            yield
            through = True
        finally:
            with self._lock:
                self._riding -= 1
                last = self._riding == 0
                lasted = time.monotonic() - self._since
                calls = self._calls
            if last and through:
                LOG.info('The database answers again: %d call(s) waited '
                         'for it, for %.1f s', calls, lasted)

    @staticmethod
    def _log_start(fn, exc, first):
        """The outage's WARNING, or a refusal's, which names its limit."""
        bound = CONF.database.outage_retry_seconds
        if refusals.warn(exc, f'{_qualname(fn)} and every write that '
                              f'meets the refusal are run again for up to '
                              f'{bound} s'):
            return
        if first:
            LOG.warning('%s: the database cannot be reached (%s); it and '
                        'every write that meets the outage are run again '
                        'for up to %s s', _qualname(fn), brief(exc), bound)
        else:
            LOG.debug('%s: the database cannot be reached (%s)',
                      _qualname(fn), brief(exc))

    def retried(self):
        with self._lock:
            self.count += 1


OUTAGE = _Outage()


def _qualname(fn):
    return getattr(fn, '__qualname__', None) or repr(fn)


def brief(exc):
    """One line of an outage's error, without its SQL and parameters."""
    inner = getattr(exc, 'inner_exception', None) or exc
    reason = getattr(inner, 'orig', None) or inner
    return f'{type(reason).__name__}: {" ".join(str(reason).split())}'


def _outage_stop(retry_state):
    """Past the bound: wall time, or the pauses alone when sleeps are
    instant (tests), whichever is longer."""
    spent = max(retry_state.seconds_since_start, retry_state.idle_for)
    return spent >= CONF.database.outage_retry_seconds


def _log_outage_retry(retry_state):
    OUTAGE.retried()
    LOG.debug('%s: the database is still unreachable (%s); again in '
              '%.2f s', retry.name_of(retry_state), brief(
                  retry_state.outcome.exception()),
              retry_state.next_action.sleep)


def _give_up_outage(retry_state):
    LOG.warning('%s: the database could not be reached for %.1f s '
                '([database] outage_retry_seconds); giving up',
                retry.name_of(retry_state),
                max(retry_state.seconds_since_start, retry_state.idle_for))
    return retry_state.outcome.result()     # raises the last error


def _outage_policy():
    return dict(stop=_outage_stop,
                wait=tenacity.wait_random_exponential(
                    multiplier=OUTAGE_FIRST_PAUSE, max=OUTAGE_MAX_PAUSE),
                before_sleep=_log_outage_retry,
                retry_error_callback=_give_up_outage)


def on_outage(fn, should_retry=is_connection_lost):
    """Decorator: run ``fn`` again while its database cannot be reached.

    Only for a write whose second run is right even when the first one
    committed (see the module's docstring); ``fn`` must open its own
    transaction. ``should_retry``: what counts as an outage (a caller
    that also meets the errors of a remote service's database widens
    it).
    """
    return retry.retrying(should_retry, late_policy=_outage_policy,
                          around=OUTAGE.riding)(fn)


def ride_out(first, again=None, should_retry=is_connection_lost,
             what=None):
    """``first()``, then ``again()`` while the database is unreachable.

    ``again`` (``first`` if not given) is run for every retry, knowing
    that an attempt before it may have committed although its answer was
    lost: it must find out, and not do twice what was done. Returns what
    the attempt that got through returned. ``what`` names the call in
    the log (default: ``first``'s name).
    """
    calls = []

    def attempt():
        fn = again if calls and again is not None else first
        calls.append(fn)
        return fn()

    attempt.__qualname__ = what or _qualname(first)
    return on_outage(attempt, should_retry)()


def log_failure(log, exc, message, *args):
    """Log the failure of a periodic task that will run again.

    A database that cannot be reached is expected now and then and says
    all in one line: a WARNING without a traceback. Anything else may be
    a bug: its traceback is logged (ERROR). ``message % args`` says what
    failed and when it runs again.
    """
    if is_connection_lost(exc):
        log.warning(message + ' (the database cannot be reached: %s)',
                    *args, brief(exc))
    else:
        log.exception(message, *args)
