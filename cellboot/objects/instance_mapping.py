"""Instance mappings: which cell holds an instance, once one does.

The API creates the mapping with no cell together with the build request;
the boot flow sets the cell once the instance row exists there (cell0 for
instances that could not be scheduled). Looking an instance up always
starts here.
"""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models
from cellboot.db import pages
from cellboot.db import rows
from cellboot import exception
from cellboot.objects import base
from cellboot.objects import cell_mapping

_MAPPINGS = models.InstanceMapping.__table__
_REQUESTS = models.BuildRequest.__table__


def _select(where):
    return cell_mapping.select_with_cell(_MAPPINGS).where(where)


def _get(context, where):
    return context.session.execute(_select(where)).first()


@api_db.writer
def _create_many(context, values_list):
    rows.insert_many(context.session, _MAPPINGS, values_list)


@api_db.writer
def _create(context, values, cell_uuid):
    if cell_uuid is None:
        # The API's mapping of a new server: no cell to join in.
        return rows.insert(context.session, _MAPPINGS, values)
    values['cell_id'] = cell_mapping.get_cell_id(context, cell_uuid)
    result = context.session.execute(sa.insert(_MAPPINGS).values(**values))
    return _get(context, _MAPPINGS.c.id == result.inserted_primary_key[0])


@api_db.reader
def _get_by_instance_uuid(context, instance_uuid):
    return _get(context, _MAPPINGS.c.instance_uuid == instance_uuid)


@api_db.reader
def _get_by_project(context, project_id):
    query = _select(_MAPPINGS.c.project_id == project_id).order_by(
        _MAPPINGS.c.id)
    return context.session.execute(query).all()


def _live_of(project_id):
    """Live mappings of ``project_id``; of every project when None."""
    live = _MAPPINGS.c.queued_for_delete == sa.false()
    if project_id is None:
        return live
    return sa.and_(_MAPPINGS.c.project_id == project_id, live)


@api_db.reader
def _get_page(context, project_id, limit, marker, descending):
    marker_values = None
    if marker is not None:
        # The marker may have been deleted since its page was read: any
        # mapping of the project will do, none of another project.
        where = _MAPPINGS.c.instance_uuid == marker
        if project_id is not None:
            where = sa.and_(where, _MAPPINGS.c.project_id == project_id)
        marker_id = context.session.execute(
            sa.select(_MAPPINGS.c.id).where(where)).scalar()
        if marker_id is None:
            raise exception.MarkerNotFound(marker=marker)
        marker_values = (marker_id,)
    query = pages.page(_select(_live_of(project_id)), (_MAPPINGS.c.id,),
                       marker_values, limit, descending)
    return context.session.execute(query).all()


@api_db.reader
def _get_by_instance_uuids(context, instance_uuids):
    return context.session.execute(_select(
        _MAPPINGS.c.instance_uuid.in_(instance_uuids))).all()


@api_db.reader
def _owned_by(context, project_id, instance_uuids):
    return set(context.session.execute(
        sa.select(_MAPPINGS.c.instance_uuid).where(
            _MAPPINGS.c.project_id == project_id,
            _MAPPINGS.c.instance_uuid.in_(instance_uuids))).scalars())


@api_db.reader
def _deleted_with_leftovers(context, limit):
    uuid = _MAPPINGS.c.instance_uuid
    return list(context.session.execute(
        sa.select(uuid).where(
            _MAPPINGS.c.queued_for_delete == sa.true(),
            sa.exists().where(_REQUESTS.c.instance_uuid == uuid),
        ).order_by(_MAPPINGS.c.id).limit(limit)).scalars())


@api_db.reader
def _not_queued_for_delete(context, instance_uuids):
    return set(context.session.execute(
        sa.select(_MAPPINGS.c.instance_uuid).where(
            _MAPPINGS.c.queued_for_delete == sa.false(),
            _MAPPINGS.c.instance_uuid.in_(instance_uuids))).scalars())


def _in_cell(cell_uuid):
    return _MAPPINGS.c.cell_id == cell_mapping.cell_id_subquery(cell_uuid)


@api_db.reader
def _count_by_cell(context, cell_uuid):
    return context.session.execute(
        sa.select(sa.func.count()).select_from(_MAPPINGS).where(
            _in_cell(cell_uuid))).scalar()


@api_db.writer
def _destroy_by_cell(context, cell_uuid):
    return context.session.execute(
        sa.delete(_MAPPINGS).where(_in_cell(cell_uuid))).rowcount


@api_db.writer
def _update(context, mapping_id, values, cell_uuid=None):
    if cell_uuid is not None:
        values['cell_id'] = cell_mapping.get_cell_id(context, cell_uuid)
    result = context.session.execute(
        sa.update(_MAPPINGS).where(_MAPPINGS.c.id == mapping_id).values(
            **values))
    if not result.rowcount:
        return None
    return _get(context, _MAPPINGS.c.id == mapping_id)


@api_db.writer
def _set_cell_id(context, instance_uuids, cell_id):
    return context.session.execute(
        sa.update(_MAPPINGS).where(
            _MAPPINGS.c.instance_uuid.in_(instance_uuids)).values(
            cell_id=cell_id)).rowcount


@api_db.writer
def _move_cell_id(context, instance_uuid, from_cell_id, to_cell_id):
    return context.session.execute(
        sa.update(_MAPPINGS).where(
            _MAPPINGS.c.instance_uuid == instance_uuid,
            _MAPPINGS.c.cell_id == from_cell_id,
            _MAPPINGS.c.queued_for_delete == sa.false()).values(
            cell_id=to_cell_id)).rowcount


@api_db.writer
def _remap(context, instance_uuid, cell_id):
    return context.session.execute(
        sa.update(_MAPPINGS).where(
            _MAPPINGS.c.instance_uuid == instance_uuid,
            _MAPPINGS.c.cell_id.is_(None),
            _MAPPINGS.c.queued_for_delete == sa.false()).values(
            cell_id=cell_id)).rowcount


@api_db.writer
def _destroy(context, mapping_id):
    return context.session.execute(
        sa.delete(_MAPPINGS).where(_MAPPINGS.c.id == mapping_id)).rowcount


class InstanceMapping(base.DomainObject):
    """An instance, its owner, and its cell (None while only requested)."""

    FIELDS = ('id', 'instance_uuid', 'cell_mapping', 'project_id', 'user_id',
              'queued_for_delete', 'vcpus', 'memory_mb', 'created_at')

    @classmethod
    def _from_row(cls, row):
        """From a ``select_with_cell`` row, or a plain one with no cell."""
        return cls.from_row(
            row, cell_mapping=cell_mapping.cell_from_joined_row(row))

    @classmethod
    def create(cls, context, instance_uuid, project_id, user_id=None,
               cell_uuid=None, vcpus=0, memory_mb=0):
        """Map an instance; a second mapping for it raises Exists.

        ``vcpus`` and ``memory_mb`` are the size of the instance's flavor,
        what it counts for in its project's quota.
        """
        values = _new_row(instance_uuid, project_id, user_id, vcpus,
                          memory_mb)
        try:
            return cls._from_row(_create(context, values, cell_uuid))
        except db_exc.DBDuplicateEntry as exc:
            raise exception.InstanceMappingExists(uuid=instance_uuid) from exc

    @classmethod
    def create_many(cls, context, instance_uuids, project_id, user_id=None,
                    vcpus=0, memory_mb=0):
        """Map new instances of one request, in no cell yet, in one
        statement (a multi-create's); not read back."""
        try:
            _create_many(context, [
                _new_row(uuid, project_id, user_id, vcpus, memory_mb)
                for uuid in instance_uuids])
        except db_exc.DBDuplicateEntry as exc:
            raise exception.InstanceMappingExists(
                uuid=', '.join(instance_uuids)) from exc

    @classmethod
    def get_by_instance_uuid(cls, context, instance_uuid):
        row = _get_by_instance_uuid(context, instance_uuid)
        if row is None:
            raise exception.InstanceMappingNotFound(uuid=instance_uuid)
        return cls._from_row(row)

    @classmethod
    def owned_by(cls, context, project_id, instance_uuids):
        """Those of ``instance_uuids`` that are servers of ``project_id``.

        One query, whatever the number; no project owns nothing.
        """
        instance_uuids = sorted(set(instance_uuids))
        if not project_id or not instance_uuids:
            return set()
        return _owned_by(context, project_id, instance_uuids)

    @classmethod
    def deleted_with_leftovers(cls, context, limit=1000):
        """Servers queued for delete that still have a build request.

        What a delete that failed after its mark left in the API
        database (see ``cellboot.builds.deletes``; the claims it left are
        in its cell's database, ``cellboot.conductor.unfinished_deletes``
        finds those); at most ``limit`` uuids, oldest mapping first.
        """
        return _deleted_with_leftovers(context, limit)

    @classmethod
    def not_queued_for_delete(cls, context, instance_uuids, chunk=500):
        """Those of ``instance_uuids`` whose mapping is not queued yet."""
        instance_uuids = sorted(set(instance_uuids))
        found = set()
        for start in range(0, len(instance_uuids), chunk):
            found |= _not_queued_for_delete(
                context, instance_uuids[start:start + chunk])
        return found

    @classmethod
    def get_by_project(cls, context, project_id):
        """The project's mappings, oldest first."""
        return [cls._from_row(row)
                for row in _get_by_project(context, project_id)]

    @classmethod
    def get_page(cls, context, project_id, limit, marker=None,
                 descending=False):
        """Up to ``limit`` live mappings of a project, in id order.

        Live: not queued for delete. ``project_id`` None: of every
        project (an administrator's ``all_tenants`` list). ``marker`` is
        the instance uuid of the last mapping of the previous page; one
        that the project never had raises MarkerNotFound.
        ``descending``: newest first.
        """
        return [cls._from_row(row) for row in
                _get_page(context, project_id, limit, marker, descending)]

    @classmethod
    def get_by_instance_uuids(cls, context, instance_uuids):
        """``{instance_uuid: mapping}`` of those that have one."""
        if not instance_uuids:
            return {}
        return {row.instance_uuid: cls._from_row(row) for row in
                _get_by_instance_uuids(context, list(instance_uuids))}

    @classmethod
    def count_by_cell(cls, context, cell_uuid):
        return _count_by_cell(context, cell_uuid)

    @classmethod
    def destroy_by_cell(cls, context, cell_uuid):
        """Delete every mapping into a cell; returns how many."""
        return _destroy_by_cell(context, cell_uuid)

    def _save(self, context, values, cell_uuid=None):
        row = _update(context, self.id, values, cell_uuid)
        if row is None:
            raise exception.InstanceMappingNotFound(uuid=self.instance_uuid)
        self.load_row(row,
                      cell_mapping=cell_mapping.cell_from_joined_row(row))

    def set_cell(self, context, cell_uuid):
        """Point the mapping at the cell that now holds the instance."""
        self._save(context, {}, cell_uuid=cell_uuid)

    @classmethod
    def set_cell_of(cls, context, instance_uuid, cell):
        """Point an instance's mapping at ``cell`` (a CellMapping).

        False when the instance has no mapping. One statement where
        ``get_by_instance_uuid(...).set_cell()`` takes four: the boot
        flow maps a multi-create's instances this way.
        """
        return bool(_set_cell_id(context, [instance_uuid], cell.id))

    @classmethod
    def set_cell_of_many(cls, context, instance_uuids, cell):
        """``set_cell_of`` for many instances in one statement; how many
        had a mapping (pointed at ``cell`` already or not)."""
        return _set_cell_id(context, list(instance_uuids), cell.id)

    @classmethod
    def unmap_from(cls, context, instance_uuid, cell):
        """Point a live mapping of ``cell`` at no cell; True if it did.

        One conditional statement, for a build moving out of ``cell``
        (the cross-cell flow): a mapping its owner's delete queued, or
        that points elsewhere, is left alone (False).
        """
        return bool(_move_cell_id(context, instance_uuid, cell.id, None))

    @classmethod
    def remap_to(cls, context, instance_uuid, cell):
        """Point a live mapping of no cell back at ``cell``; True if it
        did (``unmap_from`` undone)."""
        return bool(_remap(context, instance_uuid, cell.id))

    def set_queued_for_delete(self, context, value=True):
        self._save(context, {'queued_for_delete': value})

    def destroy(self, context):
        if not _destroy(context, self.id):
            raise exception.InstanceMappingNotFound(uuid=self.instance_uuid)


def _new_row(instance_uuid, project_id, user_id, vcpus, memory_mb):
    return {'instance_uuid': instance_uuid, 'project_id': project_id,
            'user_id': user_id, 'queued_for_delete': False,
            'vcpus': vcpus, 'memory_mb': memory_mb}
