"""Zones: optional levels above cells (region -> zone -> cells).

A zone is a name in the API database; a cell mapping points at the zone
it sits in (``CellMapping.zone_uuid``), a zone at the zone it sits in
(``parent_uuid``), and NULL at either place means the top level, which
is where every cell was before zones existed. A zone's aggregate is
that of everything below it (``cellboot.scheduler.zone_aggregate``).

The tree has no cycle by construction: a zone is created under a parent
that already exists and is never moved. ``depth_first`` still guards
against one (a row edited by hand) rather than looping.
"""

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models
from cellboot import exception
from cellboot.objects import base

MAX_NAME = 255

_ZONES = models.Zone.__table__
_PARENTS = _ZONES.alias('parents')
_CELLS = models.CellMapping.__table__


def validate_name(name):
    """``name`` if it can name a zone; InvalidZoneName saying why if not.

    A name that looks like a uuid is refused: zones are named by uuid or
    name alike, and the two must never be confused.
    """
    if not isinstance(name, str) or not name:
        raise exception.InvalidZoneName(reason='it is empty')
    if len(name) > MAX_NAME:
        raise exception.InvalidZoneName(
            reason=f'it is longer than {MAX_NAME} characters')
    if not name.isprintable():
        raise exception.InvalidZoneName(
            reason='it holds a character that is not printable')
    if name != name.strip():
        raise exception.InvalidZoneName(
            reason='it starts or ends with a space')
    if uuidutils.is_uuid_like(name):
        raise exception.InvalidZoneName(
            reason='it looks like a uuid, which would be ambiguous')
    return name


def _select():
    return sa.select(_ZONES, _PARENTS.c.uuid.label('parent_uuid')
                     ).select_from(_ZONES.outerjoin(
                         _PARENTS, _ZONES.c.parent_id == _PARENTS.c.id))


def _find(context, ident):
    """The row of the zone named by uuid or name, or None."""
    column = _ZONES.c.uuid if uuidutils.is_uuid_like(ident) \
        else _ZONES.c.name
    return context.session.execute(_select().where(column == ident)).first()


@api_db.reader
def _get(context, ident):
    return _find(context, ident)


@api_db.reader
def _get_all(context):
    return context.session.execute(
        _select().order_by(_ZONES.c.name)).all()


@api_db.writer
def _create(context, values, parent):
    if parent is not None:
        found = _find(context, parent)
        if found is None:
            raise exception.ZoneNotFound(zone=parent)
        values['parent_id'] = found.id
    result = context.session.execute(sa.insert(_ZONES).values(**values))
    return context.session.execute(_select().where(
        _ZONES.c.id == result.inserted_primary_key[0])).first()


def _count(context, column, zone_id):
    return context.session.execute(sa.select(sa.func.count()).where(
        column == zone_id)).scalar()


@api_db.writer
def _destroy(context, ident):
    """Delete the zone; return what it still holds instead, if anything.

    Checked here rather than left to the foreign keys so that every
    backend (SQLite does not enforce them by default) refuses alike.
    """
    found = _find(context, ident)
    if found is None:
        raise exception.ZoneNotFound(zone=ident)
    cells = _count(context, _CELLS.c.zone_id, found.id)
    zones = _count(context, _ZONES.c.parent_id, found.id)
    if cells or zones:
        return found, cells, zones
    context.session.execute(sa.delete(_ZONES).where(
        _ZONES.c.id == found.id))
    return found, 0, 0


def _holdings(cells, zones):
    return ' and '.join(f'{count} {what}{"" if count == 1 else "s"}'
                        for count, what in ((cells, 'cell'), (zones, 'zone'))
                        if count)


class Zone(base.DomainObject):
    """A level above cells: a region, a zone... ``parent_uuid`` None at
    the top."""

    FIELDS = ('id', 'uuid', 'name', 'parent_uuid', 'created_at',
              'updated_at')

    @classmethod
    def get_all(cls, context):
        """Every zone, by name, in one query."""
        return [cls.from_row(row) for row in _get_all(context)]

    @classmethod
    def get(cls, context, name_or_uuid):
        """The zone an operator named by uuid or name; ZoneNotFound."""
        row = _get(context, name_or_uuid)
        if row is None:
            raise exception.ZoneNotFound(zone=name_or_uuid)
        return cls.from_row(row)

    @classmethod
    def create(cls, context, name, parent=None):
        """A new zone under ``parent`` (uuid or name; None: top level).

        :raises: InvalidZoneName, ZoneNotFound (no such parent),
            ZoneExists (the name is taken).
        """
        values = {'uuid': uuidutils.generate_uuid(),
                  'name': validate_name(name)}
        try:
            return cls.from_row(_create(context, values, parent))
        except db_exc.DBDuplicateEntry as exc:
            raise exception.ZoneExists(name=name) from exc
        except db_exc.DBReferenceError as exc:
            # The parent was deleted between our read and the insert.
            raise exception.ZoneNotFound(zone=parent) from exc

    @classmethod
    def destroy(cls, context, name_or_uuid):
        """Delete an empty zone.

        :raises: ZoneNotFound, ZoneInUse (it still holds cells or zones).
        """
        try:
            found, cells, zones = _destroy(context, name_or_uuid)
        except db_exc.DBReferenceError as exc:
            # Something was put in the zone after our check.
            raise exception.ZoneInUse(zone=name_or_uuid,
                                      what='cells or zones') from exc
        if cells or zones:
            raise exception.ZoneInUse(zone=found.name,
                                      what=_holdings(cells, zones))


def depth_first(zones):
    """``[(depth, zone)]``: each zone followed by the zones below it.

    Zones at one level sort by name, as ``get_all`` returns them. A zone
    whose parent is missing from ``zones``, or that is in a cycle (rows
    edited by hand), is listed at the top level rather than dropped or
    walked forever.
    """
    by_uuid = {zone.uuid: zone for zone in zones}
    children = {}
    for zone in zones:
        children.setdefault(zone.parent_uuid, []).append(zone)
    listed = []
    seen = set()

    def walk(zone, depth):
        stack = [(depth, zone)]
        while stack:
            depth, zone = stack.pop()
            if zone.uuid in seen:
                continue
            seen.add(zone.uuid)
            listed.append((depth, zone))
            stack.extend((depth + 1, child) for child in
                         reversed(children.get(zone.uuid, [])))

    for zone in zones:
        if zone.parent_uuid is None or zone.parent_uuid not in by_uuid:
            walk(zone, 0)
    for zone in zones:
        if zone.uuid not in seen:
            walk(zone, 0)
    return listed


get_all = Zone.get_all
get = Zone.get
create = Zone.create
destroy = Zone.destroy
