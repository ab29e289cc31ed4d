"""Quota rows: per-project limits, the per-project lock, and usage.

Three things live in the API database:

* ``quotas``: a project's own limit of a resource, where an operator
  set one (``get_limits``, ``set_limits``, ``delete_limits``);
* ``quota_locks``: one row per project, which a boot locks (``SELECT
  ... FOR UPDATE``) before it counts, so that a project's boots check
  and write one after the other (``lock_project``, ``create_lock``);
* the usage itself is not stored: it is counted from the project's live
  instance mappings, each of which carries its flavor's size
  (``count_usage``, one query).

What the limits mean (defaults, unlimited, the check) is
``cellboot.quota``'s.
"""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models
from cellboot.db import retry

_QUOTAS = models.Quota.__table__
_LOCKS = models.QuotaLock.__table__
_MAPPINGS = models.InstanceMapping.__table__


@api_db.reader
def get_limits(context, project_id):
    """``{resource: hard_limit}`` of the limits set for a project."""
    rows = context.session.execute(
        sa.select(_QUOTAS.c.resource, _QUOTAS.c.hard_limit).where(
            _QUOTAS.c.project_id == project_id)).all()
    return {row.resource: row.hard_limit for row in rows}


# Two updates of one project at once may both insert the same limit:
# the loser runs again and finds the row.
@retry.on_duplicate
@api_db.writer
def set_limits(context, project_id, limits):
    """Set some of a project's limits (``{resource: hard_limit}``)."""
    for resource, hard_limit in sorted(limits.items()):
        updated = context.session.execute(
            sa.update(_QUOTAS).where(
                _QUOTAS.c.project_id == project_id,
                _QUOTAS.c.resource == resource).values(
                hard_limit=hard_limit)).rowcount
        if not updated:
            context.session.execute(sa.insert(_QUOTAS).values(
                project_id=project_id, resource=resource,
                hard_limit=hard_limit))


@api_db.writer
def delete_limits(context, project_id):
    """Forget every limit set for a project; how many there were."""
    return context.session.execute(sa.delete(_QUOTAS).where(
        _QUOTAS.c.project_id == project_id)).rowcount


def lock_project(context, project_id):
    """Lock the project's row until the caller's transaction ends.

    Must run inside a writer transaction, as its first statement (on
    MariaDB a transaction's snapshot is taken at its first plain read:
    taken after the lock, it sees every write of the previous holder).
    Returns False when the project has no lock row yet (``create_lock``
    makes it). SQLite has no row locks and needs none: its writers take
    the whole file's lock at BEGIN (``facade.take_sqlite_write_lock``).
    """
    return context.session.execute(
        sa.select(_LOCKS.c.id).where(
            _LOCKS.c.project_id == project_id).with_for_update()
    ).first() is not None


@retry.on_contention
@api_db.writer
def _insert_lock(context, project_id):
    context.session.execute(sa.insert(_LOCKS).values(project_id=project_id))


def create_lock(context, project_id):
    """Give a project its lock row, in a transaction of its own.

    Another request may create it at the same moment: either way, the
    row exists afterwards. On MySQL/MariaDB the insert can also deadlock
    with a request of the project holding a gap lock where the row goes
    (its ``SELECT ... FOR UPDATE`` found none): the database fails one of
    them, and the insert runs again.
    """
    try:
        _insert_lock(context, project_id)
    except db_exc.DBDuplicateEntry:
        pass


@api_db.reader
def count_usage(context, project_id):
    """``{'instances', 'cores', 'ram'}`` of a project, in one query.

    What counts is every instance mapping not queued for delete: a
    server being built (a build request), ACTIVE or ERROR, as in Nova;
    its cores and ram are its flavor's.
    """
    row = context.session.execute(
        sa.select(sa.func.count(),
                  sa.func.coalesce(sa.func.sum(_MAPPINGS.c.vcpus), 0),
                  sa.func.coalesce(sa.func.sum(_MAPPINGS.c.memory_mb), 0)
                  ).where(_MAPPINGS.c.project_id == project_id,
                          _MAPPINGS.c.queued_for_delete == sa.false())).one()
    return {'instances': int(row[0]), 'cores': int(row[1]),
            'ram': int(row[2])}
