"""Instances: the servers of a cell, in that cell's database.

The boot flow creates the row in the chosen cell (or in cell0 when the
build failed before a cell was known); the compute host moves it to
ACTIVE or ERROR. Several actors race on one instance (a compute host
finishing a build, the owner deleting it, a reschedule), so ``update``
can be made conditional on the vm_state the caller last saw: the change
is written only if nobody moved the instance on in the meantime.
Deleting is a soft delete: the row stays, ``deleted`` set, so that the
owner can still be told what happened.
"""

import types

from oslo_db import exception as db_exc
from oslo_serialization import jsonutils
from oslo_utils import timeutils
import sqlalchemy as sa

from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models
from cellboot import exception
from cellboot.objects import base

_INSTANCES = models.Instance.__table__

vm_states = types.SimpleNamespace(
    BUILDING='building',
    ACTIVE='active',
    ERROR='error',
    DELETED='deleted',
)

JSON_FIELDS = ('flavor', 'metadata')
UPDATABLE_FIELDS = frozenset({
    'display_name', 'reservation_id', 'vm_state', 'task_state', 'host',
    'node', 'flavor', 'image_ref', 'availability_zone', 'metadata',
    'launched_at'})


def _to_db(values):
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


def _from_db(row):
    flavor = row._mapping['flavor']
    metadata = row._mapping['metadata']
    return {'flavor': None if flavor is None else jsonutils.loads(flavor),
            'metadata': {} if metadata is None else jsonutils.loads(metadata)}


def _live(uuid):
    return sa.and_(_INSTANCES.c.uuid == uuid,
                   _INSTANCES.c.deleted == sa.false())


def _get(context, where):
    query = sa.select(_INSTANCES).where(where).order_by(
        _INSTANCES.c.created_at, _INSTANCES.c.id)
    return context.session.execute(query).all()


@cell_db.writer
def _create(context, values):
    result = context.session.execute(sa.insert(_INSTANCES).values(**values))
    return _get(context,
                _INSTANCES.c.id == result.inserted_primary_key[0])[0]


@cell_db.reader
def _get_where(context, where):
    return _get(context, where)


@cell_db.reader
def _count(context, where):
    return context.session.execute(
        sa.select(sa.func.count()).select_from(_INSTANCES).where(
            where)).scalar()


@cell_db.writer
def _update(context, uuid, values, expected_vm_states=None):
    """Update a live instance; return (updated row, None) or (None, row).

    When nothing was updated the second element is the instance as it is
    (None if there is no live instance), so the caller can tell "gone"
    from "in another vm_state" within the same transaction.
    """
    where = _live(uuid)
    if expected_vm_states is not None:
        where = sa.and_(where, _INSTANCES.c.vm_state.in_(expected_vm_states))
    result = context.session.execute(
        sa.update(_INSTANCES).where(where).values(**values))
    rows = _get(context, _INSTANCES.c.uuid == uuid)
    if result.rowcount:
        return rows[0], None
    if rows and not rows[0].deleted:
        return None, rows[0]
    return None, None


class Instance(base.DomainObject):
    """A server in a cell."""

    FIELDS = ('id', 'uuid', 'project_id', 'user_id', 'display_name',
              'reservation_id', 'vm_state', 'task_state', 'host', 'node',
              'flavor', 'image_ref', 'availability_zone', 'metadata',
              'launched_at', 'created_at', 'updated_at', 'deleted',
              'deleted_at')

    @classmethod
    def _from_row(cls, row):
        return cls.from_row(row, **_from_db(row))

    @classmethod
    def create(cls, context, uuid, project_id, vm_state, user_id=None,
               **fields):
        """Create the instance row; a taken uuid raises InstanceExists.

        ``fields`` are any of display_name, reservation_id, task_state,
        host, node, flavor (dict), image_ref, availability_zone,
        metadata (dict), launched_at.
        """
        values = _to_db(fields)
        values.update(uuid=uuid, project_id=project_id, user_id=user_id,
                      vm_state=vm_state, deleted=False)
        values.setdefault('metadata', jsonutils.dumps({}))
        try:
            return cls._from_row(_create(context, values))
        except db_exc.DBDuplicateEntry as exc:
            raise exception.InstanceExists(uuid=uuid) from exc

    @classmethod
    def get_by_uuid(cls, context, uuid, read_deleted=False):
        """The instance; a deleted one only when ``read_deleted``."""
        where = (_INSTANCES.c.uuid == uuid) if read_deleted else _live(uuid)
        rows = _get_where(context, where)
        if not rows:
            raise exception.InstanceNotFound(uuid=uuid)
        return cls._from_row(rows[0])

    @classmethod
    def get_all_by_project(cls, context, project_id):
        """The project's live instances in this cell, oldest first."""
        return [cls._from_row(row) for row in _get_where(context, sa.and_(
            _INSTANCES.c.project_id == project_id,
            _INSTANCES.c.deleted == sa.false()))]

    @classmethod
    def get_all_by_host(cls, context, host):
        """The live instances on a compute host, oldest first."""
        return [cls._from_row(row) for row in _get_where(context, sa.and_(
            _INSTANCES.c.host == host, _INSTANCES.c.deleted == sa.false()))]

    @classmethod
    def count(cls, context, include_deleted=False):
        where = (sa.true() if include_deleted
                 else _INSTANCES.c.deleted == sa.false())
        return _count(context, where)

    def update(self, context, expected_vm_state=None, **values):
        """Write ``values``; with ``expected_vm_state``, only from it.

        ``expected_vm_state`` is a vm_state or a list of them; when the
        instance is in none of them any more, nothing is written and
        UnexpectedVMState says what it is in now. A deleted instance
        raises InstanceNotFound.
        """
        expected = expected_vm_state
        if isinstance(expected, str):
            expected = [expected]
        updated, current = _update(context, self.uuid, _to_db(values),
                                   expected)
        if updated is not None:
            self.load_row(updated, **_from_db(updated))
        elif current is None:
            raise exception.InstanceNotFound(uuid=self.uuid)
        else:
            raise exception.UnexpectedVMState(
                uuid=self.uuid, actual=current.vm_state,
                expected=' or '.join(expected))

    def destroy(self, context):
        """Soft-delete: keep the row, marked deleted, vm_state DELETED."""
        values = {'deleted': True, 'deleted_at': timeutils.utcnow(),
                  'vm_state': vm_states.DELETED, 'task_state': None}
        updated, _current = _update(context, self.uuid, values)
        if updated is None:
            raise exception.InstanceNotFound(uuid=self.uuid)
        self.load_row(updated, **_from_db(updated))
