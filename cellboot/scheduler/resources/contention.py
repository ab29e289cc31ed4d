"""How the resource tables stay right when many writers race.

Every scheduler process and every conductor may claim on the same resource
provider at the same moment. Two mechanisms keep them honest, and this
module holds both, plus the counters that show how often they fired:

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
  claiming threads that would turn most claims into retries.
  ``lock_for_write`` makes a write transaction's first statement a write
  that matches no row, which takes the database's single write lock
  (waiting in SQLite's busy handler, up to the busy timeout) before
  anything is read. Writers then queue instead of failing, and their
  swaps never conflict on SQLite. Readers are not blocked (WAL).

* **Transactions the database asks us to repeat.** Databases settle some
  collisions by failing one transaction: MySQL/MariaDB deadlocks and lock
  wait timeouts (``DBDeadlock``), MariaDB's "record has changed since last
  read" (``DBConsistencyError``) and SQLite's "database is locked" once its
  busy timeout is spent. ``retry_on_db_contention`` runs the transaction
  again after a short jittered pause. It must decorate the function
  *outside* its reader/writer decorator, so that each attempt is a new
  transaction.
"""

import functools
import threading

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from cellboot.conf import CONF
from cellboot.db.api import models

LOG = logging.getLogger(__name__)

_PROVIDERS = models.ResourceProvider.__table__

# Pauses between repeated transactions: 5 ms doubling, jittered, capped at
# 250 ms; 20 repeats are ~3 s at worst, far beyond any real lock queue.
DB_RETRY_INTERVAL = 0.005
DB_MAX_RETRY_INTERVAL = 0.25
DB_MAX_RETRIES = 20


class ContentionStats:
    """Process-wide counts of retries, for benchmarks, tests and logs."""

    def __init__(self):
        self._lock = threading.Lock()
        self.generation_conflicts = 0
        self.db_retries = 0

    def count(self, name):
        with self._lock:
            setattr(self, name, getattr(self, name) + 1)

    def snapshot(self):
        with self._lock:
            return {'generation_conflicts': self.generation_conflicts,
                    'db_retries': self.db_retries}

    def reset(self):
        with self._lock:
            self.generation_conflicts = 0
            self.db_retries = 0


STATS = ContentionStats()


class GenerationConflict(Exception):
    """The provider changed after we read it; decide again."""

    def __init__(self, provider_id, generation):
        super().__init__(f'resource provider {provider_id} is no longer at '
                         f'generation {generation}')


# Built once: claims run it on every decision (see usage.py).
_SWAP = sa.update(_PROVIDERS).where(
    _PROVIDERS.c.id == sa.bindparam('provider_id'),
    _PROVIDERS.c.generation == sa.bindparam('expected'),
).values(generation=sa.bindparam('next_generation'))

# A write that matches no row still takes SQLite's write lock.
_TAKE_WRITE_LOCK = sa.delete(_PROVIDERS).where(sa.false())


def compare_and_swap(context, provider_id, generation, **values):
    """Move a provider from ``generation`` to the next one, or conflict.

    Takes the provider's row lock on MySQL and PostgreSQL, so the rest of
    the caller's transaction runs with the provider held. ``values`` are
    other provider columns to write at the same time. Returns the new
    generation; raises GenerationConflict when the provider is no longer
    at ``generation`` (or is gone).
    """
    query = _SWAP.values(**values) if values else _SWAP
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


def retry_on_generation_conflict(on_exhausted):
    """Re-run ``fn`` when it raises GenerationConflict.

    ``fn`` must run its own transaction, so that each attempt reads fresh
    data. After ``[scheduler] claim_retries`` retries, calls
    ``on_exhausted(attempts, *args, **kwargs)``, which raises the caller's
    domain error.
    """
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            attempts = CONF.scheduler.claim_retries + 1
            for attempt in range(1, attempts + 1):
                try:
                    return fn(*args, **kwargs)
                except GenerationConflict as exc:
                    STATS.count('generation_conflicts')
                    LOG.debug('%s: %s (attempt %d of %d)', fn.__name__,
                              exc, attempt, attempts)
            on_exhausted(attempts, *args, **kwargs)
        return wrapper
    return decorator


def lock_for_write(context):
    """On SQLite, take the write lock before the transaction reads.

    Call it first in a writer that reads before it writes. A no-op
    elsewhere: MySQL and PostgreSQL lock rows, not the database, and the
    compare-and-swap settles their races.
    """
    session = context.session
    if session.get_bind().dialect.name == 'sqlite':
        session.execute(_TAKE_WRITE_LOCK)


def _is_db_contention(exc):
    if isinstance(exc, (db_exc.DBDeadlock, db_exc.DBConsistencyError)):
        contention = True
    else:
        # oslo.db has no filter for SQLite's busy error: it re-raises
        # sqlite3's OperationalError as SQLAlchemy's, unwrapped.
        contention = (isinstance(exc, (sa.exc.OperationalError,
                                       db_exc.DBError))
                      and 'database is locked' in str(exc))
    if contention:
        STATS.count('db_retries')
    return contention


def retry_on_db_contention(fn):
    """Repeat ``fn``'s transaction when the database asks for it."""
    return oslo_db_api.wrap_db_retry(
        retry_interval=DB_RETRY_INTERVAL,
        max_retries=DB_MAX_RETRIES,
        inc_retry_interval=True,
        max_retry_interval=DB_MAX_RETRY_INTERVAL,
        jitter=True,
        exception_checker=_is_db_contention)(fn)
