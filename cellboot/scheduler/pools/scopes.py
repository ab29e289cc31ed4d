"""Which cells a pool serves: its scopes, resolved against the API DB.

A scope is a cell or a zone (``resource_pool_scopes``, exactly one of
``cell_id`` and ``zone_id``). A zone scope serves every cell at or below
the zone, however deep, so that a pool given to a region serves the
cells added to it later without being told.
"""

import sqlalchemy as sa

from cellboot import exception
from cellboot.db.api import models

CELLS = models.CellMapping.__table__
ZONES = models.Zone.__table__
SCOPES = models.ResourcePoolScope.__table__


def _one_name(value, kind):
    if not isinstance(value, str) or not value or len(value) > 255:
        raise exception.InvalidPool(
            reason=f'a {kind} is named by a non-empty string of at most '
                   f'255 characters, not {str(value)[:80]!r}')
    return value


def resolve(session, cells=(), zones=()):
    """``[(cell_id, zone_id)]`` of the named cells (names or uuids) and
    zones (names or uuids), in the caller's transaction.

    Raises InvalidPool naming the first unknown one, or when none is
    named: a pool that serves nothing could never be drawn from.
    """
    if isinstance(cells, str) or isinstance(zones, str) \
            or not isinstance(cells, (list, tuple)) \
            or not isinstance(zones, (list, tuple)):
        raise exception.InvalidPool(
            reason='cells and zones are lists of names')
    if not cells and not zones:
        raise exception.InvalidPool(
            reason='a pool serves at least one cell or zone')
    found = []
    for kind, names, table, column in (('cell', cells, CELLS, 'cell_id'),
                                       ('zone', zones, ZONES, 'zone_id')):
        for name in dict.fromkeys(names):
            _one_name(name, kind)
            row_id = session.execute(sa.select(table.c.id).where(
                sa.or_(table.c.name == name, table.c.uuid == name),
            ).order_by(table.c.id)).scalar()
            if row_id is None:
                raise exception.InvalidPool(
                    reason=f'no {kind} is called {name[:80]!r}')
            found.append((row_id, None) if column == 'cell_id'
                         else (None, row_id))
    return list(dict.fromkeys(found))


def served_cells(session):
    """``{pool provider id: {cell uuid, ...}}``: the cells each pool
    serves, its zone scopes expanded to every cell below them."""
    cells = session.execute(sa.select(CELLS.c.uuid, CELLS.c.zone_id,
                                      CELLS.c.id)).all()
    parents = dict(session.execute(sa.select(ZONES.c.id,
                                             ZONES.c.parent_id)).all())
    by_id = {cell_id: uuid for uuid, _zone, cell_id in cells}
    below = {}  # zone id -> cell uuids at or below it
    for uuid, zone_id, _cell_id in cells:
        seen = set()
        while zone_id is not None and zone_id not in seen:
            seen.add(zone_id)
            below.setdefault(zone_id, set()).add(uuid)
            zone_id = parents.get(zone_id)
    served = {}
    for provider_id, cell_id, zone_id in session.execute(sa.select(
            SCOPES.c.resource_provider_id, SCOPES.c.cell_id,
            SCOPES.c.zone_id)):
        cells_of = served.setdefault(provider_id, set())
        if cell_id is not None and cell_id in by_id:
            cells_of.add(by_id[cell_id])
        elif zone_id is not None:
            cells_of.update(below.get(zone_id, ()))
    return served


def named(session):
    """``{pool provider id: {'cells': [names], 'zones': [names]}}``: the
    scopes as an operator wrote them."""
    rows = session.execute(sa.select(
        SCOPES.c.resource_provider_id, CELLS.c.name.label('cell'),
        ZONES.c.name.label('zone'),
    ).select_from(SCOPES.outerjoin(CELLS, CELLS.c.id == SCOPES.c.cell_id)
                  .outerjoin(ZONES, ZONES.c.id == SCOPES.c.zone_id)))
    result = {}
    for provider_id, cell, zone in rows:
        entry = result.setdefault(provider_id, {'cells': [], 'zones': []})
        if cell is not None:
            entry['cells'].append(cell)
        if zone is not None:
            entry['zones'].append(zone)
    for entry in result.values():
        entry['cells'].sort()
        entry['zones'].sort()
    return result
