"""An operator's changes to the traits of one compute host.

Read for ``GET/PUT/DELETE /os-resource-providers/{uuid}/traits`` and
``cellboot-manage provider trait`` alike. A host's provider lives in its
cell's database: it is looked for in every mapped cell at once (by uuid,
or by name for the CLI), then written there through
``provider_traits``, which announces the change on that cell's change
feed so the cell's schedulers re-read the host.

A custom trait must have been created (``cellboot-manage trait create``
or ``PUT /os-traits/{name}``) before a host is given it, as for a
flavor's extra spec: a typo is refused rather than stored.

A host whose ``[compute] traits`` is set owns its set: its next report
replaces whatever was written here. A host that does not set it keeps
the traits written here (``cellboot.compute.registration``).

Shared pools live in the API database and are not handled here: a pool
uuid is refused with a clear error.
"""

import sqlalchemy as sa

from cellboot import context as cb_context
from cellboot.db.api import connection as api_db
from cellboot.db.api import models as api_models
from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models as cell_models
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import resource_catalog
from cellboot.scheduler.resources import provider_traits
from cellboot.scheduler.resources import traits as trait_names

# What a change may carry at once: the most a provider may have.
MAX_TRAITS = provider_traits.MAX_PER_PROVIDER

_HOSTS = cell_models.ResourceProvider.__table__
_API_PROVIDERS = api_models.ResourceProvider.__table__


@cell_db.reader
def _matching(context, key):
    """``[(uuid, name)]`` of the cell's providers with uuid or name
    ``key``."""
    return [tuple(row) for row in context.session.execute(
        sa.select(_HOSTS.c.uuid, _HOSTS.c.name).where(sa.or_(
            _HOSTS.c.uuid == key, _HOSTS.c.name == key)))]


@api_db.reader
def _is_pool(context, key):
    return context.session.execute(sa.select(_API_PROVIDERS.c.id).where(
        _API_PROVIDERS.c.uuid == key)).first() is not None


def _cells(context):
    return [cell for cell in cell_mapping.CellMapping.get_all(context)
            if not cell.is_cell0]


def find(context, key, timeout):
    """``(cell mapping, provider uuid, provider name)`` of the host whose
    uuid or name is ``key``.

    Raises Invalid for a shared pool's uuid or a name two hosts share,
    ResourceProviderNotFound otherwise (naming the cells that did not
    answer, where the host may be).
    """
    if not isinstance(key, str) or not key or len(key) > 255 \
            or '\x00' in key:
        raise exception.ResourceProviderNotFound(uuid=repr(key)[:80])
    cells = _cells(context)
    results = cb_context.scatter_gather_cells(
        context, cells, timeout, _matching, key, skip_down_cells=True)
    found, unreachable = [], []
    for cell in cells:
        result = results.get(cell.uuid, cb_context.did_not_respond_sentinel)
        if cb_context.is_cell_failure(result):
            unreachable.append(cell.name)
            continue
        found.extend((cell, uuid, name) for uuid, name in result)
    by_uuid = [item for item in found if item[1] == key]
    if by_uuid:
        return by_uuid[0]
    if len(found) > 1:
        raise exception.Invalid(
            reason=f'{len(found)} hosts are named {key[:80]!r}: give the '
                   f'uuid of one ({", ".join(item[1] for item in found)})')
    if found:
        return found[0]
    if _is_pool(context, key):
        raise exception.Invalid(
            reason=f'{key} is a shared pool: the traits of pools are not '
                   f'set here, only those of compute hosts')
    if unreachable:
        raise exception.ResourceProviderNotFound(
            uuid=f'{key[:80]} (cells {", ".join(sorted(unreachable))} did '
                 f'not answer: it may be there; try again later)')
    raise exception.ResourceProviderNotFound(uuid=key[:80])


def checked(context, names):
    """``names`` (a list) sorted without duplicates, each a standard or
    created custom trait; Invalid naming the first that is not."""
    names = provider_traits.normalize(names)
    missing = resource_catalog.TRAITS.missing(
        context, [name for name in names if trait_names.is_custom(name)])
    if missing:
        raise exception.Invalid(
            reason=f'custom trait {missing[0]} was not created '
                   f'(cellboot-manage trait create {missing[0]})')
    return names


def show(context, key, timeout):
    """``(cell, uuid, name, traits)`` of one host."""
    cell, uuid, name = find(context, key, timeout)
    with cb_context.target_cell(context, cell) as cctxt:
        found = provider_traits.get_traits(cctxt, [uuid])
    return cell, uuid, name, found.get(uuid, [])


_CHANGES = {'set': provider_traits.set_traits,
            'add': provider_traits.add_traits,
            'remove': provider_traits.remove_traits}
CHANGES = tuple(_CHANGES)


def change(context, key, how, names, timeout):
    """Apply ``how`` (``set``, ``add`` or ``remove``) of ``names`` to the
    host ``key``; ``(cell, uuid, name, traits now)``.

    Names to remove need not exist in the catalog (a trait deleted
    since must still be removable); names to set or add must.
    """
    if how == 'remove':
        names = provider_traits.normalize(names)
    else:
        names = checked(context, names)
    cell, uuid, name = find(context, key, timeout)
    with cb_context.target_cell(context, cell) as cctxt:
        now = _CHANGES[how](cctxt, uuid, names)
    return cell, uuid, name, now
