"""Build requests: a server that was asked for but is in no cell yet.

The API writes one per instance; the boot flow deletes it once the
instance exists in a cell. Until then the API serves the server's status
from here. ``destroy`` tells a caller when the row was already gone,
which is how the boot flow notices that the owner deleted the server
while it was being scheduled.
"""

from oslo_db import exception as db_exc
from oslo_serialization import jsonutils
import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models
from cellboot.db import rows
from cellboot import exception
from cellboot.objects import base

_REQUESTS = models.BuildRequest.__table__


def _get(context, where):
    query = sa.select(_REQUESTS).where(where).order_by(_REQUESTS.c.id)
    return context.session.execute(query).all()


@api_db.writer
def _create(context, values):
    return rows.insert(context.session, _REQUESTS, values)


@api_db.writer
def _create_many(context, values_list):
    rows.insert_many(context.session, _REQUESTS, values_list)


@api_db.reader
def _get_where(context, where):
    return _get(context, where)


@api_db.writer
def _destroy(context, request_id):
    return context.session.execute(
        sa.delete(_REQUESTS).where(_REQUESTS.c.id == request_id)).rowcount


@api_db.writer
def _destroy_where(context, where):
    return context.session.execute(sa.delete(_REQUESTS).where(where)).rowcount


class BuildRequest(base.DomainObject):
    """A requested instance (``instance`` is its serialized dict)."""

    FIELDS = ('id', 'instance_uuid', 'project_id', 'user_id', 'instance',
              'created_at')

    @classmethod
    def _from_row(cls, row):
        return cls.from_row(row, instance=jsonutils.loads(row.instance))

    @classmethod
    def create(cls, context, instance_uuid, project_id, instance,
               user_id=None):
        """Persist a request; a second one for the instance raises Exists."""
        values = _new_row(instance_uuid, project_id, instance, user_id)
        try:
            return cls._from_row(_create(context, values))
        except db_exc.DBDuplicateEntry as exc:
            raise exception.BuildRequestExists(uuid=instance_uuid) from exc

    @classmethod
    def create_many(cls, context, requests):
        """``create`` for each of ``requests`` (dicts of its arguments),
        in one statement (a multi-create's); not read back."""
        try:
            _create_many(context, [_new_row(**request)
                                   for request in requests])
        except db_exc.DBDuplicateEntry as exc:
            raise exception.BuildRequestExists(
                uuid=', '.join(r['instance_uuid'] for r in requests)) from exc

    @classmethod
    def get_by_instance_uuid(cls, context, instance_uuid):
        rows = _get_where(context, _REQUESTS.c.instance_uuid == instance_uuid)
        if not rows:
            raise exception.BuildRequestNotFound(uuid=instance_uuid)
        return cls._from_row(rows[0])

    @classmethod
    def get_by_project(cls, context, project_id):
        """The project's pending requests, oldest first."""
        return [cls._from_row(row) for row in
                _get_where(context, _REQUESTS.c.project_id == project_id)]

    @classmethod
    def get_by_instance_uuids(cls, context, instance_uuids):
        """``{instance_uuid: request}`` of those that still have one."""
        if not instance_uuids:
            return {}
        return {row.instance_uuid: cls._from_row(row) for row in _get_where(
            context, _REQUESTS.c.instance_uuid.in_(list(instance_uuids)))}

    @classmethod
    def get_all(cls, context):
        return [cls._from_row(row) for row in _get_where(context, sa.true())]

    @classmethod
    def get_created_before(cls, context, when):
        """Those created before ``when`` (naive UTC), in written order.

        For the orphan sweep, which acts only on requests older than its
        timeouts: under load the table holds hundreds of young requests,
        and fetching and decoding all of them at every sweep was most of
        the sweep's cost to the super conductor. ``created_at`` has no
        index, on purpose: the table holds only pending requests (the
        boot flow deletes each once its instance is in a cell), so the
        database scans few rows per sweep, while an index would be
        written on every boot's insert and delete.
        """
        return [cls._from_row(row) for row in
                _get_where(context, _REQUESTS.c.created_at < when)]

    @classmethod
    def get_created_since(cls, context, when):
        """The others: created at or after ``when``, or at no known time.

        With ``get_created_before`` they are every request, each once.
        """
        created_at = _REQUESTS.c.created_at
        return [cls._from_row(row) for row in _get_where(
            context, sa.or_(created_at >= when, created_at.is_(None)))]

    def as_cast(self):
        """The request as the API's cast to a super conductor carries it."""
        return {'instance_uuid': self.instance_uuid,
                'project_id': self.project_id, 'user_id': self.user_id,
                'instance': self.instance}

    @classmethod
    def destroy_by_instance_uuid(cls, context, instance_uuid):
        """Delete the instance's request; False if there is none.

        One statement where ``get_by_instance_uuid(...).destroy()`` takes
        two: the boot flow removes a multi-create's requests this way.
        """
        return bool(_destroy_where(
            context, _REQUESTS.c.instance_uuid == instance_uuid))

    @classmethod
    def destroy_by_instance_uuids(cls, context, instance_uuids):
        """Delete the requests of the instances; how many there were."""
        return _destroy_where(
            context, _REQUESTS.c.instance_uuid.in_(list(instance_uuids)))

    def destroy(self, context):
        """Delete the request; BuildRequestNotFound if already deleted."""
        if not _destroy(context, self.id):
            raise exception.BuildRequestNotFound(uuid=self.instance_uuid)


def _new_row(instance_uuid, project_id, instance, user_id=None):
    return {'instance_uuid': instance_uuid, 'project_id': project_id,
            'user_id': user_id, 'instance': jsonutils.dumps(instance)}
