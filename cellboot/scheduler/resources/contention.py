"""How the resource tables stay right when many writers race.

Every scheduler process and every conductor may claim on the same resource
provider at the same moment. Three mechanisms keep them honest; this
module holds the first, and the counters that show how often the first
and the last fired:

* **Generations (optimistic concurrency).** A writer reads a provider's
  generation *before* it reads the inventories and usages that its decision
  depends on, and then moves the generation on with a compare-and-swap in
  the same transaction as its writes. If anyone else changed the provider
  in between, the swap matches no row and the whole decision is made again
  against fresh data (``retry_on_generation_conflict``). Reading the
  generation first is what makes this correct on read-committed databases
  (PostgreSQL): every later read sees at least as much as the generation
  did, so a stale decision can only fail the swap. On MySQL's REPEATABLE
  READ all reads share one snapshot and the swap's UPDATE reads the latest
  row, which gives the same guarantee.

* **SQLite takes its write lock first.** oslo.db opens SQLite transactions
  with a deferred ``BEGIN``: reads take a snapshot, and a later write
  fails at once with "database is locked" if anyone committed since
  (SQLite cannot upgrade a stale snapshot, and does not wait). With many
  claiming threads that would turn most claims into retries. Every
  writer transaction therefore begins with ``BEGIN IMMEDIATE`` on SQLite
  (``cellboot.db.facade.take_sqlite_write_lock``, which the writer
  decorators call), taking the database's single write lock before
  anything is read. Writers then queue instead of failing, and their
  swaps never conflict on SQLite. Readers are not blocked (WAL).

* **Transactions the database asks us to repeat** (deadlocks, lock wait
  timeouts, SQLite's "database is locked") are not this module's: the
  claims use the one database retry policy, ``cellboot.db.retry``, whose
  decorator goes *outside* their reader/writer decorator, so that each
  attempt is a new transaction. Its count shows in ``STATS`` beside the
  generation conflicts.
"""

import threading

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from cellboot.conf import CONF
from cellboot.db import retry
from cellboot.metrics import sources as metrics_sources
from cellboot.scheduler.resources import tables

LOG = logging.getLogger(__name__)


class ContentionStats:
    """Process-wide counts of retries, for benchmarks, tests and logs.

    ``db_retries`` are the database retry policy's (every transaction it
    repeated in this process, claims or not).
    """

    def __init__(self):
        self._lock = threading.Lock()
        self.generation_conflicts = 0

    def count_conflict(self):
        with self._lock:
            self.generation_conflicts += 1

    def snapshot(self):
        with self._lock:
            return {'generation_conflicts': self.generation_conflicts,
                    'db_retries': retry.RETRY_COUNT.value}

    def reset(self):
        with self._lock:
            self.generation_conflicts = 0
        retry.RETRY_COUNT.reset()

    def samples(self):
        """The counts as metrics (``cellboot.metrics.sources``)."""
        figures = self.snapshot()
        yield ('cellboot_scheduler_generation_conflicts', {},
               figures['generation_conflicts'])
        yield 'cellboot_db_retries', {}, figures['db_retries']


STATS = ContentionStats()
metrics_sources.register(STATS)


class GenerationConflict(Exception):
    """The provider changed after we read it; decide again."""

    def __init__(self, provider_id, generation):
        super().__init__(f'resource provider {provider_id} is no longer at '
                         f'generation {generation}')


def _swap(providers):
    return sa.update(providers).where(
        providers.c.id == sa.bindparam('provider_id'),
        providers.c.generation == sa.bindparam('expected'),
    ).values(generation=sa.bindparam('next_generation'))


# Built once per store: claims run it on every decision (see usage.py).
_SWAPS = {store: _swap(store.providers)
          for store in (tables.CELL, tables.API)}


def compare_and_swap(context, provider_id, generation, store=tables.CELL,
                     **values):
    """Move a provider from ``generation`` to the next one, or conflict.

    Takes the provider's row lock on MySQL and PostgreSQL, so the rest of
    the caller's transaction runs with the provider held. ``values`` are
    other provider columns to write at the same time. Returns the new
    generation; raises GenerationConflict when the provider is no longer
    at ``generation`` (or is gone). ``store``: whose providers
    (``tables``).
    """
    swap = _SWAPS[store]
    query = swap.values(**values) if values else swap
    try:
        result = context.session.execute(query, {
            'provider_id': provider_id, 'expected': generation,
            'next_generation': generation + 1})
    except db_exc.DBConsistencyError:
        # MariaDB with innodb_snapshot_isolation reports the same race as
        # an error instead of matching no row.
        raise GenerationConflict(provider_id, generation)
    if result.rowcount != 1:
        raise GenerationConflict(provider_id, generation)
    return generation + 1


def _claim_attempts_spent(retry_state):
    # Read at each call: ``[scheduler] claim_retries`` may change at run
    # time (tests, a reloaded configuration).
    return retry_state.attempt_number > CONF.scheduler.claim_retries


def _count_conflict(retry_state):
    STATS.count_conflict()
    LOG.debug('%s: %s (attempt %d of %d)', retry_state.fn.__name__,
              retry_state.outcome.exception(), retry_state.attempt_number,
              CONF.scheduler.claim_retries + 1)


def retry_on_generation_conflict(on_exhausted):
    """Re-run ``fn`` when it raises GenerationConflict.

    ``fn`` must run its own transaction, so that each attempt reads fresh
    data; it is run again at once (the conflict means that the provider
    moved on, not that it is busy). After ``[scheduler] claim_retries``
    retries, calls ``on_exhausted(attempts, *args, **kwargs)``, which
    raises the caller's domain error.
    """
    def _exhausted(retry_state):
        return on_exhausted(retry_state.attempt_number, *retry_state.args,
                            **retry_state.kwargs)

    return retry.retrying(
        lambda exc: isinstance(exc, GenerationConflict),
        stop=_claim_attempts_spent,
        after=_count_conflict,
        retry_error_callback=_exhausted)
