"""Pools as records of the API database: create, read, update, delete.

A pool is a row of the API database's ``resource_providers`` with
``is_pool`` set and no cell, its ``inventories`` (checked by the same
rules as a host's, ``resources.inventory``), its traits and its scopes
(``scopes``). Its allocations are written by ``pools.claims`` only.
Everything here changes a pool in one transaction, and moves its
generation on, so that a claim decided on the old inventory fails its
compare-and-swap and decides again.
"""

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot import exception
from cellboot.db import retry
from cellboot.db.api import models
from cellboot.scheduler.pools import scopes
from cellboot.scheduler.resources import contention
from cellboot.scheduler.resources import inventory
from cellboot.scheduler.resources import tables
from cellboot.scheduler.resources import traits as trait_names
from cellboot.scheduler.resources import usage

STORE = tables.API
_PROVIDERS = STORE.providers
_INVENTORIES = STORE.inventories
_ALLOCATIONS = STORE.allocations
_TRAITS = models.ProviderTrait.__table__
MAX_NAME = 255


def _checked_name(name):
    if not isinstance(name, str) or not name.strip() \
            or len(name) > MAX_NAME or not name.isprintable():
        raise exception.InvalidPool(
            reason=f'a pool name is 1 to {MAX_NAME} printable characters')
    return name


def _checked_traits(traits):
    if isinstance(traits, str) or not isinstance(traits, (list, tuple)):
        raise exception.InvalidPool(reason='traits are a list of names')
    return sorted({trait_names.check(trait) for trait in traits})


def _checked_inventories(name, inventories):
    if not inventories:
        raise exception.InvalidPool(
            reason='a pool provides at least one resource class')
    return inventory.normalize(name, inventories)


def _pool_row(session, ident):
    """The pool named ``ident`` (uuid or name); PoolNotFound."""
    if not isinstance(ident, str):
        raise exception.PoolNotFound(pool=str(ident)[:80])
    row = session.execute(sa.select(
        _PROVIDERS.c.id, _PROVIDERS.c.uuid, _PROVIDERS.c.name,
        _PROVIDERS.c.generation,
    ).where(_PROVIDERS.c.is_pool == sa.true(),
            sa.or_(_PROVIDERS.c.uuid == ident,
                   _PROVIDERS.c.name == ident))).first()
    if row is None:
        raise exception.PoolNotFound(pool=ident[:80])
    return row


@retry.on_contention
@STORE.writer
def _create(context, name, inventories, traits, cells, zones):
    session = context.session
    found = scopes.resolve(session, cells, zones)
    uuid = uuidutils.generate_uuid()
    try:
        provider_id = session.execute(sa.insert(_PROVIDERS).values(
            uuid=uuid, name=name, generation=1, is_pool=True,
            cell_id=None)).inserted_primary_key[0]
        session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.PoolExists(name=name)
    session.execute(sa.insert(_INVENTORIES), [
        dict(inv, resource_provider_id=provider_id, resource_class=rc)
        for rc, inv in sorted(inventories.items())])
    if traits:
        session.execute(sa.insert(_TRAITS), [
            {'resource_provider_id': provider_id, 'trait': trait}
            for trait in traits])
    session.execute(sa.insert(scopes.SCOPES), [
        {'resource_provider_id': provider_id, 'cell_id': cell_id,
         'zone_id': zone_id} for cell_id, zone_id in found])
    return uuid


def create_pool(context, name, inventories, traits=(), cells=(), zones=()):
    """Create a pool; returns it as ``get_pool`` does.

    ``inventories``: ``{CLASS: {'total': N, 'reserved'?, ...}}`` (any
    class valid by ``resources.classes``); ``traits``: trait names;
    ``cells`` and ``zones``: the names (or uuids) it serves, at least
    one. Raises InvalidPool, InvalidInventory or Invalid (bad input,
    unknown cell or zone) or PoolExists (the name is taken), having
    written nothing.
    """
    name = _checked_name(name)
    inventories = _checked_inventories(name, inventories)
    traits = _checked_traits(traits)
    uuid = _create(context, name, inventories, traits, list(cells or ()),
                   list(zones or ()))
    return get_pool(context, uuid)


def _describe(session, rows):
    """Pool dicts of ``rows`` (id, uuid, name, generation)."""
    ids = [row.id for row in rows]
    if not ids:
        return []
    invs, used, traits = {}, {}, {}
    for row in session.execute(sa.select(
            _INVENTORIES.c.resource_provider_id, _INVENTORIES.c.resource_class,
            *[_INVENTORIES.c[f] for f in inventory.FIELDS],
    ).where(_INVENTORIES.c.resource_provider_id.in_(ids))):
        invs.setdefault(row.resource_provider_id, {})[row.resource_class] = \
            usage.inventory_dict(row)
    for provider_id, rc, amount in session.execute(sa.select(
            _ALLOCATIONS.c.resource_provider_id, _ALLOCATIONS.c.resource_class,
            sa.func.sum(_ALLOCATIONS.c.used),
    ).where(_ALLOCATIONS.c.resource_provider_id.in_(ids)).group_by(
            _ALLOCATIONS.c.resource_provider_id,
            _ALLOCATIONS.c.resource_class)):
        used.setdefault(provider_id, {})[rc] = int(amount)
    for provider_id, trait in session.execute(sa.select(
            _TRAITS.c.resource_provider_id, _TRAITS.c.trait,
    ).where(_TRAITS.c.resource_provider_id.in_(ids))):
        traits.setdefault(provider_id, []).append(trait)
    names = scopes.named(session)
    served = scopes.served_cells(session)
    pools = []
    for row in rows:
        inventories = invs.get(row.id, {})
        usages = {rc: used.get(row.id, {}).get(rc, 0) for rc in inventories}
        scope = names.get(row.id, {'cells': [], 'zones': []})
        pools.append({
            'uuid': row.uuid, 'name': row.name,
            'generation': row.generation, 'inventories': inventories,
            'usages': usages,
            'capacity': {rc: inventory.capacity(
                inv['total'], inv['reserved'], inv['allocation_ratio'])
                for rc, inv in inventories.items()},
            'traits': sorted(traits.get(row.id, [])),
            'cells': scope['cells'], 'zones': scope['zones'],
            'served_cells': sorted(served.get(row.id, ())),
        })
    return pools


@STORE.reader
def get_pool(context, ident):
    """One pool (by uuid or name) with its usage: ``{uuid, name,
    generation, inventories {rc: inventory}, usages {rc: used},
    capacity {rc: n}, traits [..], cells [names], zones [names],
    served_cells [cell uuids]}``. Raises PoolNotFound."""
    return _describe(context.session,
                     [_pool_row(context.session, ident)])[0]


@STORE.reader
def list_pools(context, limit=None, marker=None):
    """Every pool as ``get_pool`` shows it, by name; ``limit`` and
    ``marker`` (the uuid of the last pool of the previous page) page
    through them. Raises MarkerNotFound for an unknown marker."""
    query = sa.select(
        _PROVIDERS.c.id, _PROVIDERS.c.uuid, _PROVIDERS.c.name,
        _PROVIDERS.c.generation,
    ).where(_PROVIDERS.c.is_pool == sa.true()).order_by(_PROVIDERS.c.name)
    if marker is not None:
        last = context.session.execute(sa.select(_PROVIDERS.c.name).where(
            _PROVIDERS.c.is_pool == sa.true(),
            _PROVIDERS.c.uuid == marker)).scalar()
        if last is None:
            raise exception.MarkerNotFound(marker=str(marker)[:80])
        query = query.where(_PROVIDERS.c.name > last)
    if limit is not None:
        query = query.limit(limit)
    return _describe(context.session, context.session.execute(query).all())


def _write_exhausted(attempts, context, ident, *args):
    raise exception.ResourceProviderConflict(uuid=ident, action='changed',
                                             attempts=attempts)


@contention.retry_on_generation_conflict(_write_exhausted)
@retry.on_contention
@STORE.writer
def _delete(context, ident):
    session = context.session
    row = _pool_row(session, ident)
    consumers = session.execute(sa.select(
        sa.func.count(sa.distinct(_ALLOCATIONS.c.consumer_id)),
    ).where(_ALLOCATIONS.c.resource_provider_id == row.id)).scalar()
    if consumers:
        raise exception.PoolInUse(pool=row.name, consumers=consumers)
    # The swap proves that no claim landed since the count above.
    contention.compare_and_swap(context, row.id, row.generation,
                                store=STORE)
    for table in (_INVENTORIES, _TRAITS, scopes.SCOPES):
        session.execute(sa.delete(table).where(
            table.c.resource_provider_id == row.id))
    session.execute(sa.delete(_PROVIDERS).where(_PROVIDERS.c.id == row.id))


def delete_pool(context, ident):
    """Delete a pool; refused (PoolInUse) while anything is allocated
    from it; PoolNotFound when there is none."""
    _delete(context, ident)


@contention.retry_on_generation_conflict(_write_exhausted)
@retry.on_contention
@STORE.writer
def _update_inventories(context, ident, inventories):
    session = context.session
    row = _pool_row(session, ident)
    used, _held = usage.read_usages(context, row.id, store=STORE)
    for rc, amount in sorted(used.items()):
        inv = inventories.get(rc)
        cap = 0 if inv is None else inventory.capacity(
            inv['total'], inv['reserved'], inv['allocation_ratio'])
        if amount > cap:
            raise exception.PoolInventoryInUse(
                resource_class=rc, pool=row.name, capacity=cap, used=amount)
    contention.compare_and_swap(context, row.id, row.generation,
                                store=STORE)
    session.execute(sa.delete(_INVENTORIES).where(
        _INVENTORIES.c.resource_provider_id == row.id))
    session.execute(sa.insert(_INVENTORIES), [
        dict(inv, resource_provider_id=row.id, resource_class=rc)
        for rc, inv in sorted(inventories.items())])


def update_inventories(context, ident, inventories):
    """Replace a pool's inventories (validated as on create); refused
    with PoolInventoryInUse when a class would hold less than is in use
    (a class left out counts as capacity 0). Returns the pool."""
    row_name = get_pool(context, ident)['name']
    _update_inventories(context, ident,
                        _checked_inventories(row_name, inventories))
    return get_pool(context, ident)
