"""The instances table of a cell database: its columns, conditions, writes.

``cellboot.objects.instance`` is what the rest of cellboot uses: the
Instance domain object and the rules of its life (see its docstring).
This module is what those rules are written with: the encoding of the
JSON fields, the conditions that select a build at a given point of its
life (building, taken by a host, untaken, unchanged since a cutoff), and
the one conditional update every change of an instance goes through
(``update``), which can hold a flow run's fence in its transaction.
Kept apart so that the object reads as its life, and the SQL as SQL.
"""

import types

from oslo_serialization import jsonutils
from oslo_utils import timeutils
import sqlalchemy as sa

from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models
from cellboot.db import ordering
from cellboot.db import rows
from cellboot import exception

INSTANCES = models.Instance.__table__

vm_states = types.SimpleNamespace(
    BUILDING='building',
    ACTIVE='active',
    ERROR='error',
    DELETED='deleted',
)

# What a building instance is doing (NULL: waiting for a host to take it).
task_states = types.SimpleNamespace(
    # In its cell, not cast to its host yet: its boot flow is still
    # handing it over (mapping it, removing its build request). Nothing
    # else sends it; the boot flow clears it right before the cast.
    SCHEDULING='scheduling',
    SPAWNING='spawning',
    # Its host never took it, or failed it and handed it back; a cell
    # conductor moves it to an alternate.
    RESCHEDULING='rescheduling',
    # Its cell ran out of hosts for it and handed it back to the super
    # conductors (``cellboot.builds.handback``), which move it to another
    # cell: no service of the cell acts on it any more.
    HANDED_BACK='handed-back',
)

JSON_FIELDS = ('flavor', 'metadata', 'build_args')
UPDATABLE_FIELDS = frozenset({
    'display_name', 'reservation_id', 'vm_state', 'task_state', 'host',
    'node', 'flavor', 'image_ref', 'availability_zone', 'metadata',
    'launched_at', 'build_args'})


def to_db(values):
    """Check the field names and encode the JSON fields."""
    unknown = set(values) - UPDATABLE_FIELDS
    if unknown:
        raise exception.Invalid(
            reason=f'instances have no settable field(s) '
                   f'{", ".join(sorted(unknown))}')
    values = dict(values)
    for name in JSON_FIELDS:
        if name in values and values[name] is not None:
            values[name] = jsonutils.dumps(values[name])
    return values


def from_db(row):
    flavor = row._mapping['flavor']
    metadata = row._mapping['metadata']
    return {'flavor': None if flavor is None else jsonutils.loads(flavor),
            'metadata': {} if metadata is None else jsonutils.loads(metadata)}


def live(uuid):
    return sa.and_(INSTANCES.c.uuid == uuid,
                   INSTANCES.c.deleted == sa.false())


def get(context, where):
    query = sa.select(INSTANCES).where(where).order_by(
        INSTANCES.c.created_at, INSTANCES.c.id)
    return context.session.execute(query).all()


@cell_db.writer
def create(context, values):
    return rows.insert(context.session, INSTANCES, values)


@cell_db.writer
def create_many(context, values_list):
    """Insert the rows, one statement per set of columns given."""
    rows.insert_many(context.session, INSTANCES, values_list)


@cell_db.reader
def existing_uuids(context, uuids):
    """Those of ``uuids`` that have a row, deleted or not."""
    return set(context.session.execute(
        sa.select(INSTANCES.c.uuid).where(
            INSTANCES.c.uuid.in_(uuids))).scalars())


@cell_db.reader
def get_where(context, where):
    return get(context, where)


@cell_db.reader
def sorted_page(context, where, value, descending, after, limit):
    """Up to ``limit`` rows passing ``where``, in ``(value, uuid)`` order
    (``descending``: reversed), those after ``after``, a ``(value,
    uuid)`` pair, when it is given. ``value`` is an expression over the
    table whose text, if any, is compared byte by byte
    (``cellboot.db.ordering``), so that a merge in Python agrees."""
    uuid = ordering.binary(INSTANCES.c.uuid)
    if after is not None:
        mark, mark_uuid = after
        if descending:
            past = sa.or_(value < mark, sa.and_(value == mark,
                                                uuid < mark_uuid))
        else:
            past = sa.or_(value > mark, sa.and_(value == mark,
                                                uuid > mark_uuid))
        where = sa.and_(where, past)
    order = (value.desc(), uuid.desc()) if descending else (value, uuid)
    return context.session.execute(sa.select(INSTANCES).where(
        where).order_by(*order).limit(limit)).all()


@cell_db.reader
def count(context, where):
    return context.session.execute(
        sa.select(sa.func.count()).select_from(INSTANCES).where(
            where)).scalar()


@cell_db.reader
def deleted_uuids(context):
    return list(context.session.execute(
        sa.select(INSTANCES.c.uuid).where(
            INSTANCES.c.deleted == sa.true())).scalars())


def last_change():
    """When an instance last changed (a new row has no updated_at)."""
    return sa.func.coalesce(INSTANCES.c.updated_at, INSTANCES.c.created_at)


def build_older_than(cutoff):
    """Building, and unchanged since before ``cutoff``.

    With a host or without: no flow leaves a building instance without
    one (``create-in-cell`` writes the chosen host with the row, a
    reschedule only moves it to the next host), so one that has none
    was left by something that will not come back for it either. A
    build handed back to the super conductors is theirs, not the
    cell's: it is never one.
    """
    return sa.and_(INSTANCES.c.deleted == sa.false(),
                   INSTANCES.c.vm_state == vm_states.BUILDING,
                   sa.or_(INSTANCES.c.task_state.is_(None),
                          INSTANCES.c.task_state != task_states.HANDED_BACK),
                   last_change() < cutoff)


def untaken_build_older_than(cutoff, unsent=False):
    """Building, no host has taken it, unchanged since before ``cutoff``.

    ``unsent``: or its boot flow has not cast it yet (task_state
    scheduling), for a flow that has ended.
    """
    untaken = INSTANCES.c.task_state.is_(None)
    if unsent:
        untaken = sa.or_(untaken,
                         INSTANCES.c.task_state == task_states.SCHEDULING)
    return sa.and_(build_older_than(cutoff), untaken)


def unbuilt_older_than(cutoff):
    """Building, no host building it, unchanged since before ``cutoff``.

    No host took it, or it is being moved off one (rescheduling): what
    a reschedule flow an operator abandoned leaves.
    """
    return sa.and_(build_older_than(cutoff), sa.or_(
        INSTANCES.c.task_state.is_(None),
        INSTANCES.c.task_state.in_((task_states.SCHEDULING,
                                    task_states.RESCHEDULING))))


@cell_db.writer
def end_scheduling(context, uuids):
    """Those of ``uuids`` still scheduling become untaken (task NULL).

    Their clock restarts (``updated_at``): a host has until
    ``[conductor] build_not_taken_timeout`` from now to take each.
    """
    context.session.execute(
        sa.update(INSTANCES).where(
            INSTANCES.c.uuid.in_(uuids), INSTANCES.c.deleted == sa.false(),
            INSTANCES.c.vm_state == vm_states.BUILDING,
            INSTANCES.c.task_state == task_states.SCHEDULING).values(
            task_state=None, updated_at=timeutils.utcnow()))


def spawning_on(host):
    """Building, taken by ``host`` (see ``Instance.claim_build``)."""
    return sa.and_(INSTANCES.c.deleted == sa.false(),
                   INSTANCES.c.vm_state == vm_states.BUILDING,
                   INSTANCES.c.task_state == task_states.SPAWNING,
                   INSTANCES.c.host == host)


def untaken_on(host, cutoff, moving=False):
    """Building, on ``host``, untaken, unchanged since before ``cutoff``.

    ``moving``: or being moved off it (task_state rescheduling).
    """
    if not moving:
        return sa.and_(untaken_build_older_than(cutoff),
                       INSTANCES.c.host == host)
    return sa.and_(build_older_than(cutoff), INSTANCES.c.host == host,
                   sa.or_(INSTANCES.c.task_state.is_(None),
                          INSTANCES.c.task_state ==
                          task_states.RESCHEDULING))


@cell_db.writer
def update(context, uuid, values, expected_vm_states=None, condition=None,
           fence=None):
    """Update a live instance; return (updated row, None) or (None, row).

    When nothing was updated the second element is the instance as it is
    (None if there is no live instance), so the caller can tell "gone"
    from "in another vm_state" within the same transaction.
    ``condition`` is one more clause the row must match. ``fence``: a
    flow run's ``cellboot.flowrun.fencing.Fence`` on this database, held
    first in the same transaction, so that the update commits only if
    that run still owns its flow (FencedOut, nothing written, if not).
    """
    if fence is not None:
        fence.hold(context.session.connection())
    where = live(uuid)
    if expected_vm_states is not None:
        where = sa.and_(where, INSTANCES.c.vm_state.in_(expected_vm_states))
    if condition is not None:
        where = sa.and_(where, condition)
    updated = rows.update(context.session, INSTANCES, where, values,
                          key=INSTANCES.c.uuid == uuid)
    if updated:
        return updated[0], None
    found = get(context, INSTANCES.c.uuid == uuid)
    if found and not found[0].deleted:
        return None, found[0]
    return None, None
