"""Resource providers as an operator reads them, from either schema.

A cell's database holds its hosts, the API database the shared pools;
both declare the provider, inventory, allocation and trait tables with
the same columns (``resource_columns``), so one read serves both: the
caller passes the module of models of its schema and the transaction it
runs in. Four statements whatever the number of providers: providers,
inventories, usage sums, traits.
"""

import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models as api_models
from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models as cell_models

INVENTORY_FIELDS = ('total', 'reserved', 'allocation_ratio', 'min_unit',
                    'max_unit', 'step_size')


def read(session, models, where=None):
    """``[{'id', 'uuid', 'name', 'availability_zone', 'inventories':
    {CLASS: {..., 'used'}}, 'traits': [...]}]`` by name.

    ``models``: ``cellboot.db.cell.models`` or ``cellboot.db.api.models``;
    ``where`` an optional condition on the provider table.
    """
    providers = models.ResourceProvider.__table__
    inventories = models.Inventory.__table__
    allocations = models.Allocation.__table__
    traits = models.ProviderTrait.__table__
    query = sa.select(providers.c.id, providers.c.uuid, providers.c.name,
                      providers.c.availability_zone).order_by(
                          providers.c.name)
    if where is not None:
        query = query.where(where)
    found = {row.id: {'id': row.id, 'uuid': row.uuid, 'name': row.name,
                      'availability_zone': row.availability_zone,
                      'inventories': {}, 'traits': []}
             for row in session.execute(query)}
    if not found:
        return []
    ids = sorted(found)
    for row in session.execute(sa.select(inventories).where(
            inventories.c.resource_provider_id.in_(ids))):
        found[row.resource_provider_id]['inventories'][
            row.resource_class] = dict(
                {field: row._mapping[field] for field in INVENTORY_FIELDS},
                used=0)
    for provider_id, rc, used in session.execute(sa.select(
            allocations.c.resource_provider_id, allocations.c.resource_class,
            sa.func.sum(allocations.c.used)).where(
                allocations.c.resource_provider_id.in_(ids)).group_by(
                    allocations.c.resource_provider_id,
                    allocations.c.resource_class)):
        inventory = found[provider_id]['inventories'].get(rc)
        if inventory is not None:
            inventory['used'] = int(used or 0)
    for provider_id, trait in session.execute(sa.select(
            traits.c.resource_provider_id, traits.c.trait).where(
                traits.c.resource_provider_id.in_(ids)).order_by(
                    traits.c.trait)):
        found[provider_id]['traits'].append(trait)
    return sorted(found.values(), key=lambda item: (item['name'],
                                                    item['uuid']))


@cell_db.reader
def hosts(context):
    """The hosts of the cell ``context`` targets."""
    return read(context.session, cell_models)


def _scopes(session, ids):
    """``{pool id: {'cells': [names], 'zones': [names]}}``."""
    scopes = api_models.ResourcePoolScope.__table__
    cells = api_models.CellMapping.__table__
    zones = api_models.Zone.__table__
    found = {pool_id: {'cells': [], 'zones': []} for pool_id in ids}
    rows = session.execute(sa.select(
        scopes.c.resource_provider_id, cells.c.name.label('cell'),
        zones.c.name.label('zone')).select_from(scopes.outerjoin(
            cells, scopes.c.cell_id == cells.c.id).outerjoin(
            zones, scopes.c.zone_id == zones.c.id)).where(
                scopes.c.resource_provider_id.in_(sorted(ids))))
    for row in rows:
        if row.cell is not None:
            found[row.resource_provider_id]['cells'].append(row.cell)
        if row.zone is not None:
            found[row.resource_provider_id]['zones'].append(row.zone)
    for serves in found.values():
        serves['cells'].sort()
        serves['zones'].sort()
    return found


@api_db.reader
def pools(context):
    """The shared pools of the API database, each with ``serves``."""
    providers = api_models.ResourceProvider.__table__
    found = read(context.session, api_models,
                 providers.c.is_pool.is_(sa.true()))
    scopes = _scopes(context.session, [pool['id'] for pool in found])
    for pool in found:
        pool['serves'] = scopes[pool['id']]
    return found
