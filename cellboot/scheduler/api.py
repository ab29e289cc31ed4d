"""CellScheduler: one cell's scheduler, in-process or behind RPC.

Each cell schedules its own hosts. Only a cell's schedulers write the
cell's resource tables (in the cell's database), and their host states
must see every such write, so everything that changes capacity in the
cell goes through this facade: the cell's compute hosts report their
inventory (``update_provider``), its conductors claim alternates and
give back claims (``claim_resources``, ``release_resources``), and the
API level asks for hosts (``select_destinations``, then takes the
cell's ``aggregate``). ``cellboot-scheduler --cell NAME`` serves the same
methods on the cell's bus (``rpc_endpoint``); the API level's own
scheduler, which holds no host, is ``cellboot.scheduler.cells``.

Usage::

    scheduler = CellScheduler(host_state_cache.CellScope('cell1', mapping))
    scheduler.start(context)        # load host states, start refreshes
    hosts = scheduler.select_destinations(context, spec, [uuid])
    scheduler.stop()
"""

from cellboot import context as cb_context
from cellboot import exception
from cellboot.metrics import sources as metrics_sources
from cellboot.scheduler import aggregate as aggregate_mod
from cellboot.scheduler import host_state_cache
from cellboot.scheduler import manager as manager_mod
from cellboot.scheduler import sync
from cellboot.scheduler.resources import changes
from cellboot.scheduler.resources import claims
from cellboot.scheduler.resources import providers


class CellScheduler:
    """select_destinations, resource reports and claims of one cell.

    ``name`` names this scheduler among the cell's schedulers (its row
    of the cell's aggregates): the service's host, by default.
    """

    def __init__(self, scope, name=None):
        self.scope = scope
        self.cache = host_state_cache.HostStateCache(scope)
        self.manager = manager_mod.SchedulerManager(self.cache)
        # The other schedulers of the cell, through the change feed.
        self.sync = self.manager.sync = sync.for_cell(self.cache)
        self.publisher = aggregate_mod.Publisher(
            name or f'scheduler-{scope.name}', self.cache,
            follower=self.sync)
        metrics_sources.register(self)

    @property
    def cell_name(self):
        return self.scope.name

    def start(self, context, refresh_interval=None):
        """Load the host states now, publish, and keep both current.

        ``refresh_interval`` defaults to ``[scheduler]
        host_state_refresh_interval``; 0 starts no background thread.
        Returns the load summary.
        """
        if self.sync is not None:
            self.sync.start(context)   # its tail first: nothing missed
        summary = self.cache.refresh(context)
        self.publisher.publish_now()
        self.cache.start_periodic_refresh(refresh_interval)
        self.publisher.start()
        return summary

    def stop(self):
        self.publisher.stop()
        self.cache.stop_periodic_refresh()
        if self.sync is not None:
            self.sync.stop()

    def counters(self):
        """What this scheduler did since it was made, for operators (the
        line ``cellboot-scheduler --cell`` logs as it stops) and
        benchmarks: the claims its decisions wrote and how many failed (a
        stale view of a host: another scheduler claimed it first), and
        how it followed its cell's change feed (pulls, others' entries
        applied, failures, full reloads, the others' write-to-pull lag,
        and the age of its view at each decision: the staleness bound).
        """
        figures = {'claims_tried': self.manager.claims_tried,
                   'failed_claims': self.manager.failed_claims}
        if self.sync is not None:
            stats = self.sync.stats()
            figures.update({f'sync_{key}': stats[key] for key in (
                'pulls', 'seen', 'errors', 'reloads')})
            for key in ('lag_p50', 'lag_p99', 'view_age_p50',
                        'view_age_p99'):
                if stats[key] is not None:
                    figures[f'sync_{key}_ms'] = round(stats[key] * 1000, 1)
        return figures

    def samples(self):
        """``counters()`` as metrics (``cellboot.metrics.sources``)."""
        cell = {'cell': self.cell_name}
        yield ('cellboot_scheduler_claims_tried', cell,
               self.manager.claims_tried)
        yield ('cellboot_scheduler_failed_claims', cell,
               self.manager.failed_claims)
        for step, count in list(self.manager.no_valid_host.items()):
            yield ('cellboot_scheduler_no_valid_host',
                   {'level': 'cell', 'reason': step}, count)

    def select_destinations(self, context, request_spec, instance_uuids,
                            return_alternates=True):
        """Per instance, ``[chosen, alternates...]`` as Selection dicts.

        The chosen hosts are claimed; raises NoValidHost with the name of
        the filter that removed the last candidates (nothing claimed).
        """
        return self.manager.select_destinations(
            context, request_spec, instance_uuids, return_alternates)

    def aggregate(self, context=None):
        """The cell's aggregate as of now (``aggregate.of_states``),
        loading the host states first if they never were."""
        self.cache.ensure_loaded(context or cb_context.get_admin_context())
        return self.publisher.compute()[0]

    def _given_back(self):
        """Room came back: the API level must not refuse it meanwhile."""
        self.publisher.publish_now()

    def update_provider(self, context, uuid, name, inventories,
                        availability_zone='nova', traits=None):
        """A compute host's report of its capacity (and of its traits,
        a list of names, unless None); returns the generation.

        Called by a compute host when it starts and whenever its
        inventory changes; the host is schedulable from the next
        decision on.
        """
        generation = providers.update_provider(
            self.scope.context(context), uuid, name, inventories,
            availability_zone=availability_zone, origin=self.manager.origin,
            traits=traits)
        self.manager.announce(context, {uuid: None})
        self.cache.refresh_host(context, uuid)
        self._given_back()
        return generation

    def delete_provider(self, context, uuid):
        """Forget a compute host (refused while it holds allocations)."""
        providers.delete_provider(self.scope.context(context), uuid,
                                  origin=self.manager.origin)
        self.manager.announce(context, {uuid: None})
        self.cache.remove_host(uuid)

    def claim_resources(self, context, consumer_uuid, provider_uuid,
                        resources):
        """Claim ``resources`` ({rc: amount}) for a consumer on a host.

        Used for alternates on reschedule. Raises ClaimFailed (no room)
        or ClaimConflict; either way the host is re-read.
        """
        try:
            result = claims.claim_resources(
                self.scope.context(context), consumer_uuid, provider_uuid,
                resources, origin=self.manager.origin)
        except (exception.ClaimFailed, exception.ClaimConflict):
            self.cache.refresh_host(context, provider_uuid)
            raise
        # Re-read rather than add: a replayed claim is a no-op in the
        # database and must not count twice here.
        self.manager.announce(context, {provider_uuid: None})
        self.cache.refresh_providers(context, [provider_uuid])
        return result

    def release_resources(self, context, consumer_uuid, provider_uuid=None):
        """Give back a consumer's allocations; returns what was released."""
        released = claims.release_resources(
            self.scope.context(context), consumer_uuid, provider_uuid,
            origin=self.manager.origin)
        for uuid, resources in released.items():
            if not self.cache.add_usage(uuid, resources, sign=-1):
                self.cache.refresh_providers(context, [uuid])
        self.manager.announce(context, {
            uuid: changes.released(amounts)
            for uuid, amounts in released.items()})
        if released:
            self._given_back()
        return released

    def host_states(self, context):
        """Every schedulable host as plain values (capacity, usage, up)."""
        self.cache.ensure_loaded(context)
        return self.cache.host_dicts()

    def record_build_result(self, context, provider_uuid, succeeded):
        """Count a failed build against a host (BuildFailureWeigher); a
        success clears its count; the cell's other schedulers take the
        count from the change feed."""
        failures = self.cache.record_build_result(provider_uuid, succeeded)
        if self.sync is not None:
            self.sync.build_result(context, provider_uuid, failures)

    def refresh(self, context):
        """Reload every host state now (e.g. after adding hosts)."""
        summary = self.cache.refresh(context)
        self.publisher.publish_now()
        return summary
