"""A scheduler following its cell's change feed.

``catch_up`` runs before each decision: it pulls what the cell's other
schedulers wrote since the last pull (at most once per ``[scheduler]
sync_pull_interval``) and re-reads the providers named, in one query.
Entries a scheduler wrote itself are re-read too: between choosing a
host and committing its claim the scheduler counts that claim in memory
only, and a re-read made meanwhile (for another scheduler's change on
the same host) drops it; the re-read after its own commit puts it back.

A feed that fails (pull or publish) puts the follower out of sync: the
failure is logged once, counted in ``errors``, and decisions go on
without waiting, on the periodic reloads and the claims' swaps. Every
``sync_retry_interval`` the feed is tried again; when it answers, the
follower moves to the feed's tail, reloads every host (what happened
meanwhile is unknown) and follows from there.
"""

import collections
import threading
import time

from oslo_log import log as logging

from cellboot.conf import CONF
from cellboot.scheduler.resources import changes

LOG = logging.getLogger(__name__)

# A full load of the feed's retention happens once a minute at most.
TRIM_INTERVAL = 60.0


class Follower:
    """Keeps a ``HostStateCache`` current with a feed (see module)."""

    def __init__(self, cache, feed, origin):
        self.cache = cache
        self.feed = feed
        self.origin = origin
        self.in_sync = False
        self.started = False
        self.errors = 0          # failed pulls and publishes
        self.reloads = 0         # full reloads after an outage or overflow
        self.pulls = 0
        self.seen = 0            # entries of other schedulers applied
        # Seconds from an other scheduler's write to its pull, latest
        # first out: the staleness that the feed leaves.
        self.lags = collections.deque(maxlen=100000)
        self._lock = threading.Lock()
        self._next_pull = 0.0
        self._retry_at = 0.0
        self._next_trim = time.monotonic() + TRIM_INTERVAL

    def start(self, context):
        """Take the feed's tail; call before the first full load, so that
        nothing written between the two is missed."""
        try:
            self.feed.start(context)
            self.in_sync = self.started = True
        except Exception as exc:
            self._lost(exc)

    def catch_up(self, context):
        """Apply what the others wrote since the last pull (see module).

        Never raises, and never waits for another thread's pull.
        """
        now = time.monotonic()
        if now < self._next_pull or not self._lock.acquire(blocking=False):
            return
        try:
            if not self.in_sync:
                if now >= self._retry_at:
                    self._resume(context)
                return
            entries, overflow = self.feed.pull(context)
            self.pulls += 1
            if overflow:
                LOG.info('Cell %s: more changes waiting than '
                         'sync_max_entries; reloading every host',
                         self.cache.scope.name)
                self._resume(context)
                return
            self._apply(context, entries)
            self._next_pull = now + CONF.scheduler.sync_pull_interval
            if now >= self._next_trim:
                self._next_trim = now + TRIM_INTERVAL
                self.feed.trim(context)
        except Exception as exc:
            self._lost(exc)
        finally:
            self._lock.release()

    def publish(self, context, entries):
        """Announce ``(kind, key, value)`` entries; never raises."""
        if not entries or not self.in_sync:
            return
        try:
            self.feed.publish(context, entries, self.origin)
        except Exception as exc:
            self._lost(exc)

    def claimed(self, context, provider_uuids):
        """Announce claims or releases, unless the feed has them already
        (the database feed is written in the claim's transaction)."""
        if not self.feed.in_transaction:
            self.publish(context, [(changes.USAGE, uuid, None)
                                   for uuid in sorted(set(provider_uuids))])

    def build_result(self, context, provider_uuid, failures):
        self.publish(context, [(changes.BUILD, provider_uuid, failures)])

    def _apply(self, context, entries):
        usage = set()
        wall = time.time()
        for entry in entries:
            mine = entry.origin == self.origin
            if not mine:
                self.seen += 1
                self.lags.append(wall - entry.at)
            if entry.kind == changes.USAGE:
                usage.add(entry.key)
            elif entry.kind == changes.BUILD and not mine:
                count = _count(entry.value)
                if count is None:
                    LOG.warning('Cell %s: ignoring a build-failure count '
                                'of %r for host %s from the change feed',
                                self.cache.scope.name, entry.value,
                                entry.key)
                else:
                    self.cache.set_build_failures(entry.key, count)
        known = [uuid for uuid in usage if self.cache.knows(uuid)]
        self.cache.refresh_providers(context, known)
        for uuid in usage.difference(known):
            self.cache.refresh_host(context, uuid)   # a new host

    def _resume(self, context):
        """Tail, then a full load: nothing written meanwhile is missed.

        Also how a follower whose scheduler was never ``start``-ed (its
        states loaded on first use) begins.
        """
        self.feed.start(context)
        self.cache.refresh(context)
        self.reloads += 1
        if self.started and not self.in_sync:
            LOG.info('Cell %s: the scheduler change feed is back; host '
                     'states reloaded, following it again',
                     self.cache.scope.name)
        self.in_sync = self.started = True

    def _lost(self, exc):
        self.errors += 1
        self._retry_at = (time.monotonic()
                          + CONF.scheduler.sync_retry_interval)
        if self.in_sync or self.errors == 1:
            LOG.warning('Cell %s: the scheduler change feed failed (%s); '
                        'relying on periodic reloads until it is back',
                        self.cache.scope.name, exc)
        self.in_sync = False

    def stats(self):
        """Counters and the staleness figures, for operators and tests."""
        lags = sorted(self.lags)
        return {'in_sync': self.in_sync, 'errors': self.errors,
                'reloads': self.reloads, 'pulls': self.pulls,
                'seen': self.seen,
                'lag_p50': lags[len(lags) // 2] if lags else None,
                'lag_p99': lags[int(len(lags) * 0.99)] if lags else None,
                'lag_max': lags[-1] if lags else None}


def _count(value):
    """A feed's failure count as a non-negative int, or None."""
    try:
        count = int(value)
    except (TypeError, ValueError):
        return None
    return count if 0 <= count < 2 ** 31 else None
