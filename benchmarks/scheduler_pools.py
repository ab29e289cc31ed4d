"""Shared pools in the scheduler benchmarks: the fleet's disk in pools.

``--pools-per-zone N`` (``benchmarks/scheduler.py``, and the third
variant of ``scheduler_generic``) builds the fleet's hosts without
DISK_GB and writes N shared DISK_GB pools (``cellboot.scheduler.
pools``) per zone of the fleet's top level -- per root zone of the zone
tree, or, without one, for the whole fleet -- each serving the cells of
its zone. The flavor still asks a root disk: each decision takes it
from a pool (the API level chooses the pool with the cell,
``pools.view``), and the benchmark claims the selection's pool share as
the conductor does (``claim_pools``), so decisions per second count the
pool's claim, a compare-and-swap on the API database.

The pools together hold the disk the hosts would have had
(``scheduler_fleet.ROOMY_HOST`` or the --capacity slots), so that the
fleet's room is the same with pools as without.
"""

POOL_PREFIX = 'bench-disk-'
POOL_CLASS = 'DISK_GB'


def add_arguments(parser, arguments):
    parser.add_argument('--pools-per-zone', type=arguments.non_negative_int,
                        default=0,
                        help='shared DISK_GB pools per zone of the top '
                             'level (the whole fleet without zones); the '
                             'hosts then have no disk (default 0)')


def host_sizes(sizes, pools):
    """The hosts' ``{class: total}``, without the pools' class when the
    fleet has pools."""
    if not pools:
        return sizes
    return [{rc: total for rc, total in size.items() if rc != POOL_CLASS}
            for size in sizes]


def create(api_url, sizes, per_zone, cell_names, root_zones):
    """Write the pools (in the process that built the fleet): ``per_zone``
    for each of ``root_zones`` (names; none: one group of every cell),
    holding ``sizes``' disk between them; how many were written."""
    if not per_zone:
        return 0
    import scheduler_levels
    scheduler_levels.configure(api_url)
    from cellboot import context

    return write(context.get_admin_context(), sizes, per_zone, cell_names,
                 root_zones)


def write(ctx, sizes, per_zone, cell_names, root_zones):
    """``create`` in a process already configured for the fleet's API
    database (cellboot's configuration is set once a process)."""
    from cellboot.scheduler.pools import records
    from cellboot.scheduler.resources import inventory

    groups = [{'zones': [zone]} for zone in root_zones] or [
        {'cells': list(cell_names)}]
    count = per_zone * len(groups)
    disk = sum(size.get(POOL_CLASS, 0) for size in sizes)
    total = min(max(disk // count, 1), inventory.MAX_AMOUNT)
    for g, scope in enumerate(groups):
        for p in range(per_zone):
            records.create_pool(ctx, f'{POOL_PREFIX}{g}-{p}',
                                {POOL_CLASS: {'total': total}}, **scope)
    return count


def claim(top, ctx, instance, selections):
    """Claim the pool share of the chosen host, as the conductor does."""
    entries = selections[0][0].get('pools')
    if entries:
        top.claim_pools(ctx, instance, entries)
