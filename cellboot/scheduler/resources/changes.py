"""The cell's change feed table: what its schedulers tell each other.

Several schedulers of one cell each hold the cell's host states in
memory. Every claim, release and provider update they write is also a
row of ``scheduler_changes`` naming the provider, written in the same
transaction (``announce``), so that a change that committed is always
announced and one that rolled back never is; a build-failure count is a
row of its own (``record``). The other schedulers read the rows past the
last sequence they saw (``read``) and re-read only those providers
(``cellboot.scheduler.sync``). The feed costs one small INSERT per
write and one indexed range read per pull, where the periodic reload
reads every host.

Rows are written only while ``[scheduler] sync_backend = database``.
"""

import collections
import time

import sqlalchemy as sa

from cellboot.conf import CONF
from cellboot.conf import scheduler as scheduler_conf
from cellboot.db.cell import models
from cellboot.scheduler.resources import tables

CHANGES = models.SchedulerChange.__table__

USAGE = 'usage'
BUILD = 'build'

_INSERT = sa.insert(CHANGES)


def in_database():
    """Whether the feed is this table (and writes must announce)."""
    return CONF.scheduler.sync_backend == scheduler_conf.SYNC_DATABASE


def announce(context, deltas, origin):
    """In the caller's write transaction: these providers changed.

    ``deltas``: ``{provider_uuid: {rc: signed amount}}`` of what a claim
    or release moved, so that the others add it without reading the
    provider; ``None`` for a provider to re-read (its inventory changed).
    """
    if not in_database() or not deltas:
        return
    now = time.time()
    context.session.execute(_INSERT, [
        {'kind': USAGE, 'key': uuid, 'value': encode(deltas[uuid]),
         'origin': origin, 'at': now} for uuid in sorted(deltas)])


def encode(delta):
    """``{rc: amount}`` as ``RC=AMOUNT,...``; None (re-read) when there
    is none or it does not fit the column."""
    if not delta:
        return None
    text = ','.join(f'{rc}={int(amount)}'
                    for rc, amount in sorted(delta.items()) if amount)
    return text if 0 < len(text) <= 255 else None


def decode(text):
    """``encode``'s ``{rc: amount}``; ValueError when it is not one."""
    delta = {}
    for item in text.split(','):
        rc, sep, amount = item.partition('=')
        if not sep or not rc or rc in delta:
            raise ValueError(f'not RC=AMOUNT: {item!r}')
        delta[rc] = int(amount)
    return delta


def claimed(resources, held=None):
    """The delta of a claim of ``resources`` replacing ``held``."""
    held = held or {}
    return {rc: resources.get(rc, 0) - held.get(rc, 0)
            for rc in set(resources) | set(held)}


def released(resources):
    return {rc: -amount for rc, amount in resources.items()}


@tables.writer
def record(context, entries, origin):
    """Write ``(kind, key, value)`` entries in a transaction of their own."""
    now = time.time()
    context.session.execute(_INSERT, [
        {'kind': kind, 'key': key,
         'value': None if value is None else str(value),
         'origin': origin, 'at': now} for kind, key, value in entries])


@tables.reader
def tail(context):
    """The highest sequence written so far (0 on an empty feed)."""
    return context.session.execute(
        sa.select(sa.func.max(CHANGES.c.seq))).scalar() or 0


_COLUMNS = (CHANGES.c.seq, CHANGES.c.kind, CHANGES.c.key, CHANGES.c.value,
            CHANGES.c.origin, CHANGES.c.at)
_AFTER = sa.select(*_COLUMNS).where(
    CHANGES.c.seq > sa.bindparam('after')).order_by(CHANGES.c.seq).limit(
    sa.bindparam('limit'))


def read(context, after, missing, limit):
    """Rows past sequence ``after``, plus those of the ``missing``
    sequences below it, by sequence; at most ``limit`` past ``after``.

    On a Core connection of its own (``tables.read_engine``), not in a
    session transaction; ``PinnedRead`` is the hot path's.
    """
    with tables.read_engine(context).connect() as conn:
        rows = conn.execute(_AFTER, {'after': after, 'limit': limit}).all()
    return by_seq(rows, read_missing(context, missing))


def by_seq(*parts):
    """Rows of several reads as one list, by sequence."""
    return sorted((row for part in parts for row in part),
                  key=lambda row: row.seq)


Row = collections.namedtuple('Row', 'seq kind key value origin at')


class PinnedRead:
    """``read`` past a sequence on a connection this reader keeps.

    A scheduler pulls its cell's feed before nearly every decision (at
    1,000 cells each is decided for every few seconds), and nearly every
    pull finds nothing. Through SQLAlchemy a pull costs 0.2 ms of a 2 ms
    decision: a pool check-out, the execution machinery and its events,
    for one indexed range read that the database answers in 10 us. So
    the statement is compiled once for the engine's dialect and run on a
    DBAPI connection held for the scheduler's life, its snapshot ended
    after each read (a rollback: MariaDB and PostgreSQL would otherwise
    keep answering from the first read's). Callers serialise their calls
    (the follower's lock). A connection that fails is thrown away and
    the read tried once on a new one (a restarted database server);
    a second failure is raised.
    """

    def __init__(self, context):
        self._engine = tables.read_engine(context)
        engine = self._engine
        self._compiled = _AFTER.compile(dialect=engine.dialect)
        self._connection = None

    def __call__(self, after, limit):
        try:
            return self._read(after, limit)
        except Exception:
            self.close()
        return self._read(after, limit)

    def _read(self, after, limit):
        if self._connection is None:
            self._connection = self._engine.raw_connection()
        params = self._compiled.construct_params(
            {'after': after, 'limit': limit})
        if self._compiled.positional:
            params = tuple(params[name]
                           for name in self._compiled.positiontup)
        try:
            cursor = self._connection.cursor()
            try:
                cursor.execute(self._compiled.string, params)
                rows = [Row(*row) for row in cursor.fetchall()]
            finally:
                cursor.close()
            self._connection.rollback()
        except Exception:
            self.close()
            raise
        return rows

    def close(self):
        """Throw the connection away (not back to the pool: its state is
        unknown)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.invalidate()
            except Exception:
                pass


def read_missing(context, seqs):
    """The rows of sequences ``seqs`` that exist now."""
    if not seqs:
        return []
    with tables.read_engine(context).connect() as conn:
        return conn.execute(sa.select(*_COLUMNS).where(
            CHANGES.c.seq.in_(sorted(seqs)))).all()


@tables.writer
def trim(context, older_than):
    """Delete the rows written before ``older_than`` (epoch seconds).

    Found by time, deleted by sequence: the DELETE then locks a range of
    the primary key below the rows being written, not the whole table.
    """
    last = context.session.execute(sa.select(sa.func.max(CHANGES.c.seq)).where(
        CHANGES.c.at < older_than)).scalar()
    if last is None:
        return 0
    return context.session.execute(
        sa.delete(CHANGES).where(CHANGES.c.seq <= last)).rowcount
