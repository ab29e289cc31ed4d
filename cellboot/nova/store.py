"""Nova's databases as the Nova mirror reads and writes them.

Each function is one short transaction on one of Nova's databases (an
engine: nova-api's API database, or one Nova cell database), and each
is safe to repeat, which is what makes the mirror resumable: a super
conductor killed anywhere in a pass leaves rows that the next pass (its
own after a restart, or another conductor's) finds written and does not
write again. Two conductors mirroring at once are safe too: an
instance is created under Nova's unique ``instances.uuid`` (the loser's
transaction writes nothing), and states move by conditional updates.
"""

import datetime

from oslo_db import exception as db_exc
import sqlalchemy as sa

from cellboot.nova import tables as t

# Nova's cell0, as ``nova-manage cell_v2 map_cell0`` maps it.
CELL0_UUID = '00000000-0000-0000-0000-000000000000'


def utcnow():
    """Nova's clock: naive UTC, to the second."""
    return datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None, microsecond=0)


def nova_cells(api):
    """``{name: (id, database_connection)}`` of Nova's cell mappings.

    Nova's cell0 is also found under ``cell0``, whatever it is named.
    """
    cells = {}
    with api.connect() as conn:
        for row in conn.execute(sa.select(
                t.CELL_MAPPINGS.c.id, t.CELL_MAPPINGS.c.uuid,
                t.CELL_MAPPINGS.c.name,
                t.CELL_MAPPINGS.c.database_connection)):
            if row.uuid == CELL0_UUID:
                cells['cell0'] = (row.id, row.database_connection)
            if row.name:
                cells.setdefault(row.name, (row.id, row.database_connection))
    return cells


def unplaced(api, limit):
    """nova-api's servers whose mapping names no cell.

    ``[(uuid, stored instance or None, build request's created_at)]``:
    those with a build request, oldest first, then those without, newest
    first. No build request
    means nova-api deleted it (its owner deleted the server while it was
    one); Nova keeps such mappings for ever, so only the newest
    ``limit`` are looked at: a pass sees every one that is new since
    the passes before, unless more than ``limit`` came at once.
    """
    mappings, requests = t.INSTANCE_MAPPINGS, t.BUILD_REQUESTS
    query = sa.select(
        mappings.c.instance_uuid, requests.c.instance,
        requests.c.created_at).select_from(
        mappings.outerjoin(requests, requests.c.instance_uuid ==
                           mappings.c.instance_uuid)).where(
        mappings.c.cell_id.is_(None))
    with api.connect() as conn:
        pending = conn.execute(query.where(
            requests.c.id.is_not(None)).order_by(mappings.c.id).limit(
            limit)).all()
        gone = conn.execute(query.where(requests.c.id.is_(None)).order_by(
            mappings.c.id.desc()).limit(limit)).all()
    return [(row.instance_uuid, row.instance, row.created_at)
            for row in pending + gone]


def requests_of(api, uuids):
    """``{uuid: row}`` of nova-api's build requests and request specs:
    what nova-api cast, as it keeps it (``instance``,
    ``block_device_mappings``, ``tags``, ``spec``, ``project_id``)."""
    requests, specs = t.BUILD_REQUESTS, t.REQUEST_SPECS
    query = sa.select(
        requests.c.instance_uuid, requests.c.project_id, requests.c.instance,
        requests.c.block_device_mappings, requests.c.tags,
        specs.c.spec).select_from(requests.join(
            specs, specs.c.instance_uuid == requests.c.instance_uuid)).where(
        requests.c.instance_uuid.in_(list(uuids)))
    with api.connect() as conn:
        return {row.instance_uuid: row for row in conn.execute(query)}


def create_instance(cell, rows, fault=None):
    """Write one instance's rows (``instance_rows.NovaRows``) and fault.

    False when the instance is there already (live or deleted): it was
    written before, by this conductor or another.
    """
    instances = t.INSTANCES
    try:
        with cell.begin() as conn:
            if conn.execute(sa.select(instances.c.id).where(
                    instances.c.uuid == rows.uuid)).first() is not None:
                return False
            for table in t.INSTANCE_TABLES:
                values = rows.by_table[table.name]
                if values:
                    conn.execute(sa.insert(table), values)
            if fault is not None:
                conn.execute(sa.insert(t.INSTANCE_FAULTS), fault)
    except db_exc.DBDuplicateEntry:
        return False
    return True


def place(api, uuid, cell_id, now):
    """Point nova-api at the instance: its mapping's cell, its build
    request removed, both or neither.

    False when the build request is gone: nova-api deleted the server
    while it was one, and its mapping must keep no cell.
    """
    with api.begin() as conn:
        removed = conn.execute(sa.delete(t.BUILD_REQUESTS).where(
            t.BUILD_REQUESTS.c.instance_uuid == uuid)).rowcount
        if not removed:
            return False
        mappings = t.INSTANCE_MAPPINGS
        conn.execute(sa.update(mappings).where(
            mappings.c.instance_uuid == uuid,
            mappings.c.cell_id.is_(None)).values(cell_id=cell_id,
                                                 updated_at=now))
    return True


# What of an instance follows cellboot's (instance_rows.state).
STATE_COLUMNS = ('vm_state', 'task_state', 'power_state', 'host', 'node',
                 'launched_on', 'launched_at', 'availability_zone')


def building(cell):
    """``{uuid: {column: value}}`` of the cell's live instances in BUILD."""
    instances = t.INSTANCES
    query = sa.select(instances.c.uuid, *(
        instances.c[name] for name in STATE_COLUMNS)).where(
        instances.c.deleted == 0, instances.c.vm_state == 'building')
    with cell.connect() as conn:
        return {row.uuid: {name: getattr(row, name)
                           for name in STATE_COLUMNS}
                for row in conn.execute(query)}


def update_state(cell, uuid, state, now, fault=None):
    """Move a live instance in BUILD to ``state``, with its fault if any.

    Conditional on the instance being live and in BUILD: a server
    nova-api deleted meanwhile stays deleted, and a fault is written by
    the one update that ended the build.
    """
    instances = t.INSTANCES
    with cell.begin() as conn:
        moved = conn.execute(sa.update(instances).where(
            instances.c.uuid == uuid, instances.c.deleted == 0,
            instances.c.vm_state == 'building').values(
            updated_at=now, **state)).rowcount
        if moved and fault is not None:
            conn.execute(sa.insert(t.INSTANCE_FAULTS), fault)
    return bool(moved)


def deleted_since(cell, since):
    """The uuids of the cell's instances deleted at ``since`` or later
    (all deleted instances when ``since`` is None)."""
    instances = t.INSTANCES
    query = sa.select(instances.c.uuid).where(instances.c.deleted != 0)
    if since is not None:
        query = query.where(instances.c.deleted_at >= since)
    with cell.connect() as conn:
        return list(conn.execute(query).scalars())


def soft_delete(cell, uuid, now):
    """Delete a live instance as Nova does (``deleted`` = its id)."""
    instances = t.INSTANCES
    with cell.begin() as conn:
        return bool(conn.execute(sa.update(instances).where(
            instances.c.uuid == uuid, instances.c.deleted == 0).values(
            deleted=instances.c.id, deleted_at=now, updated_at=now,
            vm_state='deleted', task_state=None)).rowcount)
