"""The pools as the API-level scheduler sees them, and the plan for one
request.

A request's class that a cell's hosts do not provide at all (the cell's
aggregate has no capacity of it) is taken from a pool serving that cell
(directly or through a zone above it) that has room and none of the
request's forbidden traits. Required traits qualify the host, not the
pool: a flavor asking for ``HW_CPU_X86_AVX2`` must still be able to
take its disk from a storage pool, which has no CPU. The cell is
then sent a spec without that class (``routing.CellsRequest.spec_for``
writes it as ``resources_elsewhere``), and the selection names the pool
and the amounts it must give (``selection['pools']``); the boot flow's
``claim-pool`` step claims them.

The pools are read from the API database at most every
``MAX_AGE`` seconds (``PoolView``): a deployment without pools pays one
clock read per decision, and a request for a pool's room decided on
figures a few seconds old is corrected by the claim, which is the
truth.
"""

import threading
import time

from cellboot import exception
from cellboot.scheduler.pools import claims as pool_claims
from cellboot.scheduler.pools import records

# Seconds a read of the pools is used for before it is read again.
MAX_AGE = 2.0


def _free(pool, rc):
    return pool['capacity'].get(rc, 0) - pool['usages'].get(rc, 0)


def _traits_ok(pool, forbidden):
    return set(pool['traits']).isdisjoint(forbidden)


class PoolView:
    """The pools, read again once they are ``max_age`` seconds old."""

    def __init__(self, max_age=MAX_AGE, reader=records.list_pools):
        self.max_age = max_age
        self._reader = reader
        self._lock = threading.Lock()
        self._pools = None
        self._read_at = None

    def pools(self, context):
        now = time.monotonic()
        if self._read_at is None or now - self._read_at >= self.max_age:
            with self._lock:
                if self._read_at is None or \
                        now - self._read_at >= self.max_age:
                    self._pools = self._reader(context)
                    self._read_at = time.monotonic()
        return self._pools

    def invalidate(self):
        """Read again before the next decision: after a claim failed
        (our figures said there was room), or after shares were given
        back (room a request must not be refused for)."""
        self._read_at = None

    def read_since(self, since):
        """Whether the pools were read at or after ``since`` (a
        ``time.monotonic()`` value); a refusal reads them again if not,
        as the cells' aggregates are."""
        return self._read_at is not None and self._read_at >= since

    def claim(self, context, consumer_uuid, entries, replay=False):
        """``pools.claims.claim`` of checked ``entries``; a refusal
        makes the next decision read the pools again (our figures said
        there was room)."""
        try:
            return pool_claims.claim(context, consumer_uuid,
                                     pool_claims.checked_entries(entries),
                                     replay=bool(replay))
        except exception.NoValidHost:
            self.invalidate()
            raise

    def plan(self, context, request):
        """A ``PoolPlan`` for ``request`` (a ``routing.CellsRequest``),
        or None when there is no pool: nothing else then changes."""
        pools = self.pools(context)
        if not pools:
            return None
        return PoolPlan(pools, request)


def _lacks(node, rc):
    """Whether the hosts of ``node`` provide none of ``rc`` at all."""
    aggregate = node.aggregate or {}
    figures = aggregate.get('resources', {}).get(rc)
    return not figures or not figures.get('capacity')


class PoolPlan:
    """Which pools may give what to which cell, for one request."""

    def __init__(self, pools, request):
        inner = request.request
        self.resources = dict(request.resources)
        self.forbidden = frozenset(inner.forbidden_traits)
        self.by_cell = {}
        for pool in pools:
            if not _traits_ok(pool, self.forbidden):
                continue
            for cell_uuid in pool['served_cells']:
                self.by_cell.setdefault(cell_uuid, []).append(pool)
        # Cells whose hosts lack a class: their classes (spec_for).
        self._elsewhere = {}

    def room(self, node, rc):
        """How much of ``rc`` one instance placed below ``node`` may take
        from a pool: the most any serving pool has free, when the node's
        hosts have none of it (a zone: when a pool serves any cell below
        it, so that a zone is never pruned that a cell of it would
        pass); 0 otherwise."""
        if len(node.cell_uuids) == 1 and not _lacks(node, rc):
            return 0
        best = 0
        for cell_uuid in node.cell_uuids:
            for pool in self.by_cell.get(cell_uuid, ()):
                best = max(best, _free(pool, rc))
        return best

    def note_cell(self, view):
        """Remember which classes ``view``'s cell leaves to the pools."""
        self._elsewhere[view.cell.uuid] = sorted(
            rc for rc in self.resources if _lacks(view, rc)
            and self.by_cell.get(view.cell.uuid))
        return self._elsewhere[view.cell.uuid]

    def classes_for(self, cell_uuid):
        """The classes the cell is not asked for (``note_cell``)."""
        return self._elsewhere.get(cell_uuid, [])

    def choose(self, cell_uuid):
        """``[{'uuid', 'name', 'resources', 'alternates'}]``: per pool
        chosen, the classes and amounts it must give an instance placed
        in the cell, and the other serving pools with room for the same
        (tried if the claim on the chosen one fails). Empty when the
        cell's hosts provide every class."""
        chosen = {}
        for rc in self.classes_for(cell_uuid):
            amount = self.resources[rc]
            fitting = sorted(
                (pool for pool in self.by_cell.get(cell_uuid, ())
                 if _free(pool, rc) >= amount),
                key=lambda pool: (-_free(pool, rc), pool['name']))
            if not fitting:
                # None had room when last read: the claim tries every
                # serving pool and, failing, names the class.
                fitting = [{'uuid': None, 'name': None}] + list(
                    self.by_cell.get(cell_uuid, ()))
            entry = chosen.setdefault(fitting[0]['uuid'], {
                'uuid': fitting[0]['uuid'], 'name': fitting[0]['name'],
                'resources': {}, 'alternates': [
                    pool['uuid'] for pool in fitting[1:]]})
            entry['resources'][rc] = amount
        return [chosen[uuid] for uuid in sorted(chosen, key=str)]

    def name_pools(self, hosts, cell_uuid):
        """Write on each selection of an instance placed in the cell
        what the pools must give it (``choose``): the boot flow's
        ``claim-pool`` step claims it."""
        entries = self.choose(cell_uuid)
        if entries:
            for selection in hosts:
                selection['pools'] = entries
