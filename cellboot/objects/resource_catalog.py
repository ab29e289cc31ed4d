"""The catalog of custom resource classes and traits an admin created.

Standard classes and traits come from os-resource-classes and os-traits
and are never stored; the ``CUSTOM_*`` names a deployment uses are rows
of the API database (``resource_classes``, ``traits``), so that a flavor
naming a custom class or trait that nobody created (a typo) is refused
rather than accepted and never scheduled. Whether a name is well formed
is the caller's question (``cellboot.scheduler.resources.classes`` and
``traits`` sit above this layer); this module only stores, reads and
refuses to delete a name still in use.

One ``Catalog`` per table: classes and traits differ only in the table
and in what may use a name (``_users``).
"""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models
from cellboot import exception

RESOURCES_PREFIX = 'resources:'
TRAIT_PREFIX = 'trait:'

_SPECS = models.FlavorExtraSpec.__table__
_FLAVORS = models.Flavor.__table__
_PROVIDERS = models.ResourceProvider.__table__
_INVENTORIES = models.Inventory.__table__
_POOL_TRAITS = models.ProviderTrait.__table__


def _flavors_using(context, key):
    """Names of the flavors with the extra spec ``key``."""
    return context.session.execute(
        sa.select(_FLAVORS.c.name).select_from(_SPECS.join(
            _FLAVORS, _SPECS.c.flavor_id == _FLAVORS.c.id)).where(
                _SPECS.c.key == key).order_by(_FLAVORS.c.name)).scalars().all()


def _pools_with(context, table, column, name):
    """Names of the shared pools whose ``table`` row has ``name``."""
    return context.session.execute(
        sa.select(_PROVIDERS.c.name).select_from(table.join(
            _PROVIDERS, table.c.resource_provider_id == _PROVIDERS.c.id
        )).where(column == name, _PROVIDERS.c.is_pool.is_(sa.true()))
        .order_by(_PROVIDERS.c.name)).scalars().all()


def _class_users(context, name):
    return (_flavors_using(context, RESOURCES_PREFIX + name),
            _pools_with(context, _INVENTORIES,
                        _INVENTORIES.c.resource_class, name))


def _trait_users(context, name):
    return (_flavors_using(context, TRAIT_PREFIX + name),
            _pools_with(context, _POOL_TRAITS, _POOL_TRAITS.c.trait, name))


def _described(flavors, pools):
    parts = []
    for what, names in (('flavor', flavors), ('pool', pools)):
        if names:
            shown = ', '.join(names[:5]) + (', ...' if len(names) > 5
                                            else '')
            parts.append(f'{len(names)} {what}'
                         f'{"" if len(names) == 1 else "s"} ({shown})')
    return ' and '.join(parts)


@api_db.reader
def _names(context, table):
    return context.session.execute(
        sa.select(table.c.name).order_by(table.c.name)).scalars().all()


@api_db.reader
def _present(context, table, names):
    return set(context.session.execute(sa.select(table.c.name).where(
        table.c.name.in_(sorted(names)))).scalars().all())


@api_db.writer
def _insert(context, table, name):
    context.session.execute(sa.insert(table).values(name=name))


@api_db.writer
def _delete(context, table, users, kind, name):
    """Delete ``name`` unless something uses it, in one transaction."""
    found = context.session.execute(sa.select(table.c.id).where(
        table.c.name == name)).scalar()
    if found is None:
        raise exception.CatalogNameNotFound(kind=kind, name=name)
    flavors, pools = users(context, name)
    if flavors or pools:
        raise exception.CatalogNameInUse(
            kind=kind, name=name, what=_described(flavors, pools))
    context.session.execute(sa.delete(table).where(table.c.id == found))


class Catalog:
    """The custom names of one kind (``resource class`` or ``trait``)."""

    def __init__(self, kind, table, users):
        self.kind = kind
        self._table = table
        self._users = users

    def names(self, context):
        """Every created custom name, sorted."""
        return list(_names(context, self._table))

    def missing(self, context, names):
        """The names of ``names`` that were not created, sorted."""
        names = set(names)
        if not names:
            return []
        return sorted(names - _present(context, self._table, names))

    def exists(self, context, name):
        return not self.missing(context, [name])

    def create(self, context, name):
        """Store ``name`` (already checked to be a custom name).

        :raises: CatalogNameExists when it was created before.
        """
        try:
            _insert(context, self._table, name)
        except db_exc.DBDuplicateEntry as exc:
            raise exception.CatalogNameExists(kind=self.kind,
                                              name=name) from exc

    def destroy(self, context, name):
        """Forget ``name``.

        :raises: CatalogNameNotFound, CatalogNameInUse (a flavor's extra
            spec or a shared pool still names it).
        """
        _delete(context, self._table, self._users, self.kind, name)


CLASSES = Catalog('resource class', models.CustomResourceClass.__table__,
                  _class_users)
TRAITS = Catalog('trait', models.CustomTrait.__table__, _trait_users)
