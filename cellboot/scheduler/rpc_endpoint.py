"""The server side of the scheduler's RPC API (``cellboot-scheduler``).

A thin layer over ``SchedulerAPI``: each method forwards its arguments,
and only ``update_provider`` translates anything (a cell's name, which a
compute host knows, into the cell's uuid, which the resource tables
use). The domain errors a caller is expected to handle are declared
expected, so that they travel back to the caller as themselves and are
logged here as one line, not as a server-side traceback.
"""

import oslo_messaging

from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.rpc import client
from cellboot.rpc import endpoint

# What a well-behaved request may still be refused with.
_EXPECTED = (exception.NoValidHost, exception.ClaimFailed,
             exception.ClaimConflict, exception.Invalid, exception.NotFound,
             exception.Conflict)


class SchedulerEndpoint:
    """Version 1.0 of the scheduler's RPC interface."""

    target = oslo_messaging.Target(version=client.VERSION)

    def __init__(self, scheduler):
        self.scheduler = scheduler

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    def select_destinations(self, context, request_spec, instance_uuids,
                            return_alternates=True):
        return self.scheduler.select_destinations(
            context, request_spec, instance_uuids,
            return_alternates=return_alternates)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    def update_provider(self, context, uuid, name, cell_name, inventories,
                        availability_zone='nova'):
        cell = cell_mapping.CellMapping.get_by_name(context, cell_name)
        return self.scheduler.update_provider(
            context, uuid, name, cell.uuid, inventories,
            availability_zone=availability_zone)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    def claim_resources(self, context, consumer_uuid, provider_uuid,
                        resources):
        return self.scheduler.claim_resources(context, consumer_uuid,
                                              provider_uuid, resources)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    def release_resources(self, context, consumer_uuid, provider_uuid=None):
        return self.scheduler.release_resources(context, consumer_uuid,
                                                provider_uuid)

    @oslo_messaging.expose
    @endpoint.expected_errors(*_EXPECTED)
    def record_build_result(self, context, provider_uuid, succeeded):
        return self.scheduler.record_build_result(context, provider_uuid,
                                                  succeeded)
