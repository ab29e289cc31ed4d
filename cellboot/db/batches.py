"""Several object calls in one transaction: per batch, or per step.

A boot atom does a few small writes per instance (create the instance,
point its mapping, drop its build request). One transaction each costs
more than the writes themselves (session, connection, BEGIN, COMMIT):
a multi-create of 500 spent about 9 ms per instance per atom that way.
``in_batches`` runs the per-instance step for a chunk of instances in
one transaction: the domain objects' own readers and writers join it.

A chunk whose transaction fails is rolled back as a whole and run again
one instance at a time, each in a transaction of its own, so that the
failure stays with the instance that caused it (``on_error``) and its
siblings go on; a step is atomic either way. Steps must therefore be
plain database work: nothing that cannot be rolled back (a cast, a call
to the scheduler) belongs in them; callers do that afterwards, from the
results.

``transaction`` is the same for one step: ``cellboot.builds.fates``
writes an ERROR instance, its fault and its action event together with
it.

This is database mechanics (which transaction the objects join), not a
flow's: it lives in ``db/`` so that the flows' atoms and the domain
services below them share it without importing each other.
"""

import contextlib

from oslo_log import log as logging

from cellboot.db import facade

LOG = logging.getLogger(__name__)

# Instances per transaction: big enough to pay the transaction once for
# many, small enough not to hold an SQLite database's write lock for
# long (about 50 ms) while the scheduler and compute hosts wait.
CHUNK_SIZE = 50


def chunks(items, size=CHUNK_SIZE):
    items = list(items)
    for start in range(0, len(items), size):
        yield items[start:start + size]


def in_batches(context, manager, uuids, step, on_error=None, mode='writer',
               before_chunk=None):
    """``{uuid: step(uuid)}``, a chunk of instances per transaction.

    ``manager`` is the transaction context manager of the database the
    step works on, with ``context`` (targeted at it, for a cell); mode
    'reader' for steps that only read. When a chunk fails, each of its
    instances is stepped alone; an instance that fails alone gets
    ``on_error(uuid, exc)`` as its result, or raises without
    ``on_error``. ``before_chunk()``, if given, is called before each
    chunk's transaction: a flow's atom checks there that its run still
    owns the flow (``cellboot.flowrun.fencing``); what it raises stops
    the batches.
    """
    return in_chunks(context, manager, uuids,
                     lambda chunk: {uuid: step(uuid) for uuid in chunk},
                     on_error=on_error, mode=mode, before_chunk=before_chunk)


def in_chunks(context, manager, uuids, chunk_step, on_error=None,
              mode='writer', before_chunk=None):
    """``in_batches`` for a step that works on a whole chunk at once.

    ``chunk_step(uuids)`` returns ``{uuid: result}`` for the chunk, with
    a few statements for all of them (a multi-row INSERT) rather than
    some per instance. When a chunk fails, it is called again for each
    instance alone, in a transaction of its own, as ``in_batches`` does.
    """
    results = {}
    for chunk in chunks(uuids):
        if before_chunk is not None:
            before_chunk()
        try:
            results.update(_in_transaction(context, manager, mode, chunk,
                                           chunk_step))
        except Exception as exc:
            LOG.info('A batch of %d instances failed (%s); retrying them '
                     'one by one', len(chunk), exc)
            for uuid in chunk:
                try:
                    results.update(_in_transaction(context, manager, mode,
                                                   [uuid], chunk_step))
                except Exception as one_exc:
                    if on_error is None:
                        raise
                    results[uuid] = on_error(uuid, one_exc)
    return results


def _in_transaction(context, manager, mode, uuids, chunk_step):
    with transaction(context, manager, mode):
        return chunk_step(uuids)


@contextlib.contextmanager
def transaction(context, manager, mode='writer'):
    """One transaction of ``manager`` that the objects' calls join.

    A writer on SQLite takes the write lock first, as the objects' own
    writers do (``facade.take_sqlite_write_lock``).
    """
    with getattr(manager, mode).using(context) as session:
        if mode == 'writer':
            facade.take_sqlite_write_lock(session)
        yield session
