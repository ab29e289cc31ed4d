"""A scheduler following its cell's change feed.

``catch_up`` runs before each decision: it pulls what the cell's other
schedulers wrote since the last pull (at most once per ``[scheduler]
sync_pull_interval``). A claim or release comes with what it moved on
its provider (``changes.announce``), added to the host states as the
scheduler adds its own claims, without a read (of any resource class;
one the states have no row for yet is news of an inventory: the
provider is re-read); a provider whose inventory or traits changed is
re-read, all of them in one query. A scheduler
skips its own entries: it applied them when it wrote them.

An entry is applied once, so a host re-read between another scheduler's
commit and the pull of its entry (after a failed claim of ours) counts
that claim twice until its next re-read or reload: a host that looks
fuller than it is (or, for a release, emptier, and the claim's swap
then refuses it). The periodic reload ends any such drift.

A feed that fails (pull or publish) puts the follower out of sync: the
failure is logged once, counted in ``errors``, and decisions go on
without waiting, on the periodic reloads and the claims' swaps. Every
``sync_retry_interval`` the feed is tried again; when it answers, the
follower moves to the feed's tail, reloads every host (what happened
meanwhile is unknown) and follows from there. Build-failure counts are
not in the database a reload reads: those a scheduler could not announce
are announced then.
"""

import collections
import threading
import time

from oslo_log import log as logging

from cellboot.conf import CONF
from cellboot.scheduler.resources import changes
from cellboot.scheduler.resources import classes

LOG = logging.getLogger(__name__)

# The feed is trimmed once a minute at most.
TRIM_INTERVAL = 60.0
# Seconds a stopping scheduler waits for a pull in progress.
STOP_WAIT = 5.0
# Seconds after which a scheduler no longer seen writing is taken for
# idle (``deciders``).
WRITERS_WINDOW = 10.0


class Follower:
    """Pulls a feed, and falls back while it is down (see module).

    Subclasses say what an entry changes (``_apply``) and how to reload
    everything (``_reload``); ``name`` is for the logs.
    """

    def __init__(self, name, feed, origin):
        self.name = name
        self.feed = feed
        self.origin = origin
        self.in_sync = False
        self.started = False
        self.errors = 0          # failed pulls and publishes
        self.reloads = 0         # full reloads after an outage or overflow
        self.pulls = 0
        # Time spent pulling and applying: the feed's cost to decisions.
        self.pull_seconds = 0.0
        self.seen = 0            # entries of other schedulers applied
        # Seconds from an other scheduler's write to its pull, latest
        # first out: how soon a change is delivered (a scheduler pulls
        # when it decides, so this includes the time it had nothing to
        # decide).
        self.lags = collections.deque(maxlen=100000)
        # Seconds from the start of the last pull to each decision: the
        # staleness bound. A change committed before a pull began is in
        # every decision after it, so a decision of age A has seen every
        # peer's change committed more than A seconds before it.
        self.view_ages = collections.deque(maxlen=100000)
        self._view_at = None     # monotonic start of the last good pull
        # Origin -> when last seen writing: the schedulers deciding now.
        self._writers = {}
        self._lock = threading.Lock()
        self._next_pull = 0.0
        self._retry_at = 0.0
        self._next_trim = time.monotonic() + TRIM_INTERVAL

    def start(self, context):
        """Take the feed's tail; call before the first full load, so that
        nothing written between the two is missed."""
        try:
            started = time.monotonic()
            self.feed.start(context)
            self._view_at = started
            self.in_sync = self.started = True
        except Exception as exc:
            self._lost(exc)

    def stop(self):
        """Close the feed's connections, after a pull in progress (at most
        ``STOP_WAIT`` s: a pull stuck on a partitioned database must not
        hang the service's stop; its connection then goes with the
        process). A later pull reopens them."""
        if not self._lock.acquire(timeout=STOP_WAIT):
            return
        try:
            self.feed.close()
        finally:
            self._lock.release()

    def catch_up(self, context, measured=True):
        """Apply what the others wrote since the last pull (see module).

        Never raises, and never waits for another thread's pull.
        ``measured``: count the view's age, as seen by a decision; a
        pull made for the aggregate's heartbeat is not one.
        """
        try:
            self._catch_up(context)
        finally:
            if measured and self.in_sync and self._view_at is not None:
                self.view_ages.append(time.monotonic() - self._view_at)

    def _catch_up(self, context):
        now = time.monotonic()
        if now < self._next_pull or not self._lock.acquire(blocking=False):
            return
        try:
            if not self.in_sync:
                if now >= self._retry_at:
                    self._resume(context)
                return
            started = time.perf_counter()
            entries, overflow = self.feed.pull(context)
            self.pulls += 1
            if overflow:
                LOG.info('%s: more changes waiting than '
                         'sync_max_entries, or some missed; reloading '
                         'every host', self.name)
                self._resume(context)
                return
            self._apply(context, entries)
            self._view_at = now
            self.pull_seconds += time.perf_counter() - started
            self._next_pull = now + CONF.scheduler.sync_pull_interval
            if now >= self._next_trim:
                self._next_trim = now + TRIM_INTERVAL
                self.feed.trim(context)
        except Exception as exc:
            self._lost(exc)
        finally:
            self._lock.release()

    def publish(self, context, entries):
        """Announce ``(kind, key, value)`` entries; never raises.

        While the feed is down, tried once per retry interval only: a
        feed that does not answer must not slow every claim down.
        Returns whether the entries reached the feed.
        """
        if not entries:
            return True
        if not self.in_sync and time.monotonic() < self._retry_at:
            return False
        try:
            self.feed.publish(context, entries, self.origin)
        except Exception as exc:
            self._lost(exc)
            return False
        return True

    def _resume(self, context):
        """Tail, then a full load: nothing written meanwhile is missed.

        Also how a follower whose scheduler was never ``start``-ed (its
        states loaded on first use) begins.
        """
        started = time.monotonic()
        self.feed.start(context)
        self._reload(context)
        self._view_at = started
        self.reloads += 1
        if self.started and not self.in_sync:
            LOG.info('%s: the scheduler change feed is back; host '
                     'states reloaded, following it again',
                     self.name)
        self.in_sync = self.started = True
        self._resumed(context)

    def _lost(self, exc):
        self.errors += 1
        self._retry_at = (time.monotonic()
                          + CONF.scheduler.sync_retry_interval)
        if self.in_sync or self.errors == 1:
            LOG.warning('%s: the scheduler change feed failed (%s); '
                        'relying on periodic reloads until it is back',
                        self.name, exc)
        self.in_sync = False

    def _apply(self, context, entries):
        raise NotImplementedError()

    def _resumed(self, context):
        """Following the feed again: announce what could not be."""

    def _reload(self, context):
        raise NotImplementedError()

    def mine(self, entry):
        """Whether this scheduler wrote ``entry``; counts the others'."""
        if entry.origin == self.origin:
            return True
        self.seen += 1
        self.lags.append(time.time() - entry.at)
        return False

    def deciding(self, origin):
        """``origin`` was seen claiming (see ``deciders``)."""
        if origin is not None:
            self._writers[origin] = time.monotonic()

    def deciders(self):
        """This scheduler and the others seen writing in the last
        ``WRITERS_WINDOW`` seconds: how many schedulers of the cell
        decide now."""
        horizon = time.monotonic() - WRITERS_WINDOW
        for origin, seen in list(self._writers.items()):
            if seen < horizon:
                self._writers.pop(origin, None)
        return 1 + len(self._writers)

    def stats(self):
        """Counters and the staleness figures, for operators and tests."""
        lags = sorted(self.lags)
        ages = sorted(self.view_ages)
        return {'in_sync': self.in_sync, 'errors': self.errors,
                'reloads': self.reloads, 'pulls': self.pulls,
                'pull_seconds': self.pull_seconds,
                'seen': self.seen,
                'lag_p50': lags[len(lags) // 2] if lags else None,
                'lag_p99': lags[int(len(lags) * 0.99)] if lags else None,
                'lag_max': lags[-1] if lags else None,
                'view_age_p50': ages[len(ages) // 2] if ages else None,
                'view_age_p99': (ages[int(len(ages) * 0.99)]
                                 if ages else None)}


class CacheFollower(Follower):
    """A cell scheduler's: keeps its ``HostStateCache`` current."""

    def __init__(self, cache, feed, origin):
        super().__init__(f'Cell {cache.scope.name}', feed, origin)
        self.cache = cache
        # Build-failure counts the feed did not take (it was down):
        # host uuid -> the latest count, announced once it is back. The
        # peers' reload does not bring them (they live only in memory).
        self._unannounced = {}

    def claimed(self, context, deltas):
        """Announce claims or releases (``changes.announce``), unless the
        feed has them already (the database feed is written in the
        claim's transaction)."""
        if not self.feed.in_transaction:
            self.publish(context, [
                (changes.USAGE, uuid, changes.encode(deltas[uuid]))
                for uuid in sorted(deltas)])

    def build_result(self, context, provider_uuid, failures):
        self._unannounced.pop(provider_uuid, None)
        if not self.publish(context,
                            [(changes.BUILD, provider_uuid, failures)]):
            self._unannounced[provider_uuid] = failures

    def _resumed(self, context):
        pending, self._unannounced = self._unannounced, {}
        if not self.publish(context, [
                (changes.BUILD, uuid, count)
                for uuid, count in sorted(pending.items())]):
            self._unannounced.update(pending)

    def _apply(self, context, entries):
        usage = set()
        for entry in entries:
            if self.mine(entry):
                continue   # applied when it was written
            if entry.kind == changes.USAGE:
                delta = _delta(entry.value)
                if delta is None or not self.cache.add_usage(entry.key,
                                                             delta):
                    usage.add(entry.key)
                else:
                    self.deciding(entry.origin)
            elif entry.kind == changes.BUILD:
                count = _count(entry.value)
                if count is None:
                    LOG.warning('%s: ignoring a build-failure count '
                                'of %r for host %s from the change feed',
                                self.name, entry.value,
                                entry.key)
                else:
                    self.cache.set_build_failures(entry.key, count)
        known = [uuid for uuid in usage if self.cache.knows(uuid)]
        self.cache.refresh_providers(context, known)
        for uuid in usage.difference(known):
            self.cache.refresh_host(context, uuid)   # a new host

    def _reload(self, context):
        self.cache.refresh(context)


def _delta(value):
    """A feed's usage delta ``{rc: amount}``, or None: re-read instead
    (none given, an inventory change; or one we cannot apply)."""
    if not value:
        return None
    try:
        delta = changes.decode(value)
    except ValueError:
        return None
    if not all(map(classes.is_valid, delta)) or any(
            abs(amount) >= 2 ** 31 for amount in delta.values()):
        return None
    return delta


def _count(value):
    """A feed's failure count as a non-negative int, or None."""
    try:
        count = int(value)
    except (TypeError, ValueError):
        return None
    return count if 0 <= count < 2 ** 31 else None
