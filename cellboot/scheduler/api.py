"""SchedulerAPI: the one door to the scheduler, in-process or behind RPC.

Only the scheduler writes the resource tables, and its host states must
see every such write, so everything that changes capacity goes through
this facade: compute hosts report their inventory (``update_provider``),
conductors claim alternates and give back claims (``claim_resources``,
``release_resources``), and the boot flow asks for hosts
(``select_destinations``). The RPC service (boot workflow issue) exposes
the same methods with the same arguments.

Usage::

    scheduler = SchedulerAPI()
    scheduler.start(context)        # load host states, start refreshes
    hosts = scheduler.select_destinations(context, spec, [uuid])
    scheduler.stop()
"""

from cellboot import exception
from cellboot.scheduler import manager as manager_mod
from cellboot.scheduler.resources import claims
from cellboot.scheduler.resources import providers


class SchedulerAPI:
    """select_destinations, resource reports and claims, host states."""

    def __init__(self, manager=None):
        self.manager = manager or manager_mod.SchedulerManager()
        self.cache = self.manager.cache

    def start(self, context, refresh_interval=None):
        """Load the host states now and reload them periodically.

        ``refresh_interval`` defaults to ``[scheduler]
        host_state_refresh_interval``; 0 starts no background thread.
        Returns the load summary (hosts, cells, unanswered cells).
        """
        summary = self.cache.refresh(context)
        self.cache.start_periodic_refresh(refresh_interval)
        return summary

    def stop(self):
        self.cache.stop_periodic_refresh()

    def select_destinations(self, context, request_spec, instance_uuids,
                            return_alternates=True, cell_uuid=None):
        """Per instance, ``[chosen, alternates...]`` as Selection dicts.

        The chosen hosts are claimed; raises NoValidHost with the name of
        the filter that removed the last candidates (nothing claimed).
        ``cell_uuid`` places in that cell only, whatever the request
        asks and the filters enabled (a request from a cell's service).
        """
        return self.manager.select_destinations(
            context, request_spec, instance_uuids, return_alternates,
            cell_uuid=cell_uuid)

    def update_provider(self, context, uuid, name, cell_uuid, inventories,
                        availability_zone='nova', move=True):
        """A compute host's report of its capacity; returns the generation.

        Called by a compute host when it starts and whenever its
        inventory changes; the host is schedulable from the next
        decision on. ``move`` False refuses a provider of another cell
        (CellNotAuthorized) instead of moving it to ``cell_uuid``.
        """
        generation = providers.update_provider(
            context, uuid, name, cell_uuid, inventories,
            availability_zone=availability_zone, move=move)
        self.cache.refresh_host(context, uuid)
        return generation

    def delete_provider(self, context, uuid):
        """Forget a compute host (refused while it holds allocations)."""
        providers.delete_provider(context, uuid)
        self.cache.remove_host(uuid)

    def claim_resources(self, context, consumer_uuid, provider_uuid,
                        resources):
        """Claim ``resources`` ({rc: amount}) for a consumer on a host.

        Used for alternates on reschedule. Raises ClaimFailed (no room)
        or ClaimConflict; either way the host is re-read.
        """
        try:
            result = claims.claim_resources(context, consumer_uuid,
                                            provider_uuid, resources)
        except (exception.ClaimFailed, exception.ClaimConflict):
            self.cache.refresh_host(context, provider_uuid)
            raise
        # Re-read rather than add: a replayed claim is a no-op in the
        # database and must not count twice here.
        self.cache.refresh_providers(context, [provider_uuid])
        return result

    def release_resources(self, context, consumer_uuid, provider_uuid=None):
        """Give back a consumer's allocations; returns what was released."""
        released = claims.release_resources(context, consumer_uuid,
                                            provider_uuid)
        for uuid, resources in released.items():
            self.cache.add_usage(uuid, resources, sign=-1)
        return released

    def host_states(self, context, cell_uuid=None):
        """Every schedulable host as plain values (capacity, usage, up)."""
        self.cache.ensure_loaded(context)
        return self.cache.host_dicts(cell_uuid)

    def record_build_result(self, context, provider_uuid, succeeded):
        """Count a failed build against a host (BuildFailureWeigher); a
        success clears its count."""
        self.cache.record_build_result(provider_uuid, succeeded)

    def refresh(self, context):
        """Reload every host state now (e.g. after adding a cell)."""
        return self.cache.refresh(context)
