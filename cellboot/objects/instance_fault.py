"""Instance faults: why an instance is in ERROR, for its owner to read.

Every instance put in ERROR gets a fault (invariant 1 of
docs/architecture.md); the API shows the latest one as the server's
``fault``. The message column is short, so a longer message is cut to
fit; the full text belongs in ``details``.
"""

import sqlalchemy as sa

from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models
from cellboot.objects import base

_FAULTS = models.InstanceFault.__table__

MAX_MESSAGE_LENGTH = 255


@cell_db.writer
def _create(context, values):
    result = context.session.execute(sa.insert(_FAULTS).values(**values))
    return context.session.execute(sa.select(_FAULTS).where(
        _FAULTS.c.id == result.inserted_primary_key[0])).one()


@cell_db.reader
def _get_latest(context, instance_uuids):
    # Ids grow with time, and unlike created_at (whole seconds on MySQL)
    # they never tie: the highest id is the latest fault.
    latest = sa.select(sa.func.max(_FAULTS.c.id)).where(
        _FAULTS.c.instance_uuid.in_(instance_uuids)).group_by(
        _FAULTS.c.instance_uuid)
    return context.session.execute(
        sa.select(_FAULTS).where(_FAULTS.c.id.in_(latest))).all()


class InstanceFault(base.DomainObject):
    """One failure of an instance: an HTTP-like code and a message."""

    FIELDS = ('id', 'instance_uuid', 'code', 'message', 'details', 'host',
              'created_at')

    @classmethod
    def create(cls, context, instance_uuid, code, message, details=None,
               host=None):
        """Record a fault; ``message`` is cut to 255 characters."""
        values = {'instance_uuid': instance_uuid, 'code': code,
                  'message': str(message)[:MAX_MESSAGE_LENGTH],
                  'details': details, 'host': host}
        return cls.from_row(_create(context, values))

    @classmethod
    def get_latest_for_instances(cls, context, instance_uuids):
        """``{instance_uuid: latest fault}`` for those that have one."""
        instance_uuids = list(instance_uuids)
        if not instance_uuids:
            return {}
        return {row.instance_uuid: cls.from_row(row)
                for row in _get_latest(context, instance_uuids)}
