"""A consumer's share of the pools: claimed all at once, or not at all.

The claim on each pool is a host claim on the API store
(``scheduler.resources.claims`` with ``tables.API``): one transaction,
the pool's generation compare-and-swapped, usage never above
``(total - reserved) * allocation_ratio``, idempotent per consumer, so
that a replayed step does no harm. The consumer is the instance uuid.
"""

from oslo_log import log as logging
import sqlalchemy as sa

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.scheduler.resources import claims as resource_claims
from cellboot.scheduler.resources import classes
from cellboot.scheduler.resources import inventory
from cellboot.scheduler.resources import tables

LOG = logging.getLogger(__name__)

STORE = tables.API
# What a pool's refusal looks like: the next serving pool is tried.
_REFUSALS = (exception.ClaimFailed, exception.ClaimConflict,
             exception.ResourceProviderNotFound)


# Bounds of what one claim may name: far above any real selection.
MAX_ENTRIES = 64
MAX_ALTERNATES = 256


def _pool_uuid(value):
    if value is not None and not uuidutils.is_uuid_like(value):
        raise exception.Invalid(reason='a pool is named by its uuid')
    return value


def checked_entries(entries):
    """``selection['pools']`` as a caller over RPC may send it, checked:
    a list of ``{'uuid', 'resources': {class: amount}, 'alternates'}``.
    Raises Invalid naming what is wrong."""
    if not isinstance(entries, list) or len(entries) > MAX_ENTRIES:
        raise exception.Invalid(
            reason=f'pool entries are a list of at most {MAX_ENTRIES}')
    checked = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise exception.Invalid(reason='a pool entry is a mapping')
        alternates = entry.get('alternates') or []
        if not isinstance(alternates, list) or \
                len(alternates) > MAX_ALTERNATES:
            raise exception.Invalid(
                reason='alternates are a list of pool uuids')
        resources = resource_claims.validated(entry.get('resources'))
        for rc, amount in resources.items():
            classes.check(rc)
            if amount > inventory.MAX_AMOUNT:
                raise exception.Invalid(
                    reason=f'the amount of {rc} must be at most '
                           f'{inventory.MAX_AMOUNT}')
        checked.append({
            'uuid': _pool_uuid(entry.get('uuid')),
            'name': entry.get('name') if isinstance(entry.get('name'),
                                                    str) else None,
            'resources': resources,
            'alternates': [_pool_uuid(uuid) for uuid in alternates]})
    return checked


def _claim_one(context, consumer_uuid, entry):
    """The uuid of the pool of ``entry`` (or of its alternates) that
    gave ``entry['resources']``; NoValidHost naming the classes when
    none did."""
    tried = [uuid for uuid in [entry.get('uuid')] + list(
        entry.get('alternates') or ()) if uuid]
    why = 'no pool serving the cell has room'
    for uuid in dict.fromkeys(tried):
        try:
            resource_claims.claim_resources(
                context, consumer_uuid, uuid, entry['resources'],
                store=STORE)
            return uuid
        except _REFUSALS as exc:
            why = str(exc)
            LOG.info('Pool %s refused %s for %s: %s', uuid,
                     entry['resources'], consumer_uuid, exc)
    classes = ', '.join(f'{rc}={amount}' for rc, amount
                        in sorted(entry['resources'].items()))
    raise exception.NoValidHost(
        reason=f'No resource pool could give {classes}: {why}')


@STORE.reader
def holdings(context, consumer_uuid):
    """``{pool uuid: {rc: amount}}`` the consumer holds in pools."""
    providers, allocations = STORE.providers, STORE.allocations
    held = {}
    for uuid, rc, used in context.session.execute(sa.select(
            providers.c.uuid, allocations.c.resource_class,
            allocations.c.used,
    ).select_from(allocations.join(
        providers, providers.c.id == allocations.c.resource_provider_id,
    )).where(allocations.c.consumer_id == consumer_uuid)):
        by_rc = held.setdefault(uuid, {})
        by_rc[rc] = by_rc.get(rc, 0) + used
    return held


def _held_already(entry, current):
    """The pool of ``entry``'s candidates on which a previous run of
    the same claim holds exactly its resources, or None."""
    for uuid in [entry.get('uuid')] + list(entry.get('alternates') or ()):
        if uuid and current.get(uuid) == entry['resources']:
            return uuid
    return None


def claim(context, consumer_uuid, entries, replay=False):
    """Claim every entry of ``selection['pools']`` for the consumer.

    Returns ``[{'uuid', 'resources'}]`` of what is now held. On any
    failure every pool allocation of the consumer is released before
    the error goes up (NoValidHost naming the classes, or a database
    error), so that either all are held or none. ``replay``: a resumed
    flow's claim, which keeps what a dead run of it claimed (possibly
    on an alternate pool) instead of claiming a second share.
    """
    held = []
    current = holdings(context, consumer_uuid) if replay else {}
    try:
        for entry in entries or ():
            uuid = (_held_already(entry, current)
                    or _claim_one(context, consumer_uuid, entry))
            held.append({'uuid': uuid,
                         'resources': dict(entry['resources'])})
    except BaseException:
        release(context, consumer_uuid)
        raise
    return held


def release(context, consumer_uuid):
    """Give back everything the consumer holds in pools; ``{pool uuid:
    {rc: amount}}`` released, ``{}`` when nothing (repeating is
    harmless)."""
    return resource_claims.release_resources(context, consumer_uuid,
                                             store=STORE)


@STORE.reader
def consumers_before(context, older_than, limit):
    """Up to ``limit`` consumers holding pool allocations made before
    ``older_than`` (a naive UTC datetime): what the sweep of forgotten
    pool shares looks at (``cellboot.conductor.pool_orphans``)."""
    allocations = STORE.allocations
    return [row[0] for row in context.session.execute(sa.select(
        allocations.c.consumer_id).where(
            allocations.c.created_at < older_than,
    ).distinct().order_by(allocations.c.consumer_id).limit(limit))]
