"""Resource providers: one per compute node, with its inventories.

A compute host reports its capacity when it starts and whenever it
changes; ``update_provider`` makes its cell's database say exactly
that, whether the provider is new or known. The provider's uuid is its
compute node's uuid; its cell is the database it lives in.

Every change moves the provider's generation on with the same
compare-and-swap as the claims (see ``contention``), so a claim that
checked capacity against the old inventory fails its swap and checks
again. A report that changes nothing writes nothing and keeps the
generation: hosts report periodically, and a no-op report must not make
concurrent claims on that host start over.
"""

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from cellboot.db import retry
from cellboot import exception
from cellboot.scheduler.resources import changes
from cellboot.scheduler.resources import contention
from cellboot.scheduler.resources import inventory
from cellboot.scheduler.resources import provider_traits
from cellboot.scheduler.resources import tables
from cellboot.scheduler.resources import usage

LOG = logging.getLogger(__name__)

_PROVIDERS = tables.PROVIDERS
_INVENTORIES = tables.INVENTORIES
_ALLOCATIONS = tables.ALLOCATIONS


def _check_name_free(context, uuid, name):
    other = context.session.execute(
        sa.select(_PROVIDERS.c.uuid).where(_PROVIDERS.c.name == name,
                                           _PROVIDERS.c.uuid != uuid)
    ).scalar()
    if other is not None:
        raise exception.ResourceProviderExists(uuid=uuid, name=name,
                                               other=other)


def _insert_inventories(context, provider_id, inventories):
    if inventories:
        context.session.execute(sa.insert(_INVENTORIES), [
            dict(inv, resource_provider_id=provider_id, resource_class=rc)
            for rc, inv in inventories.items()])


def _create(context, uuid, values, inventories, traits):
    try:
        result = context.session.execute(sa.insert(_PROVIDERS).values(
            uuid=uuid, generation=1, **values))
    except db_exc.DBDuplicateEntry:
        # The same host reported twice at once; the next attempt finds
        # the row the other report created and updates it.
        raise contention.GenerationConflict(uuid, 0)
    provider_id = result.inserted_primary_key[0]
    _insert_inventories(context, provider_id, inventories)
    provider_traits.write(context, provider_id, set(), set(traits or ()))
    return 1


def _replace_inventories(context, row, current, inventories):
    """Write the difference between ``current`` and ``inventories``."""
    used, _held = usage.read_usages(context, row.id)
    for rc in current.keys() - inventories.keys():
        if used.get(rc):
            raise exception.InventoryInUse(resource_class=rc, uuid=row.uuid,
                                           used=used[rc])
    for rc, inv in inventories.items():
        cap = inventory.capacity(inv['total'], inv['reserved'],
                                 inv['allocation_ratio'])
        if used.get(rc, 0) > cap:
            # The host knows its own hardware; refusing the report would
            # not give the capacity back. New claims fail until usage
            # drops below the new capacity.
            LOG.warning('Resource provider %s now has %s of %s %s in use: '
                        'it is over-committed until servers leave it.',
                        row.uuid, used[rc], cap, rc)
    owned = _INVENTORIES.c.resource_provider_id == row.id
    removed = list(current.keys() - inventories.keys())
    if removed:
        context.session.execute(sa.delete(_INVENTORIES).where(
            owned, _INVENTORIES.c.resource_class.in_(removed)))
    for rc, inv in inventories.items():
        if rc in current and current[rc] != inv:
            context.session.execute(sa.update(_INVENTORIES).where(
                owned, _INVENTORIES.c.resource_class == rc).values(**inv))
    _insert_inventories(context, row.id, {
        rc: inv for rc, inv in inventories.items() if rc not in current})


def _update_exhausted(attempts, context, uuid, *args, **kwargs):
    raise exception.ResourceProviderConflict(uuid=uuid, action='updated',
                                             attempts=attempts)


@contention.retry_on_generation_conflict(_update_exhausted)
@retry.on_contention
@tables.writer
def _update(context, uuid, values, inventories, origin, traits=None):
    row = context.session.execute(
        sa.select(_PROVIDERS).where(_PROVIDERS.c.uuid == uuid)).first()
    if row is None or row.name != values['name']:
        _check_name_free(context, uuid, values['name'])
    if row is None:
        generation = _create(context, uuid, values, inventories, traits)
        changes.announce(context, {uuid: None}, origin)
        return generation
    # Traits are never claimed: they change without a swap, announced
    # like any change of the provider.
    traits_changed = traits is not None and provider_traits.write(
        context, row.id, provider_traits.read(context, row.id), set(traits))
    # The generation was read first: every read below is at least as
    # fresh, so a change made meanwhile fails the swap.
    current = usage.read_inventories(context, row.id)
    changed = {key: value for key, value in values.items()
               if row._mapping[key] != value}
    if not changed and current == inventories:
        if traits_changed:
            changes.announce(context, {uuid: None}, origin)
        return row.generation
    generation = contention.compare_and_swap(context, row.id, row.generation,
                                             **changed)
    _replace_inventories(context, row, current, inventories)
    changes.announce(context, {uuid: None}, origin)
    return generation


def update_provider(context, uuid, name, inventories,
                    availability_zone='nova', origin=None, traits=None):
    """Create or update a provider of the cell and replace its inventories
    (and its traits, a list of names, unless ``traits`` is None).

    ``inventories`` is ``{resource_class: {'total': int, 'reserved': 0,
    'allocation_ratio': 1.0, 'min_unit': 1, 'max_unit': total,
    'step_size': 1}}`` with the defaults shown; a resource class left out
    is removed (refused with InventoryInUse while it is allocated).
    Returns the provider's generation, which moves on only when something
    changed, so repeating a report is harmless. Raises InvalidInventory,
    ResourceProviderExists (``name`` taken by another provider) or
    ResourceProviderConflict. ``origin``: as for ``claims``.
    """
    inventories = inventory.normalize(uuid, inventories)
    if traits is not None:
        traits = provider_traits.normalize(traits)
    values = {'name': name, 'availability_zone': availability_zone}
    return _update(context, uuid, values, inventories, origin, traits)


@tables.reader
def get_provider(context, uuid):
    """The provider as a dict, with its inventories and generation.

    Keys: uuid, name, availability_zone, generation, inventories
    (``{rc: inventory}``), traits (sorted names). Raises
    ResourceProviderNotFound.
    """
    row = context.session.execute(sa.select(
        _PROVIDERS.c.id, _PROVIDERS.c.uuid, _PROVIDERS.c.name,
        _PROVIDERS.c.availability_zone, _PROVIDERS.c.generation,
    ).where(_PROVIDERS.c.uuid == uuid)).first()
    if row is None:
        raise exception.ResourceProviderNotFound(uuid=uuid)
    provider = dict(row._mapping)
    provider_id = provider.pop('id')
    provider['inventories'] = usage.read_inventories(context, provider_id)
    provider['traits'] = sorted(provider_traits.read(context, provider_id))
    return provider


def _delete_exhausted(attempts, context, uuid, _origin):
    raise exception.ResourceProviderConflict(uuid=uuid, action='deleted',
                                             attempts=attempts)


@contention.retry_on_generation_conflict(_delete_exhausted)
@retry.on_contention
@tables.writer
def _delete(context, uuid, origin):
    row = context.session.execute(sa.select(
        _PROVIDERS.c.id, _PROVIDERS.c.generation,
    ).where(_PROVIDERS.c.uuid == uuid)).first()
    if row is None:
        raise exception.ResourceProviderNotFound(uuid=uuid)
    consumers = context.session.execute(sa.select(
        sa.func.count(sa.distinct(_ALLOCATIONS.c.consumer_id)),
    ).where(_ALLOCATIONS.c.resource_provider_id == row.id)).scalar()
    if consumers:
        raise exception.ResourceProviderInUse(uuid=uuid, consumers=consumers)
    # The swap holds the provider and proves no claim landed since the
    # count above.
    contention.compare_and_swap(context, row.id, row.generation)
    context.session.execute(sa.delete(_INVENTORIES).where(
        _INVENTORIES.c.resource_provider_id == row.id))
    provider_traits.delete_all(context, row.id)
    context.session.execute(sa.delete(_PROVIDERS).where(
        _PROVIDERS.c.id == row.id))
    changes.announce(context, {uuid: None}, origin)


def delete_provider(context, uuid, origin=None):
    """Delete a provider and its inventories (a compute node went away).

    Refuses with ResourceProviderInUse while any consumer holds
    allocations on it; raises ResourceProviderNotFound when it is gone.
    """
    _delete(context, uuid, origin)
