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
  of purged instances, and request specs whose mapping is gone.

Flows that ended are purged from TaskFlow's tables by
``cellboot.flowrun.tables``, where every statement on those tables is.
"""

import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models as api_models
from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models as cell_models

_INSTANCES = cell_models.Instance.__table__
_FAULTS = cell_models.InstanceFault.__table__
_ACTIONS = cell_models.InstanceAction.__table__
_EVENTS = cell_models.InstanceActionEvent.__table__

_MAPPINGS = api_models.InstanceMapping.__table__
_SPECS = api_models.RequestSpec.__table__
_MEMBERS = api_models.ServerGroupMember.__table__


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
