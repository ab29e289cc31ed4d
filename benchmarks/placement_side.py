"""One side of ``placement_accuracy.py``: a scheduler replaying the stream.

``Hierarchy`` is the two-level scheduler of one process (the API level's
``CellsScheduler`` over a ``CellScheduler`` per cell); ``Reference`` is
one ``CellScheduler`` over a single cell holding every host, which is
what the flat scheduler was. Both keep the same books -- what each
create placed, the live members of each server group, why a request was
refused -- so that the benchmark compares like with like. What either
does is judged from its own host states (fill, hosts used), which follow
every claim and release made through it: every resource class either
side's hosts have (custom ones too, aligned by name across the cells'
host states, ``_columns``), their traits, and with --generic the disk
pool (``placement_pools``: the hierarchy's in the API database, the
reference's an exact copy in memory).
"""

import re
import time

import numpy as np

import placement_pools
import placement_stream
import scheduler_levels


def reason_kind(reason):
    """A NoValidHost reason without its numbers and names: the filters
    that removed the last candidates, and how many cells were tried."""
    filters = sorted(set(re.findall(r'(\w+(?: \(cell pruning\))?) removed '
                                    r'the last', reason)))
    tried = len(re.findall(r'(?:Cells tried: |; )[\w.-]+ \(', reason))
    where = f'{tried} cell(s) tried; ' if tried else ''
    return where + (', '.join(filters) or reason[:120])


class Side:
    """The books of one scheduler over the stream."""

    def __init__(self, ctx, seed):
        self.ctx = ctx
        self.seed = seed
        self.items = {}          # index -> create Item
        self.placed_of = {}      # create index -> live instance uuids
        self.members = {}        # group uuid -> live member uuids
        self.refusals = {}       # create index -> NoValidHost reason
        # Refusals although the side's own hosts had room: what one
        # scheduler seeing all of them would have placed (``could_fit``).
        self.false_refusals = []
        self.host_of = {}        # live instance uuid -> its provider
        self.creates = self.placed_requests = self.placed_instances = 0
        self.first_choice_rejections = self.extra_cells = 0
        self.unavailable = 0
        self.selects, self.select_time = 0, 0.0

    # -- what the subclasses provide ----------------------------------

    def select(self, spec, uuids):
        raise NotImplementedError

    def release(self, uuid):
        raise NotImplementedError

    def placed(self, item, uuids, selections):
        """After a placement (the hierarchy maps group members)."""

    def caches(self):
        raise NotImplementedError

    def stop(self):
        raise NotImplementedError

    # -- the replay ---------------------------------------------------

    def apply(self, ctx, item):
        from cellboot import exception

        if item.kind == 'delete':
            for uuid in self.placed_of.pop(item.deletes, ()):
                self.release(uuid)
                self.host_of.pop(uuid, None)
                for members in self.members.values():
                    if uuid in members:
                        members.remove(uuid)
            return
        self.items[item.index] = item
        self.creates += 1
        uuids = placement_stream.instance_uuids(item)
        spec = item.spec(self.members.get(item.group, []) + uuids)
        started = time.perf_counter()
        try:
            selections = self.select(spec, uuids)
        except (exception.CellsUnavailable, exception.NoValidHost) as exc:
            self.select_time += time.perf_counter() - started
            self.selects += 1
            self.unavailable += isinstance(exc, exception.CellsUnavailable)
            self.refusals[item.index] = str(exc)
            if self.could_fit(item):
                self.false_refusals.append(item.index)
            return
        self.select_time += time.perf_counter() - started
        self.selects += 1
        self.placed_requests += 1
        self.placed_instances += len(uuids)
        self.placed(item, uuids, selections)
        if item.fails:
            for uuid in uuids:
                self.release(uuid)
            return
        self.placed_of[item.index] = uuids
        for uuid, hosts in zip(uuids, selections):
            self.host_of[uuid] = hosts[0]['compute_node_uuid']
        if item.group:
            self.members.setdefault(item.group, []).extend(uuids)

    # -- the figures --------------------------------------------------

    def _columns(self):
        """``(uuids, classes, capacity, used, traits)`` of every live
        host: the rows of every class any cache has, aligned by name (a
        cell without a class has none of it), and ``{trait: mask}``."""
        uuids, parts = [], []
        for cache in self.caches():
            with cache.locked() as states:
                live = states.live
                uuids.extend(np.array(states.uuids, dtype=object)[live])
                parts.append((list(states.classes),
                              states.capacity[:, live].copy(),
                              states.used[:, live].copy(),
                              {t: states.has_trait[i, live].copy()
                               for i, t in enumerate(states.traits)}))
        classes = list(dict.fromkeys(rc for part in parts for rc in part[0]))
        row = {rc: i for i, rc in enumerate(classes)}
        capacity = np.zeros((len(classes), len(uuids)))
        used = np.zeros_like(capacity)
        traits, start = {}, 0
        for names, cap, use, has in parts:
            stop = start + cap.shape[1]
            rows = [row[rc] for rc in names]
            capacity[rows, start:stop] = cap
            used[rows, start:stop] = use
            for trait, mask in has.items():
                traits.setdefault(trait, np.zeros(len(uuids), dtype=bool))[
                    start:stop] = mask
            start = stop
        return uuids, classes, capacity, used, traits

    @staticmethod
    def _fill_of(capacity, used):
        """Used over capacity of the binding class (those present)."""
        total = capacity.sum(axis=1)
        present = total > 0
        return float((used.sum(axis=1)[present] / total[present]).max())

    def fill(self):
        """Used over capacity of the fleet's binding resource class, the
        pool's disk included."""
        _uuids, _classes, capacity, used, _traits = self._columns()
        fill = self._fill_of(capacity, used)
        pool = self.pool_figures()
        if pool:
            fill = max(fill, pool['used'] / pool['capacity'])
        return fill

    def hosts_used(self):
        _uuids, _classes, _capacity, used, _traits = self._columns()
        return int(np.count_nonzero(used.sum(axis=0) > 0))

    def cell_fill_stddev(self, cell_of):
        """Stddev over the hierarchy's cells of their fill (binding
        class), the hosts counted in the cell ``cell_of`` gives them."""
        uuids, _classes, capacity, used, _traits = self._columns()
        cells = np.array([cell_of[uuid] for uuid in uuids])
        fills = []
        for cell in np.unique(cells):
            mine = cells == cell
            fills.append(self._fill_of(capacity[:, mine], used[:, mine]))
        return float(np.std(fills))

    def pool_figures(self):
        """``{used, capacity, overcommitted}`` of the side's pool (None:
        no pool)."""
        return None

    def pool_free(self):
        """What the side's pool has free (None: no pool)."""
        figures = self.pool_figures()
        return figures and figures['capacity'] - figures['used']

    def could_fit(self, item):
        """Whether the side's hosts, as they are, had room for ``item``
        under its group's policy: judged over every host at once, as one
        scheduler seeing them all would (a slot is a host's room for one
        instance in every class asked, on a host with the trait asked,
        and the pool's room for every instance's disk)."""
        uuids, classes, capacity, used, traits = self._columns()
        resources = item.resources()
        pool_free = self.pool_free()
        if pool_free is not None:
            disk = resources.pop(placement_pools.POOL_CLASS)
            if disk * item.count > pool_free:
                return False
        if any(rc not in classes for rc in resources):
            return False
        rows = [classes.index(rc) for rc in resources]
        amounts = np.array(list(resources.values()), dtype=float)
        slots = np.floor((capacity[rows] - used[rows])
                         / amounts[:, None]).min(axis=0)
        slots = np.maximum(slots, 0)
        if item.trait:
            slots[~traits.get(placement_stream.TRAIT, np.zeros(
                len(uuids), dtype=bool))] = 0
        members = {self.host_of[uuid] for uuid in self.members.get(
            item.group, ()) if uuid in self.host_of}
        if item.policy == 'anti-affinity':
            taken = np.array([uuid in members for uuid in uuids])
            return int(np.count_nonzero((slots >= 1) & ~taken)) \
                >= item.count
        if item.policy == 'affinity':
            if members:
                mine = np.array([uuid in members for uuid in uuids])
                return bool((slots[mine] >= item.count).any())
            return bool((slots >= item.count).any())
        return int(slots.sum()) >= item.count

    def decisions_per_s(self):
        return round(self.selects / self.select_time, 1) \
            if self.select_time else None

    def placed_where(self, test):
        """``(asked, placed)``: the creates passing ``test`` (an Item
        predicate), and how many of them this side placed."""
        asked = [i for i, item in self.items.items() if test(item)]
        return len(asked), sum(1 for i in asked if i not in self.refusals)

    def refused_only(self, other):
        """Creates this side refused and ``other`` placed, in order."""
        return sorted(set(self.refusals) - set(other.refusals))


class Hierarchy(Side):
    """Both levels in one process (``InProcessSchedulers``); with
    ``schedulers`` > 1, as many API-level ``CellsScheduler`` instances
    over the same cell schedulers, taking the requests in turn."""

    def __init__(self, ctx, seed, schedulers=1, pools=False):
        super().__init__(ctx, seed)
        self.pools = pools
        from cellboot.scheduler import cell_clients
        from cellboot.scheduler import cells

        self.mappings = scheduler_levels.cell_mappings(ctx)
        self.schedulers, self.info = scheduler_levels.start(ctx,
                                                            self.mappings)
        self.top = self.schedulers.top
        self.tops = [self.top]
        for _ in range(schedulers - 1):
            top = cells.CellsScheduler()
            for mapping in self.mappings:
                top.set_client(mapping.uuid, cell_clients.LocalCell(
                    mapping, self.schedulers.cell(mapping)))
            top.start(ctx)
            self.tops.append(top)
        self.top_of = {}   # live instance uuid -> the top that placed it

    def select(self, spec, uuids):
        top = self.tops[self.selects % len(self.tops)]
        stats = top.stats
        refused_before = stats['cells refused']
        extra_before = scheduler_levels.extra_cells(top)
        try:
            selections = top.select_destinations(self.ctx, spec, uuids)
            if self.pools:
                placement_pools.claim_selected(top, self.ctx, uuids,
                                               selections)
            self.top_of.update((uuid, top) for uuid in uuids)
            return selections
        finally:
            self.extra_cells += (scheduler_levels.extra_cells(top)
                                 - extra_before)
            if stats['cells refused'] > refused_before:
                self.first_choice_rejections += 1

    def placed(self, item, uuids, selections):
        """Map a group's new members to their cells, as the conductor
        does: the API level finds a group's cells through them."""
        if not item.group or item.fails:
            return
        from cellboot.objects import instance_mapping

        for uuid, hosts in zip(uuids, selections):
            instance_mapping.InstanceMapping.create(
                self.ctx, uuid, 'accuracy', cell_uuid=hosts[0]['cell_uuid'])

    def release(self, uuid):
        self.top_of.pop(uuid, self.top).release_resources(self.ctx, uuid)

    def caches(self):
        return [scheduler.cache
                for scheduler in self.schedulers.cells.values()]

    def pool_figures(self):
        return placement_pools.api_figures(self.ctx) if self.pools else None

    def cell_of_host(self):
        found = {}
        for index, cache in enumerate(self.caches()):
            with cache.locked() as states:
                found.update((uuid, index) for uuid in states.uuids)
        return found

    def api_sync(self):
        """How the API levels followed each other (``[scheduler]
        api_sync_backend``): others' aggregates taken, and each
        decision's view age in ms (the staleness bound); empty when
        they do not."""
        followers = [top.sync for top in self.tops if top.sync is not None]
        if not followers:
            return {}
        ages = np.array([age for f in followers for age in f.view_ages]
                        or [0.0]) * 1000
        return {'api_sync_seen': sum(f.seen for f in followers),
                'api_sync_errors': sum(f.errors for f in followers),
                'api_sync_view_age_p50_ms': round(
                    float(np.percentile(ages, 50)), 2),
                'api_sync_view_age_p99_ms': round(
                    float(np.percentile(ages, 99)), 2)}

    def stop(self):
        for top in self.tops[1:]:
            top.stop()
        self.schedulers.stop()


class Reference(Side):
    """One ``CellScheduler`` over one cell with every host; with
    ``pool_total``, the disk taken from a ``MemoryPool`` of that size
    (``placement_pools``)."""

    def __init__(self, ctx, seed, cell_url, pool_total=None):
        super().__init__(ctx, seed)
        self.pool = (None if pool_total is None
                     else placement_pools.MemoryPool(pool_total))
        import uuid as uuid_mod

        from cellboot.objects import cell_mapping
        from cellboot.scheduler import api
        from cellboot.scheduler import host_state_cache

        # Not mapped in the API database: the hierarchy must not see it.
        mapping = cell_mapping.CellMapping(
            id=0, uuid=str(uuid_mod.uuid4()), name='reference',
            database_connection=cell_url, transport_url='fake://',
            disabled=False)
        self.scheduler = api.CellScheduler(
            host_state_cache.CellScope('reference', mapping),
            name='reference')
        self.scheduler.start(ctx, refresh_interval=0)

    def select(self, spec, uuids):
        if self.pool is None:
            return self.scheduler.select_destinations(self.ctx, spec, uuids)
        from cellboot import exception

        spec = dict(spec, resources_elsewhere=[placement_pools.POOL_CLASS])
        selections = self.scheduler.select_destinations(self.ctx, spec,
                                                        uuids)
        try:
            self.pool.claim(uuids, spec['flavor']['root_gb'])
        except exception.NoValidHost:
            for uuid in uuids:
                self.scheduler.release_resources(self.ctx, uuid)
            raise
        return selections

    def release(self, uuid):
        self.scheduler.release_resources(self.ctx, uuid)
        if self.pool is not None:
            self.pool.release(uuid)

    def caches(self):
        return [self.scheduler.cache]

    def pool_figures(self):
        return None if self.pool is None else self.pool.figures()

    def stop(self):
        self.scheduler.stop()
