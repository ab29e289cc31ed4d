"""Cell mappings: where each cell's database and message bus are.

A cell mapping row in the API database is the only thing API-level
services know about a cell; ``context.target_cell`` turns one into a
context that reads and writes that cell's database. cell0, the cell of
instances that never got a host, has the fixed uuid ``CELL0_UUID``.

Every read carries the uuid of the zone the cell sits in (``zone_uuid``,
None at the top level), joined in, so that whoever reads the cells has
the zone tree's leaves without another query.
"""

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models
from cellboot.db import pages
from cellboot import exception
from cellboot.objects import base

CELL0_UUID = models.CELL0_UUID

_CELLS = models.CellMapping.__table__
_HOSTS = models.HostMapping.__table__
_INSTANCES = models.InstanceMapping.__table__
_PROVIDERS = models.ResourceProvider.__table__
_ZONES = models.Zone.__table__

UPDATABLE_FIELDS = frozenset({'name', 'database_connection', 'transport_url',
                              'disabled', 'zone_uuid'})

# The zone of a cell when rows are joined to its cell (``select_with_cell``).
_CELL_ZONES = _ZONES.alias('cell_zones')

# cell0 sorts before every other cell, then cells sort by name.
_CELL0_FIRST = sa.case((_CELLS.c.uuid == CELL0_UUID, 0), else_=1)


def _select():
    """SELECT cell mappings with the uuid of their zone, if any."""
    return sa.select(_CELLS, _ZONES.c.uuid.label('zone_uuid')).select_from(
        _CELLS.outerjoin(_ZONES, _CELLS.c.zone_id == _ZONES.c.id))


def _zone_id(context, zone_uuid):
    """The id of the zone with ``zone_uuid`` (None: none); ZoneNotFound."""
    if zone_uuid is None:
        return None
    zone_id = context.session.execute(
        sa.select(_ZONES.c.id).where(_ZONES.c.uuid == zone_uuid)).scalar()
    if zone_id is None:
        raise exception.ZoneNotFound(zone=zone_uuid)
    return zone_id


def _with_zone_id(context, values):
    values = dict(values)
    if 'zone_uuid' in values:
        values['zone_id'] = _zone_id(context, values.pop('zone_uuid'))
    return values


@api_db.writer
def _create(context, values):
    result = context.session.execute(
        sa.insert(_CELLS).values(**_with_zone_id(context, values)))
    return _get_one(context, _CELLS.c.id == result.inserted_primary_key[0])


@api_db.reader
def _get_one_or_none(context, where):
    return _get_one(context, where)


def _get_one(context, where):
    return context.session.execute(_select().where(where)).first()


@api_db.reader
def _get_all(context, where=sa.true()):
    query = _select().where(where).order_by(_CELL0_FIRST, _CELLS.c.name)
    return context.session.execute(query).all()


@api_db.reader
def _get_page(context, limit, marker):
    order = (_CELL0_FIRST, _CELLS.c.name)
    marker_values = None
    if marker is not None:
        found = context.session.execute(sa.select(*order).where(
            _CELLS.c.uuid == marker)).first()
        if found is None:
            raise exception.MarkerNotFound(marker=marker)
        marker_values = tuple(found)
    return context.session.execute(
        pages.page(_select(), order, marker_values, limit)).all()


@api_db.reader
def _get_by_uuid_or_name(context, ident):
    query = _select().where(
        sa.or_(_CELLS.c.uuid == ident, _CELLS.c.name == ident))
    rows = context.session.execute(query).all()
    # A uuid match wins over a cell that happens to be named like a uuid.
    rows.sort(key=lambda row: row.uuid != ident)
    return rows[0] if rows else None


@api_db.writer
def _update(context, cell_id, values):
    result = context.session.execute(
        sa.update(_CELLS).where(_CELLS.c.id == cell_id).values(
            **_with_zone_id(context, values)))
    if not result.rowcount:
        return None
    return _get_one(context, _CELLS.c.id == cell_id)


def _count(context, table, column, cell_id):
    query = sa.select(sa.func.count()).select_from(table).where(
        column == cell_id)
    return context.session.execute(query).scalar()


@api_db.writer
def _destroy(context, cell_id):
    """Delete the cell; return what still refers to it instead, if any.

    Checked here rather than left to the foreign keys so that every
    backend (SQLite does not enforce them by default) refuses alike.
    """
    remaining = [
        what for what, table, column in (
            ('host mappings', _HOSTS, _HOSTS.c.cell_id),
            ('instance mappings', _INSTANCES, _INSTANCES.c.cell_id),
            ('resource providers', _PROVIDERS, _PROVIDERS.c.cell_id))
        if _count(context, table, column, cell_id)]
    if remaining:
        return remaining, 0
    result = context.session.execute(
        sa.delete(_CELLS).where(_CELLS.c.id == cell_id))
    return [], result.rowcount


def _check_zone(cell_uuid, zone_uuid):
    # cell0 holds the instances that no cell took; it is never scheduled
    # to, so it sits in no zone.
    if cell_uuid == CELL0_UUID and zone_uuid is not None:
        raise exception.Cell0Unchangeable(what='a zone')


def _raise_exists(exc, name, uuid):
    if 'uuid' in exc.columns:
        raise exception.CellMappingUuidExists(uuid=uuid) from exc
    raise exception.CellMappingExists(name=name) from exc


class CellMapping(base.DomainObject):
    """A cell: its name, database URL and transport URL."""

    FIELDS = ('id', 'uuid', 'name', 'database_connection', 'transport_url',
              'disabled', 'zone_uuid', 'created_at', 'updated_at')

    @property
    def is_cell0(self):
        return self.uuid == CELL0_UUID

    @classmethod
    def create(cls, context, name, database_connection, transport_url,
               uuid=None, disabled=False, zone_uuid=None):
        """Map a new cell; a taken name or uuid raises CellMappingExists.

        ``zone_uuid`` is the zone the cell sits in (None: the top level);
        an unknown one raises ZoneNotFound and maps nothing.
        """
        uuid = uuid or uuidutils.generate_uuid()
        _check_zone(uuid, zone_uuid)
        values = {'uuid': uuid, 'name': name,
                  'database_connection': database_connection,
                  'transport_url': transport_url, 'disabled': disabled,
                  'zone_uuid': zone_uuid}
        try:
            return cls.from_row(_create(context, values))
        except db_exc.DBDuplicateEntry as exc:
            _raise_exists(exc, name, uuid)
        except db_exc.DBReferenceError as exc:
            # The zone was deleted between our read and the insert.
            raise exception.ZoneNotFound(zone=zone_uuid) from exc

    @classmethod
    def get_by_uuid(cls, context, uuid):
        row = _get_one_or_none(context, _CELLS.c.uuid == uuid)
        if row is None:
            raise exception.CellMappingNotFound(cell=uuid)
        return cls.from_row(row)

    @classmethod
    def get_by_name(cls, context, name):
        row = _get_one_or_none(context, _CELLS.c.name == name)
        if row is None:
            raise exception.CellMappingNotFound(cell=name)
        return cls.from_row(row)

    @classmethod
    def get_by_uuid_or_name(cls, context, ident):
        """The cell an operator named by either its uuid or its name."""
        row = _get_by_uuid_or_name(context, ident)
        if row is None:
            raise exception.CellMappingNotFound(cell=ident)
        return cls.from_row(row)

    @classmethod
    def get_all(cls, context):
        """Every cell, cell0 first, then by name."""
        return [cls.from_row(row) for row in _get_all(context)]

    @classmethod
    def get_page(cls, context, limit, marker=None):
        """Up to ``limit`` cells in ``get_all``'s order, after ``marker``.

        ``marker`` is a cell uuid; an unknown one raises MarkerNotFound.
        """
        return [cls.from_row(row)
                for row in _get_page(context, limit, marker)]

    @classmethod
    def get_enabled(cls, context):
        """The cells that take new instances (cell0 included)."""
        return [cls.from_row(row)
                for row in _get_all(context, _CELLS.c.disabled == sa.false())]

    def update(self, context, **values):
        """Change name, URLs, ``disabled`` or ``zone_uuid`` (None: the top
        level); a taken name raises Exists, an unknown zone ZoneNotFound."""
        unknown = set(values) - UPDATABLE_FIELDS
        if unknown:
            raise exception.Invalid(
                reason=f'cell mappings have no updatable field(s) '
                       f'{", ".join(sorted(unknown))}')
        if 'zone_uuid' in values:
            _check_zone(self.uuid, values['zone_uuid'])
        try:
            row = _update(context, self.id, values)
        except db_exc.DBDuplicateEntry as exc:
            _raise_exists(exc, values.get('name'), self.uuid)
        except db_exc.DBReferenceError as exc:
            # The zone was deleted between our read and the update.
            raise exception.ZoneNotFound(zone=values.get('zone_uuid')) \
                from exc
        if row is None:
            raise exception.CellMappingNotFound(cell=self.uuid)
        self.load_row(row)

    def destroy(self, context):
        """Unmap the cell; refused while mappings or providers use it."""
        try:
            remaining, deleted = _destroy(context, self.id)
        except db_exc.DBReferenceError as exc:
            # Something was mapped to the cell after our check.
            raise exception.CellHasResources(
                cell=self.name, what='host or instance mappings') from exc
        if remaining:
            raise exception.CellHasResources(cell=self.name,
                                             what=' and '.join(remaining))
        if not deleted:
            raise exception.CellMappingNotFound(cell=self.uuid)


# Helpers for the mappings that point at a cell (hosts, instances): they
# run inside the caller's API database transaction.

_PREFIX = 'cell_mapping_'


def get_cell_id(context, cell_uuid):
    """The id of the cell with ``cell_uuid``, or CellMappingNotFound."""
    cell_id = context.session.execute(
        sa.select(_CELLS.c.id).where(_CELLS.c.uuid == cell_uuid)).scalar()
    if cell_id is None:
        raise exception.CellMappingNotFound(cell=cell_uuid)
    return cell_id


def cell_id_subquery(cell_uuid):
    """A scalar subquery for the id of the cell with ``cell_uuid``."""
    return sa.select(_CELLS.c.id).where(
        _CELLS.c.uuid == cell_uuid).scalar_subquery()


def select_with_cell(table):
    """SELECT ``table``'s rows with their cell (if any) joined in."""
    return sa.select(
        table, *base.labelled_columns(_CELLS, _PREFIX),
        _CELL_ZONES.c.uuid.label(_PREFIX + 'zone_uuid')).select_from(
        table.outerjoin(_CELLS, table.c.cell_id == _CELLS.c.id).outerjoin(
            _CELL_ZONES, _CELLS.c.zone_id == _CELL_ZONES.c.id))


def cell_from_joined_row(row):
    """The CellMapping of a ``select_with_cell`` row, or None."""
    if row.cell_id is None:
        return None
    return CellMapping.from_row(row, prefix=_PREFIX)
