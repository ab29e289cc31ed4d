"""Shared pools on both sides of ``placement_accuracy.py --generic``.

With --generic the fleet's disk is in one DISK_GB pool serving every
cell (``scheduler_pools.write``: the hosts report no DISK_GB), smaller
than the hosts' disk would have been (POOL_SHARE) so that it binds. The
hierarchy takes each instance's disk as a boot does: the API level's
plan names the pool in the selection, and the share is claimed with
``CellsScheduler.claim_pools`` (a compare-and-swap on the API database)
-- all the request's instances, or none, their hosts given back.

The reference cannot use the API database's pool: it would see the
hierarchy's claims. It holds an exact copy in memory instead
(``MemoryPool``: the same total, a share per instance, given back with
the instance), and takes the same shares after its selection, all or
none. That is exact for one pool serving every host: a global
scheduler places a request when some hosts fit its other classes and
the one pool has the disk, which is what it does. (Pools per zone would
tie each host to its zone's pool; the reference does not model that, so
--generic is refused with --zone-levels.)
"""

from cellboot import exception

POOL_CLASS = 'DISK_GB'
# The pool holds this share of the disk the hosts would have had: the
# stream's flavors ask about a third of it by the time VCPU is full, so
# that with a quarter the pool binds first and the run fills it to 95 %,
# testing both sides' pool claims at the edge (``Side.fill``).
POOL_SHARE = 0.25


def _refusal(needed, free):
    return exception.NoValidHost(
        reason=f'the pool has {free} {POOL_CLASS} free, the request '
               f'needs {needed}')


class MemoryPool:
    """The reference's copy of the fleet's one pool."""

    def __init__(self, total):
        self.total = total
        self.shares = {}   # instance uuid -> DISK_GB held

    @property
    def used(self):
        return sum(self.shares.values())

    def free(self):
        return self.total - self.used

    def claim(self, uuids, amount):
        """``amount`` for each of ``uuids``, all or none (NoValidHost)."""
        needed, free = amount * len(uuids), self.free()
        if needed > free:
            raise _refusal(needed, free)
        self.shares.update((uuid, amount) for uuid in uuids)

    def release(self, uuid):
        self.shares.pop(uuid, None)

    def figures(self):
        return {'used': self.used, 'capacity': self.total,
                'overcommitted': int(self.used > self.total)}


def pool_sizes(sizes):
    """``sizes`` ({class: total} per host) with POOL_SHARE of their disk:
    what ``scheduler_pools.write`` sums into the pool."""
    return [{POOL_CLASS: int(size.get(POOL_CLASS, 0) * POOL_SHARE)}
            for size in sizes]


def claim_selected(top, ctx, uuids, selections):
    """Claim each instance's pool share named by its selection, as the
    boot flow's claim-pool step does; on a refusal give back every
    instance of the request (hosts and pools) and raise it."""
    try:
        for uuid, hosts in zip(uuids, selections):
            entries = hosts[0].get('pools')
            if entries:
                top.claim_pools(ctx, uuid, entries)
    except exception.NoValidHost:
        for uuid in uuids:
            top.release_resources(ctx, uuid)
        raise


def api_figures(ctx):
    """``{used, capacity, overcommitted}`` of the API database's pools
    (the hierarchy's), summed over them; None without pools."""
    from cellboot.scheduler.pools import records

    pools = records.list_pools(ctx)
    if not pools:
        return None
    used = sum(p['usages'].get(POOL_CLASS, 0) for p in pools)
    capacity = sum(p['capacity'].get(POOL_CLASS, 0) for p in pools)
    over = sum(1 for p in pools for rc, n in p['usages'].items()
               if n > p['capacity'].get(rc, 0))
    return {'used': used, 'capacity': capacity, 'overcommitted': over}
