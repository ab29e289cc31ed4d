"""nova-api's view against cellboot's: the invariants of the Nova mirror.

``check(nova_api_db)`` reads nova-api's API database, the Nova cell
databases its cell mappings name, and cellboot's databases (through
``tests.functional.invariants``), at a quiet point, and returns one line
per violation:

1. every server nova-api has not deleted is placed: its mapping names a
   cell, no build request of it is left, and it is live in that Nova
   cell, mirroring a live cellboot instance of the cellboot cell of the
   same name (cell0 for cell0) in the same vm_state, task_state, host
   and node; a Nova instance in ERROR has a fault;
2. every server nova-api deleted (its mapping queued for delete, or its
   instance deleted) is deleted in cellboot too and holds no claim;
3. every live cellboot instance is a live Nova instance (every server
   of these tests comes through nova-api).

Like the invariant checker, it reads tables, not objects.
"""

import sqlalchemy as sa

from cellboot.db.cell import connection as cell_connection
from cellboot.nova import store
from cellboot.nova import tables
from tests.functional import invariants

MIRRORED = ('vm_state', 'task_state', 'host', 'node')


def _nova(api_url):
    """(mappings {uuid: (cell name, queued)}, build requests, instances
    {uuid: (cell name, row)}, faults {uuid})."""
    api = cell_connection.get_engine(api_url)
    names = {}
    instances, faults = {}, set()
    for name, (nova_id, url) in store.nova_cells(api).items():
        if nova_id in names:
            continue
        names[nova_id] = name
        engine = cell_connection.get_engine(url)
        with engine.connect() as conn:
            for row in conn.execute(sa.select(tables.INSTANCES)):
                instances[row.uuid] = (name, row)
            faults.update(conn.execute(sa.select(
                tables.INSTANCE_FAULTS.c.instance_uuid)).scalars())
    with api.connect() as conn:
        mappings = {row.instance_uuid: (names.get(row.cell_id),
                                        row.queued_for_delete)
                    for row in conn.execute(sa.select(
                        tables.INSTANCE_MAPPINGS))}
        requests = set(conn.execute(sa.select(
            tables.BUILD_REQUESTS.c.instance_uuid)).scalars())
    return mappings, requests, instances, faults


def check(nova_api_db):
    """Every violation of the module's invariants, one line each."""
    snap = invariants.Snapshot()
    live = {inst.uuid: inst for inst in snap.instances if not inst.deleted}
    mappings, requests, instances, faults = _nova(nova_api_db)
    found = [f'nova-api\'s build request of {uuid} is left'
             for uuid in sorted(requests)]
    for uuid, (cell, queued) in sorted(mappings.items()):
        nova = instances.get(uuid)
        if queued or (nova is not None and nova[1].deleted):
            if uuid in live or snap.allocations.get(uuid):
                found.append(f'server {uuid} is deleted in nova-api but '
                             f'not in cellboot')
            continue
        if cell is None:
            found.append(f'nova-api\'s mapping of {uuid} names no cell')
            continue
        if nova is None or nova[0] != cell:
            found.append(f'server {uuid} is mapped to Nova cell {cell} '
                         f'but is not there')
            continue
        row = nova[1]
        ours = live.get(uuid)
        if ours is None or snap.cell_name(ours.cell) != cell:
            found.append(f'server {uuid} is live in Nova cell {cell} but '
                         f'not in the cellboot cell of that name')
            continue
        theirs = tuple(getattr(row, name) for name in MIRRORED)
        mine = tuple(getattr(ours, name) for name in MIRRORED)
        if theirs != mine:
            found.append(f'server {uuid}: nova-api shows {theirs}, cellboot '
                         f'has {mine} ({", ".join(MIRRORED)})')
        if row.vm_state == 'error' and uuid not in faults:
            found.append(f'server {uuid} is in ERROR in nova-api without '
                         f'a fault')
    for uuid in sorted(set(live) - set(mappings)):
        found.append(f'cellboot instance {uuid} is no server of nova-api')
    return found
