"""The one retry policy for transactions the database asks us to repeat.

Databases settle some collisions between concurrent transactions by
failing one of them and expecting it to be run again: the claims of many
schedulers on one provider, the flow writes of many conductors, two
requests adding members to one server group. Every such retry in
cellboot goes through this module, so that what is retried, how often
and how long it waits is decided once, here:

**What is retried** (``is_retriable``):

* a deadlock: MySQL/MariaDB error 1213, PostgreSQL SQLSTATE ``40P01``
  (oslo.db's ``DBDeadlock``);
* a lock wait timeout: MySQL/MariaDB error 1205 (``DBDeadlock`` too);
* a serialization failure: PostgreSQL SQLSTATE ``40001``;
* MariaDB's "record has changed since last read", error 1020, under
  ``innodb_snapshot_isolation`` (oslo.db's ``DBConsistencyError``);
* SQLite's "database is locked", once its busy timeout is spent.

These are recognised whether oslo.db translated them (the API and cell
databases go through enginefacade) or not: the flow database's engine is
a plain SQLAlchemy one, whose errors arrive as SQLAlchemy's wrappers of
the driver's, read here by MySQL errno and PostgreSQL SQLSTATE.

**What is not**: a lost connection. A transaction whose connection
dropped may have committed before the answer was lost, and running a
write again is not safe in general (a claim would be made twice);
connections that died while idle in the pool are replaced before a
transaction starts (oslo.db's ping on checkout), which is where nearly
all of them are found. Nor is any other error: those are the caller's.

**How often**: ``RETRIES`` = 20 times after the first attempt (21 in
all). **How long between**: full jitter, a pause drawn uniformly between
0 and a window that starts at ``FIRST_PAUSE`` = 5 ms and doubles at each
retry, capped at ``MAX_PAUSE`` = 250 ms; 20 retries wait about 3 s at
worst, far beyond any real lock queue. The jitter keeps the writers that
collided from colliding again in step.

A retried function must run its whole transaction: decorate it
*outside* its reader/writer decorator, so that each attempt begins a new
one. Each retry is logged (INFO) and counted (``RETRY_COUNT``, for
benchmarks and tests); giving up is logged (WARNING) and the last error
raised.

A unique-key collision between two writers inserting the same row is a
different race, with its own small policy (``on_duplicate``): the loser
runs again at once, and finds the row in place. The scheduler's retry of
a claim whose provider moved on meanwhile (a generation conflict, which
the database did not fail) is built with the same ``retrying``, up to
``[scheduler] claim_retries`` times.

A database outage (a lost connection) has its own policy, for the
services that run builds: ``cellboot.db.outage``.
"""

import contextlib
import functools
import threading

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa
import tenacity


LOG = logging.getLogger(__name__)

# The numbers of the policy (see the module's docstring).
RETRIES = 20
FIRST_PAUSE = 0.005
MAX_PAUSE = 0.25

# A unique-key race is decided at the second attempt; a few more cover
# a third writer joining in.
DUPLICATE_RETRIES = 3

# Driver error codes of the errors above, for errors oslo.db did not
# translate: the errno is the first argument of PyMySQL's and
# mysqlclient's errors; psycopg2 has ``pgcode``, psycopg ``sqlstate``.
RETRIABLE_MYSQL_ERRNOS = frozenset({
    1205,   # lock wait timeout exceeded
    1213,   # deadlock found when trying to get lock
    1020,   # record has changed since last read (MariaDB)
})
RETRIABLE_SQLSTATES = frozenset({
    '40001',    # serialization failure
    '40P01',    # deadlock detected
})


class _Counter:
    """A thread-safe count of retries, process-wide."""

    def __init__(self):
        self._lock = threading.Lock()
        self.value = 0

    def add(self):
        with self._lock:
            self.value += 1

    def reset(self):
        with self._lock:
            self.value = 0


RETRY_COUNT = _Counter()


def _driver_error(exc):
    """The DB-API driver's exception under oslo.db's and SQLAlchemy's."""
    if isinstance(exc, db_exc.DBError) and exc.inner_exception is not None:
        exc = exc.inner_exception
    return getattr(exc, 'orig', None) if isinstance(
        exc, sa.exc.DBAPIError) else None


def is_retriable(exc):
    """Whether the database failed ``exc``'s transaction to have it again.

    See the module's docstring for the list.
    """
    if isinstance(exc, (db_exc.DBDeadlock, db_exc.DBConsistencyError)):
        return True
    if not isinstance(exc, (sa.exc.DBAPIError, db_exc.DBError)):
        return False
    # oslo.db has no filter for SQLite's busy error, and the flow
    # database's engine none at all.
    if 'database is locked' in str(exc):
        return True
    orig = _driver_error(exc)
    if orig is None:
        return False
    code = getattr(orig, 'pgcode', None) or getattr(orig, 'sqlstate', None)
    if code in RETRIABLE_SQLSTATES:
        return True
    args = getattr(orig, 'args', None) or (None,)
    return isinstance(args[0], int) and args[0] in RETRIABLE_MYSQL_ERRNOS


def name_of(retry_state):
    fn = retry_state.fn
    return getattr(fn, '__qualname__', None) or repr(fn)


def _log_retry(retry_state):
    RETRY_COUNT.add()
    LOG.info('%s: transaction failed by the database (%s); running it '
             'again in %.3f s (retry %d of %d)', name_of(retry_state),
             retry_state.outcome.exception(),
             retry_state.next_action.sleep, retry_state.attempt_number,
             RETRIES)


def _give_up(retry_state):
    LOG.warning('%s: the database still fails the transaction after %d '
                'attempts; giving up', name_of(retry_state),
                retry_state.attempt_number)
    return retry_state.outcome.result()     # raises the last error


def _policy():
    return dict(
        stop=tenacity.stop_after_attempt(RETRIES + 1),
        wait=tenacity.wait_random_exponential(multiplier=FIRST_PAUSE,
                                              max=MAX_PAUSE),
        before_sleep=_log_retry,
        retry_error_callback=_give_up)


def retrying(should_retry, late_policy=None, around=None, **policy):
    """Decorator factory: tenacity's ``Retrying(**policy)`` around ``fn``.

    ``should_retry(exc)`` says which errors are retried (tenacity's
    ``retry``); ``policy`` is the rest of tenacity's arguments. The first
    attempt runs bare, and tenacity takes over at its first failure,
    which it sees as its own first attempt: its bookkeeping (futures,
    locks, call state) costs some 40 us a call, more than the Python of
    a claim, and nearly every call succeeds at once. The attempts, the
    pauses and what is retried are tenacity's all the same.

    ``late_policy()``, when given, adds to ``policy`` at the first
    failure (what reads the configuration then, not at import), and
    ``around(fn, exc)`` is a context manager the retries run in.
    """
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                if not should_retry(exc):
                    raise
                failed = [exc]

            @functools.wraps(fn)
            def attempt(*args, **kwargs):
                if failed:
                    raise failed.pop()
                return fn(*args, **kwargs)

            retries = tenacity.Retrying(
                retry=tenacity.retry_if_exception(should_retry),
                **dict(policy, **(late_policy() if late_policy else {})))
            with (around(fn, failed[0]) if around
                  else contextlib.nullcontext()):
                return retries(attempt, *args, **kwargs)
        return wrapper
    return decorator


def on_contention(fn):
    """Decorator: run ``fn`` again when the database asks for it.

    ``fn`` must open its own transaction (put this decorator outside
    its reader/writer decorator).
    """
    return retrying(is_retriable, **_policy())(fn)


def attempts():
    """The policy as an iterable of attempts, for code that is no function.

    ::

        for attempt in retry.attempts():
            with attempt:
                with manager.writer.using(context):
                    ...
    """
    return tenacity.Retrying(retry=tenacity.retry_if_exception(is_retriable),
                             **_policy())


def _is_duplicate(exc):
    return isinstance(exc, db_exc.DBDuplicateEntry)


def on_duplicate(fn):
    """Decorator: run ``fn`` again, at once, on a unique-key collision.

    For a writer that inserts a row unless it exists and can race with
    another doing the same: the loser's transaction fails on the unique
    key, and its next attempt finds the row. ``DUPLICATE_RETRIES`` times,
    then the collision is the caller's.
    """
    return retrying(
        _is_duplicate,
        stop=tenacity.stop_after_attempt(DUPLICATE_RETRIES + 1),
        reraise=True)(fn)
