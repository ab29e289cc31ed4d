"""The traits of the cell's resource providers (its compute hosts).

A trait says what a host is (``HW_CPU_X86_AVX2``, ``CUSTOM_SSD``); a
request requires or forbids it (``TraitsFilter``), never consumes it.
A compute host reports its traits with its inventories
(``providers.update_provider``); an operator's tool may set, add or
remove them here. Every write that changes a provider's traits is
announced on the cell's change feed in its own transaction, like an
inventory change (``changes.announce`` with nothing to add: re-read the
provider), so the cell's other schedulers re-read the provider and
learn them.

``read`` and ``write`` take no transaction of their own: the provider
update calls them inside its write transaction.
"""

import sqlalchemy as sa

from cellboot.db import retry
from cellboot import exception
from cellboot.scheduler.resources import changes
from cellboot.scheduler.resources import tables
from cellboot.scheduler.resources import traits as trait_names

_PROVIDERS = tables.PROVIDERS
_TRAITS = tables.PROVIDER_TRAITS

# Far above what one host has (os-traits lists a few hundred in all).
MAX_PER_PROVIDER = 1000


def normalize(traits):
    """``traits`` (a list of names) as a sorted list without duplicates;
    Invalid naming the first bad name."""
    if not isinstance(traits, (list, tuple, set, frozenset)):
        raise exception.Invalid(reason='traits must be a list of trait '
                                       'names')
    if len(traits) > MAX_PER_PROVIDER:
        raise exception.Invalid(reason=f'a provider has at most '
                                       f'{MAX_PER_PROVIDER} traits')
    return sorted({trait_names.check(trait) for trait in traits})


def read(context, provider_id):
    """The set of traits of one provider, in the caller's transaction."""
    return set(context.session.execute(sa.select(_TRAITS.c.trait).where(
        _TRAITS.c.resource_provider_id == provider_id)).scalars())


def write(context, provider_id, current, wanted):
    """Make the provider's traits ``wanted`` (a set), given ``current``;
    in the caller's transaction. Returns whether anything changed."""
    removed = current - wanted
    added = wanted - current
    if removed:
        context.session.execute(sa.delete(_TRAITS).where(
            _TRAITS.c.resource_provider_id == provider_id,
            _TRAITS.c.trait.in_(sorted(removed))))
    if added:
        context.session.execute(sa.insert(_TRAITS), [
            {'resource_provider_id': provider_id, 'trait': trait}
            for trait in sorted(added)])
    return bool(removed or added)


def delete_all(context, provider_id):
    """Forget a provider's traits (it is being deleted)."""
    context.session.execute(sa.delete(_TRAITS).where(
        _TRAITS.c.resource_provider_id == provider_id))


@tables.reader
def get_traits(context, provider_uuids=None):
    """``{provider_uuid: [trait, ...]}`` (sorted) of the providers that
    have any; every provider of the cell without ``provider_uuids``."""
    query = sa.select(_PROVIDERS.c.uuid, _TRAITS.c.trait).select_from(
        _TRAITS.join(_PROVIDERS,
                     _PROVIDERS.c.id == _TRAITS.c.resource_provider_id))
    if provider_uuids is not None:
        query = query.where(_PROVIDERS.c.uuid.in_(list(provider_uuids)))
    result = {}
    for uuid, trait in context.session.execute(query):
        result.setdefault(uuid, []).append(trait)
    return {uuid: sorted(names) for uuid, names in result.items()}


@retry.on_contention
@tables.writer
def _change(context, uuid, change, origin):
    row = context.session.execute(sa.select(_PROVIDERS.c.id).where(
        _PROVIDERS.c.uuid == uuid)).first()
    if row is None:
        raise exception.ResourceProviderNotFound(uuid=uuid)
    current = read(context, row.id)
    wanted = change(current)
    if len(wanted) > MAX_PER_PROVIDER:
        raise exception.Invalid(reason=f'a provider has at most '
                                       f'{MAX_PER_PROVIDER} traits')
    if write(context, row.id, current, wanted):
        changes.announce(context, {uuid: None}, origin)
    return sorted(wanted)


def set_traits(context, uuid, traits, origin=None):
    """Make a provider's traits exactly ``traits``; returns them sorted.

    Raises Invalid (a bad name, nothing written) or
    ResourceProviderNotFound. ``origin``: as for ``claims``.
    """
    wanted = set(normalize(traits))
    return _change(context, uuid, lambda current: wanted, origin)


def add_traits(context, uuid, traits, origin=None):
    """Give a provider ``traits`` besides those it has; returns all."""
    added = set(normalize(traits))
    return _change(context, uuid, lambda current: current | added, origin)


def remove_traits(context, uuid, traits, origin=None):
    """Take ``traits`` from a provider (absent ones are no error);
    returns those left."""
    removed = set(normalize(traits))
    return _change(context, uuid, lambda current: current - removed, origin)
