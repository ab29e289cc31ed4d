"""Domain errors. Each message says what went wrong in operator terms.

Subclasses set ``msg_fmt``; keyword arguments fill it in. Database-layer
errors (``DBDuplicateEntry``, connection failures) are turned into these at
the object boundary so that callers never see SQLAlchemy exceptions.

The kinds every error is one of are defined in ``base``, the resource
model's errors (providers, inventories, claims, pools, allocation
requests, custom classes and traits) in ``resources``; all are named
here, ``exception.X``, like the others.
"""

from cellboot.exception.base import CellbootException
from cellboot.exception.base import Conflict
from cellboot.exception.base import Forbidden
from cellboot.exception.base import Invalid
from cellboot.exception.base import NotFound
# The resource model's errors, named here like every other error.
from cellboot.exception.resources import *  # noqa: F401,F403


class PolicyNotAuthorized(Forbidden):
    msg_fmt = 'Policy does not allow %(action)s to be performed.'


class ConfigurationError(CellbootException):
    msg_fmt = 'Configuration error: %(reason)s'


class DatabaseConnectionError(CellbootException):
    msg_fmt = 'Cannot use database %(url)s: %(reason)s'


class MarkerNotFound(Invalid):
    msg_fmt = ('Marker %(marker)s could not be found: start again without '
               'a marker.')


class QuotaExceeded(CellbootException):
    """Nova's TooManyInstances, word for word, so that clients parse it."""

    msg_fmt = ('Quota exceeded for %(resource)s: Requested %(requested)s, '
               'but already used %(used)s of %(limit)s %(resource)s')
    code = 403


class InvalidDatabaseURL(Invalid):
    msg_fmt = 'Invalid database URL %(url)r: %(reason)s'


class CellMappingNotFound(NotFound):
    msg_fmt = 'Cell %(cell)s does not exist.'


class CellMappingExists(Conflict):
    msg_fmt = 'A cell named %(name)s already exists.'


class CellHasResources(Conflict):
    msg_fmt = ('Cell %(cell)s still has %(what)s; delete them first or use '
               '--force.')


class ZoneNotFound(NotFound):
    msg_fmt = 'Zone %(zone)s does not exist.'


class ZoneExists(Conflict):
    msg_fmt = 'A zone named %(name)s already exists.'


class ZoneInUse(Conflict):
    msg_fmt = ('Zone %(zone)s still holds %(what)s; move its cells out '
               '(cell_v2 update_cell --no-zone) and delete its zones first.')


class InvalidZoneName(Invalid):
    msg_fmt = 'Invalid zone name: %(reason)s'


class HostMappingNotFound(NotFound):
    msg_fmt = 'Host %(host)s is not mapped to any cell.'


class HostInAnotherCell(Invalid):
    msg_fmt = ('The scheduler of cell %(cell)s offered host %(host)s, which '
               'is mapped to another cell: a cell\'s scheduler may only '
               'offer its own hosts.')


class HostMappingExists(Conflict):
    msg_fmt = 'Host %(host)s is already mapped to a cell.'


class InstanceMappingNotFound(NotFound):
    msg_fmt = 'Instance %(uuid)s has no instance mapping.'


class InstanceMappingExists(Conflict):
    msg_fmt = 'Instance %(uuid)s already has an instance mapping.'


class BuildRequestNotFound(NotFound):
    msg_fmt = 'Build request for instance %(uuid)s could not be found.'


class BuildRequestExists(Conflict):
    msg_fmt = 'A build request for instance %(uuid)s already exists.'


class RequestSpecNotFound(NotFound):
    msg_fmt = 'Request spec for instance %(uuid)s could not be found.'


class RequestSpecExists(Conflict):
    msg_fmt = 'A request spec for instance %(uuid)s already exists.'


class FlavorNotFound(NotFound):
    msg_fmt = 'Flavor %(flavor)s could not be found.'


class FlavorExists(Conflict):
    msg_fmt = 'A flavor with %(field)s %(value)s already exists.'


class InstanceNotFound(NotFound):
    msg_fmt = 'Instance %(uuid)s could not be found.'


class InstanceExists(Conflict):
    msg_fmt = 'Instance %(uuid)s already exists.'


class ComputeNodeNotFound(NotFound):
    msg_fmt = 'Compute node %(node)s could not be found.'


class ComputeNodeExists(Conflict):
    msg_fmt = 'Compute node %(node)s already exists.'


class ServiceNotFound(NotFound):
    msg_fmt = 'Service %(binary)s on host %(host)s could not be found.'


class ServiceExists(Conflict):
    msg_fmt = 'Service %(binary)s on host %(host)s already exists.'


class InstanceActionNotFound(NotFound):
    msg_fmt = 'Action %(action)s of instance %(uuid)s could not be found.'


class CellMappingUuidExists(CellMappingExists):
    msg_fmt = 'A cell with uuid %(uuid)s already exists.'


class InstanceActionEventNotFound(NotFound):
    msg_fmt = ('Event %(event)s of action %(action)s of instance %(uuid)s '
               'was never started.')


class InstanceActionEventGone(InstanceActionEventNotFound):
    msg_fmt = 'Event %(event)s (id %(event_id)s) no longer exists.'


class UnexpectedVMState(Conflict):
    msg_fmt = ('Instance %(uuid)s is in vm_state %(actual)s, not '
               '%(expected)s; it was changed by another request.')


class InvalidDatabaseKind(Invalid):
    msg_fmt = ('Unknown database %(database)r: expected one of '
               '%(expected)s.')


class InvalidMigrationVersion(Invalid):
    msg_fmt = ('Version %(version)r is not a revision of the %(database)s '
               'database migrations: %(reason)s')


class DatabaseMigrationFailed(CellbootException):
    msg_fmt = ('Migrating the %(database)s database %(url)s failed: '
               '%(reason)s')


class NoValidHost(CellbootException):
    msg_fmt = 'No valid host was found. %(reason)s'
    code = 400


class CellsUnavailable(CellbootException):
    """No cell that might take a request could be asked: their schedulers
    or databases do not answer. An outage, not a verdict: a conductor's
    flow step waits it out (``cellboot.flowrun.outages``) as it waits
    out a database that does not answer."""

    msg_fmt = ('No cell could be asked to place the request: %(reason)s')
    code = 503


class BuildRefused(CellbootException):
    """A request asks for what cellboot cannot build (the Nova door)."""

    msg_fmt = 'The request asks for what this cloud cannot build: %(reason)s.'
    code = 400


class NotSupportedByCellboot(CellbootException):
    msg_fmt = ('%(method)s is not supported by cellboot: its conductor '
               'builds new servers (schedule_and_build_instances) and '
               'nothing else.')
    code = 400


class ServerGroupNotFound(NotFound):
    msg_fmt = 'Server group %(group)s could not be found.'


class ServerGroupExists(Conflict):
    msg_fmt = 'Server group %(uuid)s already exists.'


class InvalidTransportURL(Invalid):
    msg_fmt = 'Invalid transport URL %(url)r: %(reason)s'


class CellTransportShared(Conflict):
    msg_fmt = ('Transport URL %(url)s is already the bus of %(other)s: '
               '%(consequence)s. Give cell %(name)s a bus of its own (a '
               'RabbitMQ vhost per cell, e.g. rabbit://user:password@'
               'host:5672/%(name)s), or pass --allow-shared-transport to '
               'accept that.')


class CellDatabaseInUse(Conflict):
    msg_fmt = ('Cell %(cell)s already uses database %(url)s; every cell '
               'needs a database of its own.')


class CellHasHostMappings(CellHasResources):
    msg_fmt = ('Cell %(cell)s still has %(count)d mapped host(s); move or '
               'delete them first, or use --force to delete their host '
               'mappings too.')


class CellHasInstanceMappings(CellHasResources):
    msg_fmt = ('Cell %(cell)s still has %(count)d mapped instance(s); delete '
               'them first, or use --force to delete their instance '
               'mappings too.')


class Cell0Protected(Invalid):
    msg_fmt = ('cell0 holds the instances whose builds failed before they '
               'reached a cell; it is only deleted with --force.')


class Cell0Unchangeable(Invalid):
    msg_fmt = ('cell0 cannot be given %(what)s: it holds the instances '
               'whose builds failed before they reached a cell, and is '
               'never scheduled to.')


# -- compute hosts and their virt drivers ---------------------------------


class BuildFailure(CellbootException):
    """A virt driver could not build an instance on its host."""

    msg_fmt = ('Build of instance %(uuid)s on host %(host)s failed: '
               '%(reason)s')


class RescheduledBuildFailure(BuildFailure):
    """The host failed the build; another host may well succeed."""


class BuildAbortedFailure(BuildFailure):
    """The build cannot succeed anywhere; the instance goes to ERROR."""

    msg_fmt = ('Build of instance %(uuid)s on host %(host)s aborted: '
               '%(reason)s')


class ComputeDriverNotFound(ConfigurationError):
    msg_fmt = ('Unknown virt driver %(driver)r in [compute] driver: '
               '%(reason)s. Use one of %(known)s or the dotted path of a '
               'ComputeDriver subclass.')


# -- RPC -------------------------------------------------------------------


class CellNotAuthorized(CellbootException):
    """A request arrived where it may not act on what it names.

    The scheduler answers it to a service of one cell that asks for
    another cell's providers or instances; it travels back to the caller
    as itself (an expected error of the scheduler's endpoint).
    """

    msg_fmt = ('Refused %(method)s from %(caller)s: %(reason)s. A service '
               'inside a cell may act only on its own cell\'s resource '
               'providers and instances; check its [DEFAULT] cell_name and '
               'transport_url against `cellboot-manage cell_v2 '
               'list_cells`.')
    code = 403


class RPCTimeout(CellbootException):
    msg_fmt = ('No reply to %(method)s from %(topic)s within %(timeout)s s; '
               'check that a service serving %(topic)s is running and '
               'connected to the same transport (%(url)s).')
    code = 503


# -- boot and reschedule flows -------------------------------------------


class MaxRetriesExceeded(NoValidHost):
    msg_fmt = 'Exceeded maximum number of retries. %(reason)s'


class FlowNotFound(NotFound):
    msg_fmt = ('Flow %(flow)s could not be found in the flow database or '
               'in any cell database.')


class FlowActionRefused(Conflict):
    """An operator's action on a flow that its state or owner forbids."""
    msg_fmt = 'Flow %(flow)s cannot be %(action)s: %(reason)s.'


class FlowLookupIncomplete(CellbootException):
    msg_fmt = ('Flow %(flow)s is not in the databases that answered; '
               '%(locations)s did not answer, try again later.')
    code = 503


class FlavorExtraSpecNotFound(NotFound):
    msg_fmt = 'Flavor %(flavor)s has no extra spec %(key)s.'
