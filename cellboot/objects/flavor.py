"""Flavors: the sizes (vCPUs, RAM, disk) a server can be booted with.

Flavors live in the API database. Their input is checked here, once, so
that ``cellboot-manage flavor create`` and ``POST /flavors`` reject the
same bad values with the same messages.
"""

from oslo_db import exception as db_exc
from oslo_utils import strutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models
from cellboot.db import pages
from cellboot import exception
from cellboot.objects import base
from cellboot.objects import flavor_extra_specs

_FLAVORS = models.Flavor.__table__

# The largest value a (signed 32-bit) INTEGER column holds on every backend.
MAX_INT = 2 ** 31 - 1
MAX_NAME_LENGTH = 255


def _get(context, where):
    query = sa.select(_FLAVORS).where(where).order_by(_FLAVORS.c.name)
    return context.session.execute(query).all()


@api_db.writer
def _create(context, values, extra_specs):
    """The flavor and its extra specs, in one transaction."""
    result = context.session.execute(sa.insert(_FLAVORS).values(**values))
    flavor_id = result.inserted_primary_key[0]
    flavor_extra_specs.put(context, flavor_id, extra_specs)
    return _with_specs(context, _get(context, _FLAVORS.c.id == flavor_id))[0]


def _with_specs(context, rows):
    """``[(row, extra_specs)]``: the specs read in one more query."""
    specs = flavor_extra_specs.of(context, [row.id for row in rows])
    return [(row, specs[row.id]) for row in rows]


@api_db.reader
def _get_where(context, where):
    return _with_specs(context, _get(context, where))


@api_db.reader
def _get_page(context, limit, marker):
    marker_values = None
    if marker is not None:
        name = context.session.execute(sa.select(_FLAVORS.c.name).where(
            _FLAVORS.c.flavorid == marker)).scalar()
        if name is None:
            raise exception.MarkerNotFound(marker=marker)
        marker_values = (name,)
    return _with_specs(context, context.session.execute(pages.page(
        sa.select(_FLAVORS), (_FLAVORS.c.name,), marker_values,
        limit)).all())


@api_db.writer
def _destroy(context, flavor_id):
    flavor_extra_specs.delete_all(context, flavor_id)
    return context.session.execute(
        sa.delete(_FLAVORS).where(_FLAVORS.c.id == flavor_id)).rowcount


def _validate_int(name, value, min_value):
    try:
        return strutils.validate_integer(value, name, min_value, MAX_INT)
    except ValueError as exc:
        raise exception.Invalid(reason=str(exc)) from exc


def _validate_text(name, value):
    if (not isinstance(value, str) or not value.strip()
            or len(value) > MAX_NAME_LENGTH):
        raise exception.Invalid(
            reason=f'flavor {name} must be 1 to {MAX_NAME_LENGTH} '
                   f'characters, not {value!r}')
    return value


class Flavor(base.DomainObject):
    """A server size."""

    FIELDS = ('id', 'flavorid', 'name', 'vcpus', 'memory_mb', 'root_gb',
              'is_public', 'disabled', 'description', 'extra_specs')

    @classmethod
    def _from(cls, found):
        row, extra_specs = found
        return cls.from_row(row, extra_specs=extra_specs)

    @classmethod
    def create(cls, context, name, vcpus, memory_mb, root_gb=0,
               flavorid=None, is_public=True, description=None,
               extra_specs=None):
        """Create a flavor; a taken name or flavorid raises FlavorExists.

        vcpus and memory_mb must be positive, root_gb zero or more (0 means
        the image's size), the name 1-255 characters: anything else raises
        exception.Invalid before the database is touched. ``extra_specs``
        (``{key: value}``, checked by the caller: ``cellboot.api.
        extra_specs``) are written in the same transaction.
        """
        values = {
            'name': _validate_text('name', name),
            'flavorid': _validate_text(
                'flavorid', flavorid or uuidutils.generate_uuid()),
            'vcpus': _validate_int('vcpus', vcpus, 1),
            'memory_mb': _validate_int('memory_mb', memory_mb, 1),
            'root_gb': _validate_int('root_gb', root_gb, 0),
            'is_public': bool(is_public),
            'disabled': False,
            'description': description,
        }
        try:
            return cls._from(_create(context, values, extra_specs or {}))
        except db_exc.DBDuplicateEntry as exc:
            field = 'flavorid' if 'flavorid' in exc.columns else 'name'
            raise exception.FlavorExists(field=field,
                                         value=values[field]) from exc

    @classmethod
    def get_by_flavor_id(cls, context, flavorid):
        rows = _get_where(context, _FLAVORS.c.flavorid == flavorid)
        if not rows:
            raise exception.FlavorNotFound(flavor=flavorid)
        return cls._from(rows[0])

    @classmethod
    def get_by_name(cls, context, name):
        rows = _get_where(context, _FLAVORS.c.name == name)
        if not rows:
            raise exception.FlavorNotFound(flavor=name)
        return cls._from(rows[0])

    @classmethod
    def get_all(cls, context):
        """Every flavor, by name."""
        return [cls._from(found) for found in _get_where(context, sa.true())]

    @classmethod
    def get_page(cls, context, limit, marker=None):
        """Up to ``limit`` flavors by name, after the flavor id ``marker``.

        An unknown marker raises MarkerNotFound.
        """
        return [cls._from(found)
                for found in _get_page(context, limit, marker)]

    def destroy(self, context):
        if not _destroy(context, self.id):
            raise exception.FlavorNotFound(flavor=self.flavorid)
