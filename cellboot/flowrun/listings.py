"""What a conductor reads of its board at each turn: the jobs nobody holds.

TaskFlow's conductor loop, on its Redis board, paid for every turn in
proportion to the whole board: it read and decoded every posting again
(HGETALL, msgpack, a ``RedisJob`` each), asked each job's state in a
transaction of its own (WATCH, MULTI, EXEC) and tried to claim every
job, those it ran itself included, until it found a free one. With a
backlog of a few hundred boots that was about a tenth of a super
conductor's CPU, for jobs it could not take. ``Listings`` makes a turn
cost what its free slots can take:

* the board's jobs are kept in the order they were posted in a sorted
  set beside the listings (``order_key``, scored by the posting's
  sequence; ``jobboard.ExpiringRedisJobBoard.post_once`` adds to it),
  and a turn reads it from the oldest, ``batch`` jobs at a time: their
  postings and whether anyone holds them, in one pipelined round trip
  per batch, and no further than it found free jobs for its slots;
* a job found held is not asked about again for ``HELD_RECHECK_SECONDS``
  (a holder keeps its claim for as long as it runs the flow, and a
  dead holder's claim runs out only after ``[jobboard] claim_expiry``):
  with several conductors, the front of the order is their running
  jobs, which each turn would otherwise ask about again; a job consumed
  here leaves the order at once (``forget``);
* postings are decoded once: a posting is never rewritten while its job
  lives (TaskFlow's claim, renewal and consumption touch other keys), so
  the job built from it is kept while the listing holds the same bytes;
* a job whose posting is gone (consumed, trashed) leaves the order at
  the turn that finds it so; jobs posted without it (by an older
  cellboot, or planted by hand) join it when the whole listing is read
  (``jobs``: at the first turn, then every ``REINDEX_SECONDS``).

Order: oldest first, so that a backlog is served in the order the
requests came in; TaskFlow's iterator serves the newest first, which
under a sustained load leaves the oldest waiting until their callers
give up.

A posting that does not decode is skipped, with one WARNING per posting
(the board is writable by others, see ``cellboot.flowrun.jobboard``):
it is nobody's job to run, and whatever names a flow is read only
through ``jobboard.job_flow_uuid`` after the claim anyway.
"""

import time

from oslo_log import log as logging
from taskflow import exceptions as tf_exc
from taskflow.jobs.backends import impl_redis
from taskflow.jobs import base as jobs_base

LOG = logging.getLogger(__name__)

# Seconds between two reads of the whole listing (to order the jobs
# posted without the order set).
REINDEX_SECONDS = 30.0
# Seconds a job found held is taken for held without asking again.
HELD_RECHECK_SECONDS = 2.0


class Listings:
    """The ordered, decoded postings of one ``RedisJobBoard``."""

    def __init__(self, board):
        self._board = board
        self.order_key = board.join(b'listings.order')
        # raw key -> (raw posting, RedisJob or None when it did not decode)
        self._decoded = {}
        self._indexed_at = None
        # raw key -> time.monotonic() until which it counts as held
        self._held_until = {}

    def jobs(self):
        """Every job the board lists now, oldest first (one HGETALL).

        Jobs missing from the order set are added to it.
        """
        board = self._board
        with impl_redis._translate_failures():
            raw_postings = board._client.hgetall(board.listings_key)
        decoded = {raw_key: self._known(raw_key, raw_posting)
                   for raw_key, raw_posting in raw_postings.items()}
        self._decoded = decoded
        jobs = sorted((job for _raw, job in decoded.values()
                       if job is not None),
                      key=lambda job: job.sequence)
        if jobs:
            with impl_redis._translate_failures():
                board._client.zadd(
                    self.order_key,
                    {job.key: job.sequence for job in jobs}, nx=True)
        self._indexed_at = time.monotonic()
        return jobs

    def unclaimed(self, limit, batch=16):
        """Up to ``limit`` jobs that nobody held a moment ago, oldest first.

        Read ``batch`` jobs at a time (see the module doc). A job found
        free may be claimed by another conductor before this one claims
        it: the claim then fails as it would have.
        """
        if limit <= 0:
            return []
        if self._indexed_at is None or \
                time.monotonic() - self._indexed_at > REINDEX_SECONDS:
            self.jobs()
        board = self._board
        client = board._client
        now = time.monotonic()
        self._held_until = {key: until for key, until
                            in self._held_until.items() if until > now}
        free, gone = [], []
        start = 0
        with impl_redis._translate_failures():
            while len(free) < limit:
                keys = client.zrange(self.order_key, start,
                                     start + batch - 1)
                if not keys:
                    break
                start += batch
                keys = [key for key in keys if key not in self._held_until]
                if not keys:
                    continue
                pipe = client.pipeline(transaction=False)
                pipe.hmget(board.listings_key, keys)
                for key in keys:
                    pipe.exists(board.join(key + board.OWNED_POSTFIX))
                raw_postings, *held = pipe.execute()
                for key, raw, owned in zip(keys, raw_postings, held):
                    if raw is None:
                        gone.append(key)
                    elif owned:
                        self._held_until[key] = now + HELD_RECHECK_SECONDS
                    else:
                        _raw, job = self._known(key, raw)
                        if job is not None:
                            free.append(job)
            if gone:
                self._forget(gone)
        return free[:limit]

    def forget(self, job):
        """``job`` is gone from the board (consumed here): out of the order.

        Called from the threads that run flows: it touches Redis only
        (what this object keeps is the loop thread's, and forgets the
        job at its next full read).
        """
        with impl_redis._translate_failures():
            self._board._client.zrem(self.order_key, job.key)

    def _forget(self, keys):
        self._board._client.zrem(self.order_key, *keys)
        for key in keys:
            self._decoded.pop(key, None)
            self._held_until.pop(key, None)

    def _known(self, raw_key, raw_posting):
        """``(raw_posting, job)``, decoding only postings not seen yet."""
        known = self._decoded.get(raw_key)
        if known is None or known[0] != raw_posting:
            known = (raw_posting, self._decode(raw_key, raw_posting))
            self._decoded[raw_key] = known
        return known

    def _decode(self, raw_key, raw_posting):
        board = self._board
        try:
            data = board._loads(raw_posting)
            if not isinstance(data['sequence'], int):
                # Ordered by it: a hostile string would break the sort.
                raise TypeError(f'sequence {data["sequence"]!r:.40}')
            return impl_redis.RedisJob(
                board, data['name'], data['sequence'], raw_key,
                uuid=data['uuid'], details=data.get('details', {}),
                created_on=data['created_on'], book_data=data.get('book'),
                backend=board._persistence,
                priority=jobs_base.JobPriority.convert(
                    data.get('priority', jobs_base.JobPriority.NORMAL)))
        except (tf_exc.JobFailure, KeyError, TypeError, ValueError,
                AttributeError) as exc:
            LOG.warning('Board %s: the posting under %r cannot be read '
                        '(%s: %s); it is not a job this conductor runs',
                        board.name, raw_key[:80], type(exc).__name__, exc)
            return None
