"""Fencing tokens: a run that lost its flow can no longer write it.

Why: a conductor's claim on a flow's job can run out while the
conductor still runs the flow (a process starved of CPU, a long pause
inside a step). Another conductor then claims the job and resumes the
flow. The claim checks (``cellboot.flowrun.claims``) stop the first run
after its current step, but that step, already under way, ends in both
runs: without a fence, the stale run's last writes (its atom's result,
its state) would land over the new owner's.

How: each flow has a **generation** in the ``flowfences`` table of the
database that holds the flow (the flow database for boot flows, the
cell's database for reschedule flows). It is 1 when the flow is created
(``insert_first``, in the flow's own transaction) and goes up by one,
atomically, every time a run takes the flow (``advance``, in the
take-over's transaction: ``records.take_over``); the value is the run's
**token**. Every write of the run to the flow's records (its state,
atom details, meta: ``cellboot.flowrun.storage``) first holds the fence
in the same transaction (``hold``): an UPDATE of the fence row that
matches only if the generation still is the token. It takes the row's
lock until the transaction ends, so a take-over waits for a write under
way, and a write that comes after a take-over matches nothing and is
refused. A run that is fenced out raises ``FencedOut``: its engine
stops where it is, with nothing recorded, as if its process had died.

What is fenced and what is not: the flow's records, and anything an atom
writes in the same database with the fence held in its transaction
(``Fence.hold`` on that transaction's connection, or ``Fence.holding``):
the reschedule flow's move of an instance onto an alternate, in the
cell database that holds both. Side effects elsewhere (another
database, the scheduler's claims, a cast) are only narrowed: an atom
calls ``Fence.check`` right before each, so a run that stalled inside
a step (a process starved of CPU, a slow call) and was taken over
meanwhile stops there instead of acting; a take-over that falls
between the check and the act still lets that one act happen (every
step is idempotent, see docs/reliability.md). The steps after it never
start, since starting a step writes the previous one's outcome first.

A flow created before fences existed has no row: the next take-over
creates it. A row that is missing under a running flow (deleted by
hand) refuses every write until a take-over creates it again; one whose
generation is not a positive integer is ``CorruptFence``: the flow is
not run, for the operator to look at.
"""

import contextlib
import time

from oslo_log import log as logging
import sqlalchemy as sa

from cellboot import exception

LOG = logging.getLogger(__name__)

# A new flow's generation: the token of its creator's first run.
FIRST = 1

# Seconds for which a run's last proof that it holds its fence (a write
# that held it, or a check) stands in for a new one in ``Fence.check``.
# A check narrows the window in which a stale run acts; it cannot close
# it (the act comes after the check), so a proof this young narrows it
# nearly as well as a query would, and the steps of a boot, which take
# milliseconds, check for free. A step that stalled longer than this
# before its side effect queries the fence again.
FRESH_SECONDS = 0.5

_METADATA = sa.MetaData()
FENCES = sa.Table(
    'flowfences', _METADATA,
    sa.Column('flow_uuid', sa.String(36), primary_key=True),
    sa.Column('generation', sa.BigInteger, nullable=False),
)

_HOLD = sa.update(FENCES).where(
    FENCES.c.flow_uuid == sa.bindparam('b_flow'),
    FENCES.c.generation == sa.bindparam('b_token')).values(
    generation=FENCES.c.generation)
_ADVANCE = sa.update(FENCES).where(
    FENCES.c.flow_uuid == sa.bindparam('b_flow')).values(
    generation=FENCES.c.generation + 1)
_READ = sa.select(FENCES.c.generation).where(
    FENCES.c.flow_uuid == sa.bindparam('b_flow'))


class FencedOut(BaseException):
    """This run's flow was taken by a newer run: stop, record nothing.

    A BaseException, not an Exception, on purpose: TaskFlow turns any
    Exception raised while it schedules or completes an atom into a
    failure of the flow (which it records, and may revert, and logs
    with a traceback); this one goes through TaskFlow untouched, like
    the end of a process, so the stale engine stops where it is. The
    runner (``cellboot.flowrun.runner``) catches it and logs it once.
    """

    def __init__(self, flow_uuid, token, current):
        self.flow_uuid = flow_uuid
        self.token = token
        self.current = current
        now = ('has no fence any more' if current is None
               else f'is at generation {current!r}')
        super().__init__(
            f'flow {flow_uuid} was taken over: this run holds generation '
            f'{token!r} and the flow {now}; its writes are refused, it '
            f'stops here and records nothing')


class CorruptFence(exception.CellbootException):
    msg_fmt = ('Flow %(flow)s has a corrupt fence (generation %(value)s, '
               'not a positive integer) and is not run; set its row in '
               'table flowfences to a generation above any it had')


def _valid(token):
    return isinstance(token, int) and not isinstance(token, bool) \
        and token >= FIRST


def sync(engine):
    """Create the fence table if it is missing (``db sync``)."""
    FENCES.create(engine, checkfirst=True)


def insert_first(conn, flow_uuid):
    """The fence of a new flow, in its creating transaction."""
    conn.execute(sa.insert(FENCES).values(flow_uuid=flow_uuid,
                                          generation=FIRST))


def current(conn, flow_uuid):
    """The stored generation of ``flow_uuid`` (None: no fence row)."""
    return conn.execute(_READ, {'b_flow': flow_uuid}).scalar()


def advance(conn, flow_uuid):
    """Take the flow for a new run, in the caller's transaction; the token.

    The row stays locked until the transaction ends. A flow without a
    fence (created before fences existed) gets one at ``FIRST``; two
    runs creating it at once are told apart by the primary key, and the
    loser increments the winner's. Raises CorruptFence when the stored
    generation is not a positive integer.
    """
    if not conn.execute(_ADVANCE, {'b_flow': flow_uuid}).rowcount:
        try:
            with conn.begin_nested():
                insert_first(conn, flow_uuid)
            return FIRST
        except sa.exc.IntegrityError:
            conn.execute(_ADVANCE, {'b_flow': flow_uuid})
    token = current(conn, flow_uuid)
    # Incremented from a valid value, it is above FIRST; SQLite makes
    # a text generation 1 again, which is no token a take-over issues.
    if not _valid(token) or token == FIRST:
        raise CorruptFence(flow=flow_uuid, value=repr(token))
    return token


def hold(conn, flow_uuid, token):
    """Hold the fence in the caller's transaction, or raise FencedOut.

    One UPDATE that changes nothing and matches only while the flow's
    generation is ``token``; it locks the row until the transaction
    ends, so no take-over slips in before the caller's writes commit.
    """
    if _valid(token) and conn.execute(
            _HOLD, {'b_flow': flow_uuid, 'b_token': token}).rowcount == 1:
        return
    raise FencedOut(flow_uuid, token, current(conn, flow_uuid))


class Fence:
    """A run's token on its flow, and the database that holds both.

    Given to the run's storage (every write holds it) and to its atoms,
    as the transient value ``fence``, so that an atom whose side effect
    is in the same database can make it under the fence (``holding``),
    or check the fence before acting elsewhere (``check``).
    """

    def __init__(self, flow_uuid, token, engine, fresh=FRESH_SECONDS,
                 taken=False):
        if not _valid(token):
            raise ValueError(f'fencing token {token!r} of flow {flow_uuid} '
                             f'is not a positive integer')
        self.flow_uuid = flow_uuid
        self.token = token
        self._engine = engine
        self._fresh = fresh
        # time.monotonic() of the last proof that this run holds the
        # fence. ``taken``: the run's take-over issued the token just
        # now (or created the flow with it), its first proof.
        self._proven_at = time.monotonic() if taken else None

    def __repr__(self):
        return f'<Fence {self.flow_uuid} generation {self.token}>'

    def hold(self, conn):
        """``hold`` this run's token in ``conn``'s transaction.

        ``conn`` may be any connection to the database holding the flow
        (an object layer's session, for a write of its own under the
        fence).
        """
        hold(conn, self.flow_uuid, self.token)
        self._proven_at = time.monotonic()

    @contextlib.contextmanager
    def holding(self):
        """A transaction on the flow's database, the fence held first.

        What the block writes commits only if this run still has the
        flow; FencedOut (nothing written) otherwise.
        """
        with self._engine.begin() as conn:
            self.hold(conn)
            yield conn

    def check(self):
        """Raise FencedOut unless this run still has the flow.

        Called right before a side effect outside the flow's database.
        One query, unless this run proved it holds the fence less than
        ``FRESH_SECONDS`` ago (see there).
        """
        proven = self._proven_at
        if proven is not None and time.monotonic() - proven < self._fresh:
            return
        with self.holding():
            pass
