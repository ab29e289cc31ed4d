"""Request specs: what the scheduler was asked for, kept for reschedules.

The spec (flavor, image, availability zone, hints, ...) is stored as JSON
so that the boot flow, and a later reschedule, ask the scheduler the same
question the user asked.
"""

from oslo_db import exception as db_exc
from oslo_serialization import jsonutils
import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models
from cellboot.db import rows
from cellboot import exception
from cellboot.objects import base

_SPECS = models.RequestSpec.__table__


def _get(context, where):
    return context.session.execute(sa.select(_SPECS).where(where)).first()


@api_db.writer
def _create(context, values):
    return rows.insert(context.session, _SPECS, values)


@api_db.writer
def _create_many(context, values_list):
    rows.insert_many(context.session, _SPECS, values_list)


@api_db.reader
def _get_by_instance_uuid(context, instance_uuid):
    return _get(context, _SPECS.c.instance_uuid == instance_uuid)


@api_db.writer
def _update_spec(context, spec_id, spec):
    return context.session.execute(
        sa.update(_SPECS).where(_SPECS.c.id == spec_id).values(
            spec=spec)).rowcount


@api_db.writer
def _destroy(context, spec_id):
    return context.session.execute(
        sa.delete(_SPECS).where(_SPECS.c.id == spec_id)).rowcount


class RequestSpec(base.DomainObject):
    """The scheduling request of one instance (``spec`` is a dict)."""

    FIELDS = ('id', 'instance_uuid', 'spec')

    @classmethod
    def _from_row(cls, row):
        return cls.from_row(row, spec=jsonutils.loads(row.spec))

    @classmethod
    def create(cls, context, instance_uuid, spec):
        """Persist a spec; a second one for the instance raises Exists."""
        values = {'instance_uuid': instance_uuid,
                  'spec': jsonutils.dumps(spec)}
        try:
            return cls._from_row(_create(context, values))
        except db_exc.DBDuplicateEntry as exc:
            raise exception.RequestSpecExists(uuid=instance_uuid) from exc

    @classmethod
    def create_many(cls, context, instance_uuids, spec):
        """The same ``spec`` for each instance, in one statement (a
        multi-create's); not read back."""
        encoded = jsonutils.dumps(spec)
        try:
            _create_many(context, [{'instance_uuid': uuid, 'spec': encoded}
                                   for uuid in instance_uuids])
        except db_exc.DBDuplicateEntry as exc:
            raise exception.RequestSpecExists(
                uuid=', '.join(instance_uuids)) from exc

    @classmethod
    def get_by_instance_uuid(cls, context, instance_uuid):
        row = _get_by_instance_uuid(context, instance_uuid)
        if row is None:
            raise exception.RequestSpecNotFound(uuid=instance_uuid)
        return cls._from_row(row)

    def save(self, context):
        """Write ``spec`` back (e.g. after a reschedule changed it)."""
        if not _update_spec(context, self.id, jsonutils.dumps(self.spec)):
            raise exception.RequestSpecNotFound(uuid=self.instance_uuid)

    def destroy(self, context):
        if not _destroy(context, self.id):
            raise exception.RequestSpecNotFound(uuid=self.instance_uuid)
