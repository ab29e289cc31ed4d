"""The statements of ``cellboot-manage db purge``, one batch at a time.

Each function reads or deletes one bounded batch of rows in one
database, in one transaction, and says how many rows of each table it
touched. What may be purged, and in which order across databases, is
decided by the caller (``cellboot.cmd.manage.purge``); each delete
checks again, in its own statement, the condition its rows were chosen
on (soft-deleted, queued for delete, ended), so that a row that changed
since it was read is left alone.

* a cell database (cell0 included): soft-deleted instances and their
  history (faults, actions, action events);
* the API database: the mappings, request specs and group memberships
  of purged instances, and request specs whose mapping is gone;
* TaskFlow's tables (flow database, each cell database): flows that
  ended (SUCCESS or REVERTED), with their atoms and logbook.
"""

import sqlalchemy as sa
from taskflow.persistence.backends.sqlalchemy import tables as tf_tables
from taskflow import states

from cellboot.db.api import connection as api_db
from cellboot.db.api import models as api_models
from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models as cell_models

# Flows in these states are done for good: nothing resumes them.
ENDED_FLOW_STATES = (states.SUCCESS, states.REVERTED)

_INSTANCES = cell_models.Instance.__table__
_FAULTS = cell_models.InstanceFault.__table__
_ACTIONS = cell_models.InstanceAction.__table__
_EVENTS = cell_models.InstanceActionEvent.__table__

_MAPPINGS = api_models.InstanceMapping.__table__
_SPECS = api_models.RequestSpec.__table__
_MEMBERS = api_models.ServerGroupMember.__table__

_TF = tf_tables.fetch(sa.MetaData())


def _count(session, table, where):
    return session.execute(sa.select(sa.func.count()).select_from(
        table).where(where)).scalar()


def _delete(session, table, where):
    return session.execute(sa.delete(table).where(where)).rowcount


# -- a cell database --------------------------------------------------------

def _deleted_before(before):
    return sa.and_(_INSTANCES.c.deleted == sa.true(),
                   _INSTANCES.c.deleted_at < before)


@cell_db.reader
def deleted_instances(context, before, after_id, limit):
    """``[(id, uuid)]``: up to ``limit`` instances deleted before ``before``.

    In id order, after the instance id ``after_id`` (0 for the first).
    """
    return [tuple(row) for row in context.session.execute(
        sa.select(_INSTANCES.c.id, _INSTANCES.c.uuid).where(
            _deleted_before(before), _INSTANCES.c.id > after_id).order_by(
            _INSTANCES.c.id).limit(limit)).all()]


def _history(uuids):
    """``(table, where)`` of the history rows of instances, events first."""
    actions = sa.select(_ACTIONS.c.id).where(
        _ACTIONS.c.instance_uuid.in_(uuids))
    return ((_EVENTS, _EVENTS.c.action_id.in_(actions)),
            (_ACTIONS, _ACTIONS.c.instance_uuid.in_(uuids)),
            (_FAULTS, _FAULTS.c.instance_uuid.in_(uuids)))


@cell_db.reader
def count_instances(context, uuids, before):
    """What ``delete_instances`` would delete: ``{table: rows}``."""
    uuids = list(uuids)
    counts = {table.name: _count(context.session, table, where)
              for table, where in _history(uuids)}
    counts[_INSTANCES.name] = _count(
        context.session, _INSTANCES,
        sa.and_(_INSTANCES.c.uuid.in_(uuids), _deleted_before(before)))
    return counts


@cell_db.writer
def delete_instances(context, uuids, before):
    """Delete soft-deleted instances and their history: ``{table: rows}``.

    Only the instances of ``uuids`` still deleted before ``before`` go,
    with their faults, actions and action events.
    """
    uuids = [row.uuid for row in context.session.execute(
        sa.select(_INSTANCES.c.uuid).where(
            _INSTANCES.c.uuid.in_(list(uuids)),
            _deleted_before(before))).all()]
    counts = {table.name: 0 for table, _where in _history(uuids)}
    counts[_INSTANCES.name] = 0
    if not uuids:
        return counts
    for table, where in _history(uuids):
        counts[table.name] = _delete(context.session, table, where)
    counts[_INSTANCES.name] = _delete(
        context.session, _INSTANCES,
        sa.and_(_INSTANCES.c.uuid.in_(uuids), _deleted_before(before)))
    return counts


# -- the API database -------------------------------------------------------

@api_db.reader
def mappings_of(context, uuids):
    """``{instance_uuid: (cell_id, queued_for_delete)}`` of those mapped."""
    return {row.instance_uuid: (row.cell_id, bool(row.queued_for_delete))
            for row in context.session.execute(
                sa.select(_MAPPINGS.c.instance_uuid, _MAPPINGS.c.cell_id,
                          _MAPPINGS.c.queued_for_delete).where(
                    _MAPPINGS.c.instance_uuid.in_(list(uuids)))).all()}


def _queued_in(uuids, cell_id):
    return sa.and_(_MAPPINGS.c.instance_uuid.in_(uuids),
                   _MAPPINGS.c.cell_id == cell_id,
                   _MAPPINGS.c.queued_for_delete == sa.true())


def _unmapped(column, uuids):
    """Rows of ``uuids`` whose instance has no mapping (any more)."""
    mapped = sa.select(_MAPPINGS.c.id).where(
        _MAPPINGS.c.instance_uuid == column).exists()
    return sa.and_(column.in_(uuids), ~mapped)


@api_db.reader
def count_api_rows(context, queued, unmapped, cell_id):
    """What ``delete_api_rows`` would delete: ``{table: rows}``."""
    queued, gone = list(queued), list(queued) + list(unmapped)
    return {
        _MAPPINGS.name: _count(context.session, _MAPPINGS,
                               _queued_in(queued, cell_id)),
        _SPECS.name: _count(context.session, _SPECS,
                            _SPECS.c.instance_uuid.in_(gone)),
        _MEMBERS.name: _count(context.session, _MEMBERS,
                              _MEMBERS.c.instance_uuid.in_(gone)),
    }


@api_db.writer
def delete_api_rows(context, queued, unmapped, cell_id):
    """Forget instances in the API database: ``{table: rows}``.

    ``queued``: instances whose mapping into the cell ``cell_id`` is
    queued for delete: the mapping goes, with the request spec and
    group membership. ``unmapped``: instances without a mapping: only
    their request spec and membership, if any are left. An instance
    that got a mapping meanwhile keeps everything.
    """
    queued, unmapped = list(queued), list(unmapped)
    counts = {_MAPPINGS.name: _delete(context.session, _MAPPINGS,
                                      _queued_in(queued, cell_id))}
    gone = queued + unmapped
    counts[_SPECS.name] = _delete(context.session, _SPECS,
                                  _unmapped(_SPECS.c.instance_uuid, gone))
    counts[_MEMBERS.name] = _delete(
        context.session, _MEMBERS, _unmapped(_MEMBERS.c.instance_uuid, gone))
    return counts


@api_db.reader
def orphan_specs(context, before, after_id, limit):
    """``[id]``: request specs older than ``before`` with no mapping.

    Their server was deleted while it was being built (its mapping went
    with its build request). In id order, after ``after_id``.
    """
    mapped = sa.select(_MAPPINGS.c.id).where(
        _MAPPINGS.c.instance_uuid == _SPECS.c.instance_uuid).exists()
    return list(context.session.execute(
        sa.select(_SPECS.c.id).where(
            _SPECS.c.created_at < before, ~mapped,
            _SPECS.c.id > after_id).order_by(_SPECS.c.id).limit(
            limit)).scalars())


@api_db.writer
def delete_specs(context, spec_ids):
    """Delete the request specs of ``spec_ids`` still without a mapping."""
    mapped = sa.select(_MAPPINGS.c.id).where(
        _MAPPINGS.c.instance_uuid == _SPECS.c.instance_uuid).exists()
    return {_SPECS.name: _delete(context.session, _SPECS, sa.and_(
        _SPECS.c.id.in_(list(spec_ids)), ~mapped))}


# -- TaskFlow's tables ------------------------------------------------------

def has_flow_tables(engine):
    """Whether TaskFlow's tables exist in the database of ``engine``."""
    return sa.inspect(engine).has_table(_TF.flowdetails.name)


def _ended_before(before):
    flows = _TF.flowdetails.c
    return sa.and_(flows.state.in_(ENDED_FLOW_STATES),
                   sa.func.coalesce(flows.updated_at, flows.created_at)
                   < before)


def ended_flows(engine, before, after_uuid, limit):
    """``[uuid]``: up to ``limit`` flows that ended before ``before``.

    In uuid order, after ``after_uuid`` ('' for the first).
    """
    flows = _TF.flowdetails.c
    with engine.connect() as conn:
        return list(conn.execute(sa.select(flows.uuid).where(
            _ended_before(before), flows.uuid > after_uuid).order_by(
            flows.uuid).limit(limit)).scalars())


def _flow_rows(flow_uuids):
    """``(table, where)`` of flows' rows, atoms first, then the flows."""
    atoms, flows = _TF.atomdetails, _TF.flowdetails
    return ((atoms, atoms.c.parent_uuid.in_(flow_uuids)),
            (flows, flows.c.uuid.in_(flow_uuids)))


def count_flows(engine, flow_uuids):
    """What ``delete_flows`` would delete: ``{table: rows}``."""
    flow_uuids = list(flow_uuids)
    books = _TF.logbooks
    with engine.connect() as conn:
        counts = {table.name: _count(conn, table, where)
                  for table, where in _flow_rows(flow_uuids)}
        parents = sa.select(_TF.flowdetails.c.parent_uuid).where(
            _TF.flowdetails.c.uuid.in_(flow_uuids))
        counts[books.name] = _count(conn, books, books.c.uuid.in_(parents))
    return counts


def delete_flows(engine, flow_uuids, before):
    """Delete ended flows, their atoms and emptied logbooks, in one go.

    Only the flows of ``flow_uuids`` still ended before ``before`` go;
    a logbook goes when the last of its flows did. ``{table: rows}``.
    """
    flows, books = _TF.flowdetails, _TF.logbooks
    with engine.begin() as conn:
        rows = conn.execute(sa.select(flows.c.uuid, flows.c.parent_uuid)
                            .where(flows.c.uuid.in_(list(flow_uuids)),
                                   _ended_before(before))).all()
        flow_uuids = [row.uuid for row in rows]
        parents = sorted({row.parent_uuid for row in rows} - {None})
        counts = {}
        for table, where in _flow_rows(flow_uuids):
            counts[table.name] = (_delete(conn, table, where) if flow_uuids
                                  else 0)
        left = sa.select(flows.c.uuid).where(
            flows.c.parent_uuid == books.c.uuid).exists()
        counts[books.name] = (_delete(conn, books, sa.and_(
            books.c.uuid.in_(parents), ~left)) if parents else 0)
    return counts
