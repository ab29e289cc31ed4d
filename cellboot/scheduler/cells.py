"""The API level's scheduler: it picks cells, each cell picks its hosts.

The API level holds no host. It keeps one aggregate per cell
(``cell_aggregates``) and, for each request:

1. resolves what only the API database knows (``routing``): the target
   cell, the cells of hinted instances and of the server group's members;
2. keeps the cells that might take one instance (``cell_filters``: the
   target cell, same-host and affinity cells, the zone, an up host, the
   largest free room on one host of every class asked) -- never a false
   "no" for a request that some host of the cell could take -- and
   takes the best (``cell_filters.weigh``), descending the tree of
   zones (``zones``): the best of the top-level zones and cells, then
   of the best zone's children, down to a cell (a cell of this process
   that published no figures yet is asked for them: ``local_cells``);
3. forwards the request to the best cell's scheduler (``cell_clients``),
   which filters, weighs and claims among its own hosts and answers with
   the selections and its new aggregate; on that cell's NoValidHost, or
   if it does not answer, the next cell is asked, up to ``[scheduler]
   max_cells_per_request`` cells;
4. splits a multi-create that no one cell fits: each cell gets as many
   instances as its aggregate says it may hold, and a chunk a cell
   refuses is halved before the cell is given up (an affinity group is
   never split: its instances share one host). If the request cannot be
   placed whole, every claim made for it is released (``releases``,
   which also remembers the cell of each claim, so that a release goes
   to that cell).

Server groups across cells: an anti-affinity group's members in other
cells cannot share a host with this one, so each cell is told only of
its own; an affinity group goes to the cell of its members. The
selections are what a single scheduler returned before: host, node,
cell (named by the API level: a selection naming a host of another cell
is caught at ``map-host-to-cell``), alternates from that cell.
"""

import collections
import threading

from oslo_log import log as logging
from oslo_utils import timeutils

from cellboot.conf import CONF
from cellboot import exception
from cellboot.metrics import sources as metrics_sources
from cellboot.scheduler import cell_aggregates
from cellboot.scheduler import cell_clients
from cellboot.scheduler import cell_filters
from cellboot.scheduler import local_cells
from cellboot.scheduler import migrate
from cellboot.scheduler.pools import claims as pool_claims
from cellboot.scheduler.pools import view as pool_view
from cellboot.scheduler import releases
from cellboot.scheduler import routing
from cellboot.scheduler import sync
from cellboot.scheduler import zones

LOG = logging.getLogger(__name__)


class CellsScheduler:
    """select_destinations over cells; releases routed to their cell.

    ``clients`` maps a cell uuid to its client (``cell_clients``); a cell
    without one is reached over RPC (``RemoteCell``), made on first use.
    """

    def __init__(self, clients=None):
        self.aggregates = cell_aggregates.CellAggregates()
        # The other API-level schedulers' news of the cells, or None.
        self.sync = sync.for_api_level(self.aggregates)
        self._clients = dict(clients or {})
        # Those of this process, asked for figures none published: kept
        # apart, so that a request does not look through every cell's.
        self._local = local_cells.LocalCells(self.aggregates, self.sync,
                                             self._clients)
        self._lock = threading.Lock()
        # The cell of each consumer claimed for; releases routed there.
        self.releases = releases.Releases(self.client, self.aggregates)
        # The shared pools, read again every few seconds (``pools``).
        self.pools = pool_view.PoolView()
        # How many cells refused or did not answer, and requests placed:
        # what a stale aggregate costs (benchmarks, tests).
        self.stats = collections.Counter()
        # Requests no cell took, by the step that removed the last cells
        # (``Elimination.last_step``).
        self.no_valid_host = collections.Counter()
        metrics_sources.register(self)

    # -- life cycle ------------------------------------------------------

    def start(self, context, refresh_interval=None):
        """Read every cell's aggregate now, then periodically."""
        left = migrate.pending(context)
        if left:
            LOG.warning('%d compute host resource providers are still in '
                        'the API database, where no scheduler reads them: '
                        'the claims of the servers on them are not counted '
                        '(their hosts may be over-committed) until '
                        '"cellboot-manage scheduler migrate_to_cells" moves '
                        'them to their cells\' databases', left)
        if self.sync is not None:
            self.sync.start(context)   # its tail first: nothing missed
        views = self.aggregates.refresh(context)
        self.aggregates.start(refresh_interval)
        return {'cells': len(views),
                'usable': sorted(view.cell.name for view in views.values()
                                 if view.usable() is None)}

    def stop(self):
        self.aggregates.stop()
        if self.sync is not None:
            self.sync.stop()

    def counters(self):
        """``stats`` as names without spaces (the line ``cellboot-
        scheduler`` logs as it stops): requests placed, and cells that
        refused or did not answer, what stale aggregates cost."""
        return {key: self.stats[key.replace('_', ' ')] for key in (
            'requests_placed', 'cells_refused', 'cells_unreachable')}

    def samples(self):
        """``counters()``, the NoValidHosts and whether each cell may be
        sent requests now, as metrics (``cellboot.metrics.sources``)."""
        for key, value in self.counters().items():
            yield f'cellboot_scheduler_{key}', {}, value
        for step, count in list(self.no_valid_host.items()):
            yield ('cellboot_scheduler_no_valid_host',
                   {'level': 'api', 'reason': step}, count)
        now = timeutils.utcnow()
        for view in self.aggregates.views().values():
            yield ('cellboot_cell_usable', {'cell': view.cell.name},
                   int(view.usable(now) is None))

    def refresh(self, context):
        return self.aggregates.refresh(context)

    def client(self, cell):
        with self._lock:
            found = self._clients.get(cell.uuid)
            if found is None:
                found = self._clients[cell.uuid] = \
                    cell_clients.RemoteCell(cell)
            return found

    def set_client(self, cell_uuid, client):
        with self._lock:
            self._clients[cell_uuid] = client
        self._local.set_client(cell_uuid, client)

    # -- placement ---------------------------------------------------------

    def select_destinations(self, context, request_spec, instance_uuids,
                            return_alternates=True):
        """Per instance, ``[chosen, alternates...]`` as Selection dicts.

        The chosen hosts are claimed in their cells; raises NoValidHost
        naming, at whichever level, what eliminated the last candidates
        (nothing left claimed).
        """
        request = routing.CellsRequest(request_spec)
        request.resolve(context, instance_uuids)
        request.name_zones(self.aggregates.tree().is_zone)
        if not request.one_provider:
            request.pools = self.pools.plan(context, request)
        placed = {}
        unreachable = set()
        try:
            self._place(context, request, list(instance_uuids), placed,
                        return_alternates, unreachable)
        except BaseException as exc:
            if isinstance(exc, exception.NoValidHost):
                self.no_valid_host[getattr(exc, 'step', 'none')] += 1
            self.releases.release_placed(context, placed)
            for uuid in instance_uuids:
                if unreachable:
                    # A cell that did not answer may have claimed: a
                    # release must look for it.
                    self.releases.forget(uuid)
                else:
                    self.releases.remember(uuid, None)  # holds nothing
            raise
        self.stats['requests placed'] += 1
        return [placed[uuid][1] for uuid in instance_uuids]

    def _place(self, context, request, remaining, placed, return_alternates,
               unreachable):
        refused = {}
        while remaining:
            if len(refused) >= CONF.scheduler.max_cells_per_request:
                if len(unreachable) == len(refused):
                    raise exception.CellsUnavailable(
                        reason=cell_filters.tried(refused))
                no_host = exception.NoValidHost(
                    reason=cell_filters.tried(refused))
                no_host.step = 'max_cells_per_request'
                raise no_host
            view = self._best(context, request, refused, unreachable,
                              len(remaining))
            fits = cell_filters.fits(view, request, len(remaining))
            cell = view.cell
            if request.pools is not None:
                request.pools.note_cell(view)
            count = len(remaining) if (
                fits >= len(remaining) or request.group_policy == 'affinity'
            ) else max(1, fits)
            try:
                done = self._place_in(context, cell, request,
                                      remaining[:count], return_alternates)
            except exception.NoValidHost as exc:
                refused[cell.uuid] = (cell.name, str(exc))
                self.stats['cells refused'] += 1
                self._relearn(context, cell)
                continue
            except cell_clients.CellUnreachable as exc:
                refused[cell.uuid] = (cell.name, f'no answer: {exc}')
                unreachable.add(cell.uuid)
                self.stats['cells unreachable'] += 1
                self.aggregates.mark_silent(cell, str(exc)[:200])
                continue
            for uuid, hosts in done:
                if request.pools is not None:
                    request.pools.name_pools(hosts, cell.uuid)
                placed[uuid] = (cell, hosts)
                request.place(uuid, cell.uuid, hosts[0]['service_host'])
                self.releases.remember(uuid, cell.uuid)
            remaining = remaining[len(done):]

    def _descend(self, request, refused):
        """``(view or None, zones pruned)``: the best cell, descending the
        tree from its top or from the zones the request names."""
        tree = self.aggregates.tree()
        return tree.descend(tree.roots(request.tree_zone),
                            cell_filters.steps(request, refused))

    def _best(self, context, request, refused, unreachable, count):
        """The best candidate cell's view.

        None left: NoValidHost, unless cells that do not answer (or whose
        schedulers are down) might have taken the request, judged from
        their last figures, or did not answer it: then CellsUnavailable,
        an outage to wait out rather than a verdict.
        """
        self._local.learn(context)
        best, pruned = self._descend(request, refused)
        if best is None:
            # Room a cell published before this request arrived must
            # not be missed: read again before saying no, unless a read
            # began after the request arrived.
            self.aggregates.refresh_unless_read_since(
                context, request.asked_at)
            self._local.learn(context, force=True)
            if request.pools is not None and \
                    not self.pools.read_since(request.asked_at):
                self.pools.invalidate()
                request.pools = self.pools.plan(context, request)
            best, pruned = self._descend(request, refused)
        if best is not None:
            return best
        # Every cell judged, as the descent judged the zones: the
        # elimination names what removed the last of them.
        tree = self.aggregates.tree()
        views = tree.cells_below(tree.roots(request.tree_zone))
        ranked, elimination = cell_filters.candidates(
            views, request, refused, count)
        if ranked:
            return ranked[0]
        if request.tree_zone is not None and not views:
            reason = (f'No zone called {request.tree_zone!r} has a cell '
                      f'(asked for by the request).')
        else:
            reason = elimination.reason()
        if refused:
            reason = cell_filters.tried(refused) + ' ' + reason
        reason += zones.pruned_reason(pruned)
        blocked = [view.cell.name for view in cell_filters.candidates(
            views, request, {uuid: why for uuid, why in refused.items()
                             if uuid not in unreachable}, count,
            usable=False)[0] if view.usable() is not None
            or view.cell.uuid in unreachable]
        if blocked:
            LOG.warning('Cells %s might take a request of %d instance(s) '
                        'but do not answer: waiting for them (%s)',
                        ', '.join(sorted(blocked)), count, reason)
            raise exception.CellsUnavailable(reason=reason)
        LOG.info('NoValidHost for %d instance(s): %s', count, reason)
        no_host = exception.NoValidHost(reason=reason)
        no_host.step = elimination.last_step()
        raise no_host

    def _place_in(self, context, cell, request, chunk, return_alternates):
        """``[(uuid, hosts)]`` placed in ``cell``: the chunk, or its first
        half, quarter... when the cell refuses the chunk whole."""
        while True:
            try:
                selections, document = self.client(cell).select(
                    context, request.spec_for(cell.uuid), chunk,
                    return_alternates)
            except exception.NoValidHost:
                if len(chunk) == 1 or request.group_policy == 'affinity':
                    raise
                chunk = chunk[:len(chunk) // 2]
                continue
            if document is not None:
                self.aggregates.take(cell, document)
                if self.sync is not None:
                    self.sync.taken(context, cell, document)
            try:
                checked = cell_clients.checked_selections(
                    cell, selections, chunk)
            except cell_clients.CellUnreachable:
                for uuid in chunk:
                    self.releases.release_in(context, cell, uuid)
                raise
            return list(zip(chunk, checked))

    def _relearn(self, context, cell):
        """After a refusal: the cell's figures as its scheduler has them."""
        try:
            self.aggregates.take(cell, self.client(cell).aggregate(context))
        except Exception as exc:
            LOG.debug('Could not read the aggregate of cell %s: %s',
                      cell.name, exc)

    # -- releases ----------------------------------------------------------

    def release_resources(self, context, consumer_uuid, provider_uuid=None,
                          cell_uuid=None):
        """Give back a consumer's allocations in the cell that holds
        them; returns what was released (``releases.Releases.release``)."""
        released = self.releases.release(context, consumer_uuid,
                                         provider_uuid, cell_uuid)
        if provider_uuid is None:
            # Whatever gives back all of an instance's claims gives back
            # its share of the shared pools too (idempotent).
            pooled = self.release_pools(context, consumer_uuid)
            if pooled:
                released = dict(released or {}, **pooled)
        return released

    def claim_pools(self, context, consumer_uuid, entries, replay=False):
        """Claim a selection's ``pools`` for the consumer, all or none
        (``pools.claims.claim``); NoValidHost naming the classes no
        pool could give."""
        return self.pools.claim(context, consumer_uuid, entries, replay)

    def release_pools(self, context, consumer_uuid):
        """Give back the consumer's pool shares (idempotent); the next
        decision then reads the pools again, so that no request is
        refused for room just given back."""
        released = pool_claims.release(context, consumer_uuid)
        if released:
            self.pools.invalidate()
        return released

    # -- the operator's view -------------------------------------------------

    def host_states(self, context):
        """``(hosts, unanswered)``: every cell's hosts (each with its
        ``cell_uuid``), and the cells whose scheduler did not answer."""
        hosts, unanswered = [], []
        results = {}
        cells = cell_clients.every_cell(context)

        def _ask(cell):
            try:
                results[cell.uuid] = self.client(cell).host_states(context)
            except Exception as exc:
                results[cell.uuid] = exc

        threads = [threading.Thread(target=_ask, args=(cell,), daemon=True)
                   for cell in cells]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(CONF.scheduler.cell_call_timeout)
        for cell in cells:
            found = results.get(cell.uuid)
            if not isinstance(found, list):
                unanswered.append(cell)
                continue
            hosts.extend(dict(host, cell_uuid=cell.uuid) for host in found)
        return hosts, unanswered

    def record_build_result(self, context, provider_uuid, succeeded):
        """Build results are counted by the cell's own scheduler."""
