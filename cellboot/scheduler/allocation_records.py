"""Rows of ``allocation_requests``: requests that are not servers.

Each function is its own transaction on the API database, so that the
row's ``placing`` status is committed before anything is claimed for it
(``allocations``): a process killed after that leaves a row a sweep
finds (``cellboot.conductor.unplaced_allocations``), never a claim that
nothing names.
"""

import datetime

from oslo_serialization import jsonutils
import sqlalchemy as sa

from cellboot.db.api import models
from cellboot import exception
from cellboot import quota
from cellboot.scheduler.resources import tables

STORE = tables.API
_TABLE = models.AllocationRequest.__table__
_CELLS = models.CellMapping.__table__
PLACING = 'placing'
PLACED = 'placed'
# Being given up (a request that could not be placed, or one a sweep
# settles) or deleted: its claims are released, then the row deleted.
SETTLING = 'settling'
DELETING = 'deleting'


def _as_dict(row):
    return {'uuid': row.uuid, 'project_id': row.project_id,
            'user_id': row.user_id,
            'request': jsonutils.loads(row.request),
            'status': row.status, 'provider_uuid': row.provider_uuid,
            'provider_kind': row.provider_kind,
            'cell_uuid': row.cell_uuid, 'cell_name': row.cell_name,
            'created_at': row.created_at}


def _select():
    return sa.select(
        _TABLE, _CELLS.c.uuid.label('cell_uuid'),
        _CELLS.c.name.label('cell_name'),
    ).select_from(_TABLE.outerjoin(_CELLS, _CELLS.c.id == _TABLE.c.cell_id))


@STORE.writer
def _insert(context, uuid, project_id, user_id, request):
    # First statement: the project's quota lock (``quota``), so that
    # two requests of one project count one after the other.
    quota.claim_classes(context, project_id, request['resources'], usage)
    context.session.execute(sa.insert(_TABLE).values(
        uuid=uuid, project_id=project_id, user_id=user_id,
        request=jsonutils.dumps(request), status=PLACING))


def insert_placing(context, uuid, project_id, user_id, request):
    """Write the row, status ``placing``, and commit it, if the
    project's class quotas allow (QuotaExceeded: nothing written)."""
    try:
        _insert(context, uuid, project_id, user_id, request)
    except quota.ProjectNotLocked:
        quota.prepare(context, project_id)
        _insert(context, uuid, project_id, user_id, request)


@STORE.writer
def mark_placed(context, uuid, request, provider):
    """Say where the claim of ``uuid`` is (``provider``: ``{'uuid',
    'name', 'kind', 'cell_uuid'?}``; the name is kept in the request's
    JSON, for views). False when the row is no longer ``placing``
    (deleted or settled meanwhile: the caller then releases)."""
    session = context.session
    cell_id = None
    if provider.get('cell_uuid') is not None:
        cell_id = session.execute(sa.select(_CELLS.c.id).where(
            _CELLS.c.uuid == provider['cell_uuid'])).scalar()
    done = session.execute(sa.update(_TABLE).where(
        _TABLE.c.uuid == uuid, _TABLE.c.status == PLACING,
    ).values(status=PLACED, provider_uuid=provider['uuid'],
             provider_kind=provider['kind'], cell_id=cell_id,
             request=jsonutils.dumps(dict(
                 request, provider_name=provider.get('name')))))
    return done.rowcount == 1


@STORE.writer
def mark(context, uuid, status, only_from=None):
    """Set the row's status (only if it is ``only_from``, when given);
    whether it was set."""
    query = sa.update(_TABLE).where(_TABLE.c.uuid == uuid)
    if only_from is not None:
        query = query.where(_TABLE.c.status == only_from)
    return context.session.execute(
        query.values(status=status)).rowcount == 1


@STORE.reader
def get(context, uuid):
    """The row of ``uuid`` as a dict; AllocationNotFound."""
    row = context.session.execute(_select().where(
        _TABLE.c.uuid == uuid)).first()
    if row is None:
        raise exception.AllocationNotFound(uuid=str(uuid)[:80])
    return _as_dict(row)


@STORE.reader
def page(context, project_id, limit, marker=None):
    """The rows of ``project_id`` (every project's when None), oldest
    first; ``marker`` is the uuid of the last row of the page before
    (MarkerNotFound if it is no row the caller may list)."""
    query = _select().order_by(_TABLE.c.id)
    if project_id is not None:
        query = query.where(_TABLE.c.project_id == project_id)
    if marker is not None:
        last = sa.select(_TABLE.c.id).where(_TABLE.c.uuid == marker)
        if project_id is not None:
            last = last.where(_TABLE.c.project_id == project_id)
        last_id = context.session.execute(last).scalar()
        if last_id is None:
            raise exception.MarkerNotFound(marker=str(marker)[:80])
        query = query.where(_TABLE.c.id > last_id)
    return [_as_dict(row) for row in context.session.execute(
        query.limit(limit))]


@STORE.writer
def delete(context, uuid):
    """Delete the row; whether there was one."""
    return context.session.execute(sa.delete(_TABLE).where(
        _TABLE.c.uuid == uuid)).rowcount == 1


@STORE.reader
def known(context, uuids):
    """The uuids of ``uuids`` that are allocation requests."""
    uuids = list(uuids)
    if not uuids:
        return set()
    return {row[0] for row in context.session.execute(sa.select(
        _TABLE.c.uuid).where(_TABLE.c.uuid.in_(uuids)))}


@STORE.reader
def unsettled(context, seconds, limit):
    """Up to ``limit`` ``(uuid, status)`` of rows that are not placed
    and were written more than ``seconds`` ago: what the sweep
    settles."""
    before = (datetime.datetime.utcnow()
              - datetime.timedelta(seconds=seconds))
    return [tuple(row) for row in context.session.execute(sa.select(
        _TABLE.c.uuid, _TABLE.c.status).where(
            _TABLE.c.status != PLACED, _TABLE.c.created_at < before,
    ).order_by(_TABLE.c.id).limit(limit))]


@STORE.reader
def usage(context, project_id):
    """``{class: amount}`` the project's allocation requests ask for,
    placed or being placed: what quotas count."""
    used = {}
    for (text,) in context.session.execute(sa.select(
            _TABLE.c.request).where(_TABLE.c.project_id == project_id)):
        for rc, amount in jsonutils.loads(text).get(
                'resources', {}).items():
            used[rc] = used.get(rc, 0) + amount
    return used
