"""A flavor's extra specs: ``{key: value}`` strings in the API database.

What the keys mean (``resources:CLASS``, ``trait:NAME``) is checked by
the API and ``cellboot-manage`` before anything is written, since it
needs the name rules of the scheduler, which sits above this layer;
here they are stored and read as they are. Reads take many flavors at
once, so that a page of flavors costs one more query, not one per
flavor.
"""

import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models
from cellboot import exception

_SPECS = models.FlavorExtraSpec.__table__


def of(context, flavor_ids):
    """``{flavor row id: {key: value}}`` for every id of ``flavor_ids``.

    Run inside the caller's transaction (reader or writer).
    """
    found = {flavor_id: {} for flavor_id in flavor_ids}
    if not found:
        return found
    rows = context.session.execute(
        sa.select(_SPECS.c.flavor_id, _SPECS.c.key, _SPECS.c.value).where(
            _SPECS.c.flavor_id.in_(sorted(found))).order_by(
                _SPECS.c.key)).all()
    for row in rows:
        found[row.flavor_id][row.key] = row.value
    return found


def put(context, flavor_id, specs):
    """Set each key of ``specs`` (new or changed), in the caller's
    transaction; the other keys stay."""
    if not specs:
        return
    current = of(context, [flavor_id])[flavor_id]
    for key, value in specs.items():
        if key not in current:
            context.session.execute(sa.insert(_SPECS).values(
                flavor_id=flavor_id, key=key, value=value))
        elif current[key] != value:
            context.session.execute(sa.update(_SPECS).where(
                _SPECS.c.flavor_id == flavor_id,
                _SPECS.c.key == key).values(value=value))


@api_db.reader
def get(context, flavor_id):
    """The specs of one flavor (its row id), ``{key: value}``."""
    return of(context, [flavor_id])[flavor_id]


@api_db.writer
def update(context, flavor_id, specs):
    """``put`` in a transaction of its own."""
    put(context, flavor_id, specs)


@api_db.writer
def delete(context, flavor_id, key, flavorid=None):
    """Remove one key; FlavorExtraSpecNotFound when it was not set."""
    deleted = context.session.execute(sa.delete(_SPECS).where(
        _SPECS.c.flavor_id == flavor_id, _SPECS.c.key == key)).rowcount
    if not deleted:
        raise exception.FlavorExtraSpecNotFound(flavor=flavorid or flavor_id,
                                                key=key)


def delete_all(context, flavor_id):
    """Remove every spec of a flavor, in the caller's transaction."""
    context.session.execute(sa.delete(_SPECS).where(
        _SPECS.c.flavor_id == flavor_id))
