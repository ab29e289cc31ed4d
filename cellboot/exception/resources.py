"""The errors of the resource model: providers, inventories and claims,
the shared pools, allocation requests and the custom resource classes
and traits they are counted in.

Kept apart from ``cellboot.exception`` because they are one family that
only the scheduler's resource code and the API paths in front of it
raise, and so that the general errors stay readable in one module.
Every one is re-exported there and known by that module
(``base.CellbootException.__init_subclass__``), so callers, RPC, logs
and notifications name it ``exception.ClaimFailed`` as before.
"""

from cellboot.exception import base

__all__ = (
    'AllocationIsServer', 'AllocationNotFound', 'CatalogNameExists',
    'CatalogNameInUse', 'CatalogNameNotFound', 'ClaimConflict',
    'ClaimFailed', 'InvalidInventory', 'InvalidPool', 'InventoryInUse',
    'PoolExists', 'PoolInUse', 'PoolInventoryInUse', 'PoolNotFound',
    'ResourceProviderConflict', 'ResourceProviderExists',
    'ResourceProviderInUse', 'ResourceProviderNotFound',
)


class ResourceProviderNotFound(base.NotFound):
    msg_fmt = 'Resource provider %(uuid)s could not be found.'


class ResourceProviderExists(base.Conflict):
    msg_fmt = ('Cannot register resource provider %(uuid)s as %(name)s: '
               'resource provider %(other)s already has that name. Delete '
               'the stale provider (a re-installed host) first.')


class ResourceProviderInUse(base.Conflict):
    msg_fmt = ('Resource provider %(uuid)s still holds the allocations of '
               '%(consumers)d consumer(s); delete or move those servers '
               'before deleting it.')


class InvalidInventory(base.Invalid):
    msg_fmt = ('Invalid %(resource_class)s inventory for resource provider '
               '%(uuid)s: %(reason)s')


class InventoryInUse(base.Conflict):
    msg_fmt = ('Cannot remove the %(resource_class)s inventory of resource '
               'provider %(uuid)s: %(used)d of it is allocated.')


class ClaimFailed(base.CellbootException):
    msg_fmt = ('Cannot claim %(amount)s %(resource_class)s on resource '
               'provider %(uuid)s for consumer %(consumer)s: %(reason)s')
    code = 409


class ClaimConflict(base.Conflict):
    msg_fmt = ('Could not claim resources on resource provider %(uuid)s for '
               'consumer %(consumer)s: concurrent claims changed it '
               '%(attempts)d times in a row. Retry the request, or raise '
               '[scheduler] claim_retries if this happens often.')


class ResourceProviderConflict(base.Conflict):
    msg_fmt = ('Resource provider %(uuid)s kept changing while it was being '
               '%(action)s (%(attempts)d attempts); try again.')


class CatalogNameNotFound(base.NotFound):
    msg_fmt = 'Custom %(kind)s %(name)s does not exist.'


class CatalogNameExists(base.Conflict):
    msg_fmt = 'Custom %(kind)s %(name)s already exists.'


class CatalogNameInUse(base.Conflict):
    msg_fmt = ('Custom %(kind)s %(name)s is still used by %(what)s; remove '
               'those first.')


class PoolNotFound(base.NotFound):
    msg_fmt = 'Resource pool %(pool)s does not exist.'


class PoolExists(base.Conflict):
    msg_fmt = ('A resource provider named %(name)s already exists; a pool '
               'needs a name of its own.')


class PoolInUse(base.Conflict):
    msg_fmt = ('Resource pool %(pool)s still holds the allocations of '
               '%(consumers)d consumer(s); delete those servers first.')


class PoolInventoryInUse(base.Conflict):
    msg_fmt = ('Cannot set the %(resource_class)s inventory of resource pool '
               '%(pool)s to a capacity of %(capacity)d: %(used)d of it is '
               'allocated.')


class InvalidPool(base.Invalid):
    msg_fmt = 'Invalid resource pool: %(reason)s'


class AllocationNotFound(base.NotFound):
    """Also what another project's allocation request answers, so that
    its existence is not revealed."""

    msg_fmt = 'Allocation %(uuid)s could not be found.'


class AllocationIsServer(base.Invalid):
    msg_fmt = ('A request with %(classes)s is a server: use POST /servers '
               '(os-allocations takes resources that are not a server\'s)')
