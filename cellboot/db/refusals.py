"""A database server that refuses a connection because of a limit.

A server at its connection limit refuses new connections for as long as
it stays there, typically the few seconds of a burst: MariaDB/MySQL with
"Too many connections" (error 1040, ``max_connections``) or "User ...
has exceeded the 'max_user_connections' resource" (1226, the user's
``MAX_USER_CONNECTIONS``; 1203 for the global ``max_user_connections``),
PostgreSQL with "sorry, too many clients already" or "remaining
connection slots are reserved ..." (``max_connections``) and "too many
connections for role/database" (their ``CONNECTION LIMIT``).

How they reach us: oslo.db 18 has no filter for MySQL's three, so its
catch-all passes them on as a bare ``OperationalError``, which nothing
retried: a build failed on it. The filter below makes them oslo.db's
``DBConnectionError``, the error of a server that cannot be reached,
which the API answers 503 and the outage policy (``cellboot.db.outage``)
rides out with back-off. PostgreSQL's arrive from libpq as a failed
connection ("connection to server at ... failed: FATAL: too many
clients already"), already a ``DBConnectionError`` (the facade's
filter) and, on TaskFlow's plain engine, an error without SQLSTATE.

Retrying is right for a burst; a limit too low for the deployment's
steady load needs the operator, who is told which limit to raise in one
WARNING per limit per process (again at most every
``WARNING_INTERVAL_SECONDS``), not one per refused call.
"""

import collections
import re
import threading
import time

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import exc_filters
from oslo_log import log as logging
import sqlalchemy

LOG = logging.getLogger(__name__)

# A refusal that lasts is worth saying again, but not on every call.
WARNING_INTERVAL_SECONDS = 600

Limit = collections.namedtuple('Limit', 'name advice')

_MAX_CONNECTIONS = Limit(
    'max_connections',
    "raise the server's max_connections above the deployment's connection "
    "budget (see docs/reliability.md, 'Database connections'), or lower "
    "the services' [database] max_pool_size/max_overflow")
_MAX_USER_CONNECTIONS = Limit(
    'max_user_connections',
    "raise the database user's MAX_USER_CONNECTIONS (ALTER USER ... WITH "
    "MAX_USER_CONNECTIONS n) or the server's max_user_connections above "
    "what this user's services may hold (see docs/reliability.md, "
    "'Database connections')")
_CONNECTION_LIMIT = Limit(
    'CONNECTION LIMIT',
    "raise the role's or database's CONNECTION LIMIT (ALTER ROLE/DATABASE "
    "... CONNECTION LIMIT n) above what its services may hold (see "
    "docs/reliability.md, 'Database connections')")

# MySQL error numbers of a refused connection, and their limit.
MYSQL_ERRNOS = {
    1040: _MAX_CONNECTIONS,          # Too many connections
    1203: _MAX_USER_CONNECTIONS,     # already more than max_user_connections
    1226: _MAX_USER_CONNECTIONS,     # exceeded the '...' resource (below)
}

# 1226 is also the error of other per-user resources (max_questions,
# max_updates, max_connections_per_hour), which a retry within seconds
# does not cure: only this one is a refusal.
_MYSQL_1226 = re.compile(r"'max_user_connections' resource")

# PostgreSQL's messages (SQLSTATE 53300, which libpq does not pass on for
# an error at connection start).
_POSTGRESQL = (
    (re.compile(r'too many clients already'), _MAX_CONNECTIONS),
    (re.compile(r'remaining connection slots are reserved'),
     _MAX_CONNECTIONS),
    (re.compile(r'too many connections for (?:role|database)'),
     _CONNECTION_LIMIT),
)


@exc_filters.filters('mysql', sqlalchemy.exc.OperationalError,
                     r".*\((?:1040|1203|1226)\b")
def _mysql_connection_refused(error, match, engine_name, is_disconnect):
    """MySQL refused the connection at a limit: a DBConnectionError.

    Anything else under those numbers (1226 for another resource) goes
    on as oslo.db would pass it: the bare OperationalError.
    """
    if refused_for(error) is not None:
        raise db_exc.DBConnectionError(error)
    raise error


def refused_for(exc):
    """The ``Limit`` that made the server refuse ``exc``'s connection.

    None when ``exc`` is no such refusal. Looks through oslo.db's and
    SQLAlchemy's wrappers to the driver's error.
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        limit = _limit_of(exc)
        if limit is not None:
            return limit
        exc = (getattr(exc, 'inner_exception', None) or
               getattr(exc, 'orig', None))
    return None


def _limit_of(error):
    args = getattr(error, 'args', None) or (None,)
    if isinstance(args[0], int):        # a MySQL driver's error
        limit = MYSQL_ERRNOS.get(args[0])
        if args[0] == 1226 and not _MYSQL_1226.search(str(error)):
            return None
        return limit
    module = type(error).__module__ or ''
    if module.startswith('psycopg'):
        message = str(error)
        for pattern, limit in _POSTGRESQL:
            if pattern.search(message):
                return limit
    return None


class _Warnings:
    """One WARNING per limit per process, again after an interval."""

    def __init__(self):
        self._lock = threading.Lock()
        self._last = {}

    def warn(self, limit, exc, doing):
        now = time.monotonic()
        with self._lock:
            last = self._last.get(limit.name)
            due = last is None or now - last >= WARNING_INTERVAL_SECONDS
            if due:
                self._last[limit.name] = now
        if due:
            LOG.warning('The database refused a connection: its %s limit '
                        'is reached (%s). %s; until then calls wait for a '
                        'connection. To stop this: %s.', limit.name,
                        _first_line(exc), doing, limit.advice)
        else:
            LOG.debug('The database refused a connection (%s): %s',
                      limit.name, _first_line(exc))

    def reset(self):
        with self._lock:
            self._last.clear()


WARNINGS = _Warnings()


def warn(exc, doing):
    """Log the refusal ``exc`` (see ``_Warnings``); False if it is none.

    ``doing`` says what the caller does about it ("the call is run again
    for up to 30 s").
    """
    limit = refused_for(exc)
    if limit is None:
        return False
    WARNINGS.warn(limit, exc, doing)
    return True


def _first_line(exc):
    inner = getattr(exc, 'inner_exception', None) or exc
    reason = getattr(inner, 'orig', None) or inner
    lines = str(reason).strip().splitlines() or [type(reason).__name__]
    return ' '.join(lines[0].split())
