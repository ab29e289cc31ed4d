"""The server side of the schedulers' RPC APIs (``cellboot-scheduler``).

Two endpoints, one per level:

* ``CellSchedulerEndpoint`` -- a cell's scheduler (``cellboot-scheduler
  --cell NAME``, or in-process), on the cell's bus, topic
  ``cellboot-scheduler.<cell>``: for the cell's compute hosts and
  conductors (``update_provider``, ``claim_resources``,
  ``release_resources``, ``record_build_result``) and for the API level
  (``select_destinations``, which answers with the cell's aggregate,
  ``aggregate``, ``host_states``). Each method asks the access object
  (``access.CellAccess``) first;
* ``SchedulerEndpoint`` -- the API level's scheduler (``cellboot-
  scheduler`` without ``--cell``), on the API's bus, topic
  ``cellboot-scheduler``, for a super conductor with ``[conductor]
  scheduler = rpc``: ``select_destinations`` and ``release_resources``;
  and for other services (a volume service) that hold resources that
  are not servers: ``create_allocation``, ``get_allocation``,
  ``delete_allocation`` (``allocation_service``), always of the calling
  context's project: another project's allocation is not found.

The domain errors a caller is expected to handle are declared expected,
so that they travel back to the caller as themselves and are logged here
as one line, not as a server-side traceback; a refusal is logged once
more, as a WARNING naming the caller and what it attempted.
"""

import functools
import inspect

from oslo_log import log as logging
import oslo_messaging

from cellboot import exception
from cellboot.rpc import client
from cellboot.rpc import endpoint
from cellboot.scheduler import access as access_mod
from cellboot.scheduler import allocation_service

LOG = logging.getLogger(__name__)

# What a well-behaved request may still be refused with.
_EXPECTED = (exception.NoValidHost, exception.ClaimFailed,
             exception.ClaimConflict, exception.Invalid, exception.NotFound,
             exception.Conflict, exception.CellNotAuthorized)


# ... and an allocation request, besides: over quota, or no project.
_EXPECTED_ALLOCATION = _EXPECTED + (exception.QuotaExceeded,
                                    exception.Forbidden)


def _project_of(context):
    """The project an allocation call acts for: the context's."""
    project_id = getattr(context, 'project_id', None)
    if not isinstance(project_id, str) or not project_id:
        raise exception.Forbidden(
            message='An allocation belongs to a project: the call needs '
                    'a project-scoped context.')
    return project_id


def _short(value):
    text = repr(value)
    return text if len(text) <= 100 else text[:97] + '...'


def _authorized(method):
    """Log a refusal of ``method`` once, with the caller and the request.

    Nothing is written before a refusal: the access checks run first,
    and a write that finds it may not proceed raises before it changes
    anything.
    """
    signature = inspect.signature(method)

    @functools.wraps(method)
    def wrapper(self, context, *args, **kwargs):
        try:
            return method(self, context, *args, **kwargs)
        except exception.CellNotAuthorized as exc:
            refusal = exc
        # Logged outside the except block: oslo.log would append the
        # exception's message to a WARNING logged inside it, a second time.
        arguments = signature.bind_partial(self, context, *args,
                                           **kwargs).arguments
        attempted = ', '.join(
            f'{name}={_short(value)}' for name, value in arguments.items()
            if name not in ('self', 'context', 'inventories'))
        LOG.warning('Refused %s(%s) from %s (request %s): %s',
                    method.__name__, attempted, self.access.caller,
                    getattr(context, 'request_id', None),
                    refusal.kwargs.get('reason', refusal))
        raise refusal

    return wrapper


class CellSchedulerEndpoint:
    """Version 1.0 of a cell scheduler's RPC interface."""

    target = oslo_messaging.Target(version=client.VERSION)

    def __init__(self, scheduler):
        self.scheduler = scheduler
        self.access = access_mod.CellAccess(scheduler)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    @_authorized
    def select_destinations(self, context, request_spec, instance_uuids,
                            return_alternates=True):
        """``{'selections': [...], 'aggregate': {...}}``."""
        self.access.select_destinations(request_spec, instance_uuids)
        selections = self.scheduler.select_destinations(
            context, request_spec, instance_uuids,
            return_alternates=return_alternates)
        return {'selections': selections,
                'aggregate': self.scheduler.aggregate(context)}

    @oslo_messaging.expose
    def aggregate(self, context):
        return self.scheduler.aggregate(context)

    @oslo_messaging.expose
    def host_states(self, context):
        return self.scheduler.host_states(context)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    @_authorized
    def update_provider(self, context, uuid, name, cell_name, inventories,
                        availability_zone='nova', traits=None):
        """``traits``: the host's trait names (None: leave them as they
        are, what a host of an older release sends); checked, as the
        inventories are, before anything is written."""
        self.access.update_provider(uuid, name, cell_name)
        return self.scheduler.update_provider(
            context, uuid, name, inventories,
            availability_zone=availability_zone, traits=traits)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    @_authorized
    def claim_resources(self, context, consumer_uuid, provider_uuid,
                        resources):
        self.access.claim_resources(context, consumer_uuid, provider_uuid)
        return self.scheduler.claim_resources(context, consumer_uuid,
                                              provider_uuid, resources)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    @_authorized
    def release_resources(self, context, consumer_uuid, provider_uuid=None):
        self.access.release_resources(consumer_uuid, provider_uuid)
        return self.scheduler.release_resources(context, consumer_uuid,
                                                provider_uuid)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    @_authorized
    def record_build_result(self, context, provider_uuid, succeeded):
        self.access.record_build_result(provider_uuid)
        return self.scheduler.record_build_result(context, provider_uuid,
                                                  succeeded)


class SchedulerEndpoint:
    """Version 1.0 of the API level's scheduler RPC interface."""

    target = oslo_messaging.Target(version=client.VERSION)

    def __init__(self, scheduler):
        self.scheduler = scheduler

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    def select_destinations(self, context, request_spec, instance_uuids,
                            return_alternates=True):
        access_mod.uuids_of(instance_uuids, 'instance_uuids')
        return self.scheduler.select_destinations(
            context, request_spec, instance_uuids,
            return_alternates=return_alternates)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    def release_resources(self, context, consumer_uuid, provider_uuid=None,
                          cell_uuid=None):
        access_mod.uuid_of(consumer_uuid, 'consumer_uuid')
        return self.scheduler.release_resources(
            context, consumer_uuid, provider_uuid=provider_uuid,
            cell_uuid=cell_uuid)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    def claim_pools(self, context, consumer_uuid, entries, replay=False):
        access_mod.uuid_of(consumer_uuid, 'consumer_uuid')
        return self.scheduler.claim_pools(context, consumer_uuid, entries,
                                          replay=replay is True)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    def release_pools(self, context, consumer_uuid):
        access_mod.uuid_of(consumer_uuid, 'consumer_uuid')
        return self.scheduler.release_pools(context, consumer_uuid)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED_ALLOCATION)
    def create_allocation(self, context, request):
        """Place ``request`` (the body of ``POST /os-allocations``'s
        ``allocation``) for the context's project; its view."""
        _project_of(context)
        return allocation_service.create(context, self.scheduler, request)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED_ALLOCATION)
    def get_allocation(self, context, allocation_id):
        return allocation_service.view(allocation_service.get(
            context, allocation_id, _project_of(context)))

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED_ALLOCATION)
    def delete_allocation(self, context, allocation_id):
        """Release and delete; None. AllocationNotFound for another
        project's, as for one that does not exist."""
        allocation_service.delete(context, self.scheduler, allocation_id,
                                  _project_of(context))
