"""One sweep of a conductor: its lock and its time budget.

With a jobboard, the super conductors sweep under a Redis lock
(``NAMESPACE.sweeper.boot``) so that one sweeps at a time: two sweeping
at once could both find a flow unowned and post a job for it each, and
two engines would then run it at once. The conductors of cell C hand
their unowned flows over under their cell's own lock
(``NAMESPACE.cell.C.sweeper``, among the cell's keys: see
``cellboot.flowrun.board_keys``), which spares them reading the board
and posting twice. A lock whose lease ran out while
its sweep still ran (a sweep of 16 s under load, with a lease of one
sweep interval) let exactly that happen. So:

* the lease is generous (``lease()``: three sweep intervals, at least
  ``MIN_LEASE`` s) and renewed to its full length before each thing the
  sweep does (``go_on``); a sweep that finds the lock lost (it stalled
  for longer than a lease, and another conductor took it) stops at once;
* a sweep starts nothing more once it has run for a sweep interval
  (``go_on`` again); what is left waits for the next sweep. The first
  action of a sweep always goes, so every sweep makes progress;
* the lock is released when the sweep ends; its lease remains only for
  a conductor killed while it swept.

Without a jobboard there is no lock (``lock=None``), only the budget.
"""

import time

from oslo_log import log as logging

from cellboot.conf import CONF
from cellboot.flowrun import board_keys

LOG = logging.getLogger(__name__)

# Seconds: the shortest lease of the sweep lock, for short intervals.
MIN_LEASE = 30


def lock_name(cell_name=None):
    """The Redis key of the super conductors' sweep lock, or a cell's."""
    return board_keys.sweep_lock_name(cell_name)


def lease():
    """How long the lock lasts unless renewed (s); see the module doc."""
    return max(MIN_LEASE, 3 * CONF.conductor.sweep_interval)


def redis_lock(client, cell_name=None):
    """The sweep lock on ``client`` (a redis.Redis), not taken yet."""
    return client.lock(lock_name(cell_name), timeout=lease())


class Locks:
    """A conductor's sweep lock, on a Redis client made on first use.

    ``cell_name``: the cell of a cell conductor (None: a super
    conductor). The client uses ``[jobboard] url``, hence the
    conductor's own Redis credentials.
    """

    def __init__(self, cell_name=None):
        self.cell_name = cell_name
        self._redis = None

    def lock(self, board):
        """The sweep lock with a jobboard (``board``), else None."""
        if board is None:
            return None
        if self._redis is None:
            import redis
            self._redis = redis.Redis.from_url(CONF.jobboard.url)
        return redis_lock(self._redis, self.cell_name)


class Sweep:
    """One sweep's right to go on: its lock (or None) and its budget."""

    def __init__(self, lock=None, budget=None):
        self.lock = lock
        self.budget = (CONF.conductor.sweep_interval if budget is None
                       else budget)
        self._started = None
        self._actions = 0
        self._stopped = False

    def start(self):
        """Take the lock (no waiting); False if another conductor has it."""
        if self.lock is not None and not self.lock.acquire(blocking=False):
            LOG.debug('Another conductor is sweeping (it holds %s)',
                      self.lock.name)
            return False
        self._started = time.monotonic()
        return True

    def go_on(self):
        """Whether to do one more thing; renews the lock if so."""
        if self._stopped:
            return False
        if self._actions and (time.monotonic() - self._started >
                              self.budget):
            LOG.info('The sweep has run for %.0f s: the rest waits for the '
                     'next one', time.monotonic() - self._started)
            self._stopped = True
            return False
        if self.lock is not None and not self._renew():
            self._stopped = True
            return False
        self._actions += 1
        return True

    def _renew(self):
        import redis
        try:
            self.lock.reacquire()
        except redis.exceptions.LockError:
            LOG.warning('The sweep lock was lost (the sweep stalled for '
                        'longer than its %s s lease): stopping the sweep',
                        lease())
            return False
        return True

    def end(self):
        """Release the lock, if this sweep still holds it."""
        if self.lock is None or self._started is None:
            return
        import redis
        try:
            self.lock.release()
        except redis.exceptions.LockError:
            LOG.debug('The sweep lock had already expired')
