"""Atomic claims: a consumer's allocations, written only if they fit.

A claim is one database transaction that reads the provider's generation,
then its inventories and usages, checks every requested resource class,
and writes the allocations together with a compare-and-swap of the
generation (see ``contention``). Whatever the number of schedulers and
conductors claiming at once, and on every supported database, a provider
can therefore never hold more than its capacity: a claim decided on stale
numbers fails its swap and is decided again, up to ``[scheduler]
claim_retries`` times, and then reports ClaimConflict rather than guess.

Claims are idempotent per (consumer, provider) so that a flow step that
is replayed after a crash does no harm; releasing is idempotent too. A
scheduler placing a consumer anew asks for ``first=True``: the claim
then also checks, in its own transaction, that the consumer holds
nothing in the cell yet, and raises HeldAlready if it does, so that the
caller gives that back (and counts it) before claiming again. The check
is one indexed read in a transaction the claim opens anyway, where a
read of its own before every placement cost a transaction per decision.
"""

from oslo_log import log as logging
import sqlalchemy as sa

from cellboot.db import retry
from cellboot import exception
from cellboot.scheduler.resources import changes
from cellboot.scheduler.resources import contention
from cellboot.scheduler.resources import inventory
from cellboot.scheduler.resources import tables
from cellboot.scheduler.resources import usage

LOG = logging.getLogger(__name__)


class HeldAlready(Exception):
    """A first claim found the consumer holding allocations already.

    Nothing was written; the caller releases what the consumer holds,
    then claims again.
    """


def validated(resources):
    if not isinstance(resources, dict) or not resources:
        raise exception.Invalid(
            reason='a claim needs resources as {resource_class: amount} '
                   'with at least one resource class')
    for rc, amount in resources.items():
        if isinstance(amount, bool) or not isinstance(amount, int) \
                or amount < 1:
            raise exception.Invalid(
                reason=f'the amount of {rc} to claim must be a positive '
                       f'integer, not {amount!r}')
    return dict(resources)


def _claim_statements(store):
    providers, inventories = store.providers, store.inventories
    allocations = store.allocations
    state = sa.select(
        providers.c.id, providers.c.generation,
        sa.exists().where(
            allocations.c.consumer_id == sa.bindparam('consumer'),
        ).label('holds'),
        inventories.c.resource_class,
        *[inventories.c[field] for field in inventory.FIELDS],
    ).select_from(providers.outerjoin(
        inventories, inventories.c.resource_provider_id == providers.c.id,
    )).where(providers.c.uuid == sa.bindparam('uuid'))
    return state, sa.insert(allocations)


# Built once per store, like the reads in usage.py: claims are the hot
# path. The provider's generation and its inventories come in one
# statement (one snapshot, read before the usages, see ``contention``),
# with whether the consumer holds anything in the database (``first``
# claims): a statement is worth more Python time than SQLite takes to
# run it.
_STATEMENTS = {store: _claim_statements(store)
               for store in (tables.CELL, tables.API)}


def _read_provider_state(context, provider_uuid, consumer_uuid, store):
    """``(provider, inventories, holds, used, held)``: the generation and
    inventories first, then the usages (in that order)."""
    rows = context.session.execute(_STATEMENTS[store][0], {
        'uuid': provider_uuid, 'consumer': consumer_uuid}).all()
    if not rows:
        raise exception.ResourceProviderNotFound(uuid=provider_uuid)
    inventories = {row.resource_class: usage.inventory_dict(row)
                   for row in rows if row.resource_class is not None}
    used, held = usage.read_usages(context, rows[0].id, consumer_uuid,
                                   store=store)
    return rows[0], inventories, bool(rows[0].holds), used, held


def misfit(rc, amount, inv, in_use):
    """Why ``amount`` of ``rc`` does not fit, or None when it does."""
    if inv is None:
        return f'the provider has no {rc} inventory'
    violation = inventory.unit_violation(inv, amount)
    if violation:
        return violation
    cap = inventory.capacity(inv['total'], inv['reserved'],
                             inv['allocation_ratio'])
    if in_use + amount > cap:
        return (f'{in_use} of its capacity of {cap} is in use (total '
                f'{inv["total"]}, reserved {inv["reserved"]}, '
                f'allocation_ratio {inv["allocation_ratio"]:g})')
    return None


def _check_fit(provider_uuid, consumer_uuid, resources, inventories, used,
               held):
    """Raise ClaimFailed naming the first resource class that does not fit.

    What the consumer already holds on this provider is replaced by the
    claim, so it does not count against it.
    """
    for rc, amount in sorted(resources.items()):
        reason = misfit(rc, amount, inventories.get(rc),
                        used.get(rc, 0) - held.get(rc, 0))
        if reason:
            raise exception.ClaimFailed(
                amount=amount, resource_class=rc, uuid=provider_uuid,
                consumer=consumer_uuid, reason=reason)


def _write_claim(context, provider, provider_uuid, consumer_uuid, resources,
                 held, origin, store):
    allocations = store.allocations
    contention.compare_and_swap(context, provider.id, provider.generation,
                                store=store)
    if store.announces:
        changes.announce(context, {
            provider_uuid: changes.claimed(resources, held)}, origin)
    if held:
        context.session.execute(sa.delete(allocations).where(
            allocations.c.resource_provider_id == provider.id,
            allocations.c.consumer_id == consumer_uuid))
    context.session.execute(_STATEMENTS[store][1], [
        {'resource_provider_id': provider.id, 'consumer_id': consumer_uuid,
         'resource_class': rc, 'used': amount}
        for rc, amount in sorted(resources.items())])


def _claim_exhausted(attempts, context, consumer_uuid, provider_uuid,
                     resources, _first, _origin, _store):
    LOG.warning('Giving up claiming %s on resource provider %s for %s '
                'after %d attempts: concurrent claims kept changing it.',
                resources, provider_uuid, consumer_uuid, attempts)
    raise exception.ClaimConflict(uuid=provider_uuid,
                                  consumer=consumer_uuid, attempts=attempts)


def _claim(context, consumer_uuid, provider_uuid, resources, first,
           origin, store):
    provider, inventories, holds, used, held = _read_provider_state(
        context, provider_uuid, consumer_uuid, store)
    if first and holds:
        raise HeldAlready(consumer_uuid)
    if held == resources:
        return True  # a replay of a claim that already succeeded
    _check_fit(provider_uuid, consumer_uuid, resources, inventories, used,
               held)
    _write_claim(context, provider, provider_uuid, consumer_uuid, resources,
                 held, origin, store)
    return True


def _transactional_claim(store):
    """``_claim`` in a writer transaction of ``store``, each attempt a
    new transaction."""
    return contention.retry_on_generation_conflict(_claim_exhausted)(
        retry.on_contention(store.writer(_claim)))


_CLAIMS = {store: _transactional_claim(store)
           for store in (tables.CELL, tables.API)}


def claim_resources(context, consumer_uuid, provider_uuid, resources,
                    first=False, origin=None, store=tables.CELL):
    """Allocate ``resources`` ({rc: amount}) on a provider to a consumer.

    Returns True once the allocations are written (or were already there
    with the same amounts). A consumer that holds different amounts on
    the provider has them replaced. Raises ClaimFailed (naming the
    resource class and the numbers) when the claim does not fit,
    ClaimConflict when concurrent claims won every retry,
    ResourceProviderNotFound, or Invalid for malformed ``resources``;
    with ``first``, HeldAlready when the consumer holds anything in the
    cell (on any provider), and nothing is written. ``origin`` names
    the scheduler writing, in the cell's change feed (``changes``).
    ``store``: whose providers (``tables``; the API's are the pools).
    """
    return _CLAIMS[store](context, consumer_uuid, provider_uuid,
                          validated(resources), bool(first), origin, store)


def _release(context, consumer_uuid, provider_uuid, origin, store):
    providers, allocations = store.providers, store.allocations
    query = sa.select(
        providers.c.id, providers.c.uuid, allocations.c.resource_class,
        allocations.c.used,
    ).select_from(allocations.join(
        providers, providers.c.id == allocations.c.resource_provider_id,
    )).where(allocations.c.consumer_id == consumer_uuid)
    if provider_uuid is not None:
        query = query.where(providers.c.uuid == provider_uuid)
    released, provider_ids = {}, set()
    for provider_id, uuid, rc, used in context.session.execute(query):
        by_rc = released.setdefault(uuid, {})
        by_rc[rc] = by_rc.get(rc, 0) + used
        provider_ids.add(provider_id)
    if not provider_ids:
        return {}
    # Providers first, in id order, as the claims do: a release and a
    # claim then queue on the same row lock instead of deadlocking.
    for provider_id in sorted(provider_ids):
        context.session.execute(sa.update(providers).where(
            providers.c.id == provider_id,
        ).values(generation=providers.c.generation + 1))
    context.session.execute(sa.delete(allocations).where(
        allocations.c.consumer_id == consumer_uuid,
        allocations.c.resource_provider_id.in_(sorted(provider_ids))))
    if store.announces:
        changes.announce(context, {uuid: changes.released(amounts)
                                   for uuid, amounts in released.items()},
                         origin)
    return released


_RELEASES = {store: retry.on_contention(store.writer(_release))
             for store in (tables.CELL, tables.API)}


def release_resources(context, consumer_uuid, provider_uuid=None,
                      origin=None, store=tables.CELL):
    """Delete a consumer's allocations (on one provider, or everywhere).

    Moves each touched provider's generation on, so a claim that counted
    the released amounts decides again. Returns ``{provider_uuid: {rc:
    amount}}`` of what was released; ``{}`` when there was nothing, so a
    repeated release is harmless. ``store``: as for claims.
    """
    return _RELEASES[store](context, consumer_uuid, provider_uuid, origin,
                            store)
