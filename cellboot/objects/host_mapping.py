"""Host mappings: which cell a compute host belongs to.

The boot flow maps the scheduler's chosen host to its cell through this
table; ``cellboot-manage cell_v2 discover_hosts`` fills it from the cells'
compute nodes. A host appears at most once (unique ``host``), which is
what makes concurrent discovery safe: the loser of a race gets
HostMappingExists and moves on.
"""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models
from cellboot import exception
from cellboot.objects import base
from cellboot.objects import cell_mapping

_HOSTS = models.HostMapping.__table__


def _select(where):
    return cell_mapping.select_with_cell(_HOSTS).where(where)


@api_db.writer
def _create(context, host, cell_uuid):
    cell_id = cell_mapping.get_cell_id(context, cell_uuid)
    result = context.session.execute(
        sa.insert(_HOSTS).values(host=host, cell_id=cell_id))
    return context.session.execute(
        _select(_HOSTS.c.id == result.inserted_primary_key[0])).one()


@api_db.reader
def _get_by_host(context, host):
    return context.session.execute(_select(_HOSTS.c.host == host)).first()


@api_db.reader
def _get_all(context, cell_uuid=None):
    query = _select(sa.true()).order_by(_HOSTS.c.host)
    if cell_uuid is not None:
        query = query.where(
            _HOSTS.c.cell_id == cell_mapping.cell_id_subquery(cell_uuid))
    return context.session.execute(query).all()


@api_db.reader
def _count_by_cell(context, cell_uuid):
    query = sa.select(sa.func.count()).select_from(_HOSTS).where(
        _HOSTS.c.cell_id == cell_mapping.cell_id_subquery(cell_uuid))
    return context.session.execute(query).scalar()


@api_db.writer
def _destroy_by_cell(context, cell_uuid):
    return context.session.execute(sa.delete(_HOSTS).where(
        _HOSTS.c.cell_id == cell_mapping.cell_id_subquery(cell_uuid))
    ).rowcount


@api_db.writer
def _destroy(context, mapping_id):
    return context.session.execute(
        sa.delete(_HOSTS).where(_HOSTS.c.id == mapping_id)).rowcount


class HostMapping(base.DomainObject):
    """A compute host and the cell it lives in."""

    FIELDS = ('id', 'host', 'cell_mapping')

    @classmethod
    def _from_row(cls, row):
        return cls.from_row(
            row, cell_mapping=cell_mapping.cell_from_joined_row(row))

    @classmethod
    def create(cls, context, host, cell_uuid):
        """Map ``host`` to a cell; an already mapped host raises Exists."""
        try:
            return cls._from_row(_create(context, host, cell_uuid))
        except db_exc.DBDuplicateEntry as exc:
            raise exception.HostMappingExists(host=host) from exc

    @classmethod
    def get_by_host(cls, context, host):
        row = _get_by_host(context, host)
        if row is None:
            raise exception.HostMappingNotFound(host=host)
        return cls._from_row(row)

    @classmethod
    def get_all(cls, context, cell_uuid=None):
        """Every host mapping (of one cell if given), by host name."""
        return [cls._from_row(row) for row in _get_all(context, cell_uuid)]

    @classmethod
    def count_by_cell(cls, context, cell_uuid):
        return _count_by_cell(context, cell_uuid)

    @classmethod
    def destroy_by_cell(cls, context, cell_uuid):
        """Unmap every host of a cell; returns how many were unmapped."""
        return _destroy_by_cell(context, cell_uuid)

    def destroy(self, context):
        if not _destroy(context, self.id):
            raise exception.HostMappingNotFound(host=self.host)
