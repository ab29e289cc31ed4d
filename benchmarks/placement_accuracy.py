"""Placement accuracy: the two-level scheduler against one global scheduler.

The same seeded request stream (``placement_stream``: mixed flavors,
multi-creates of 2 to 10, affinity and anti-affinity groups, builds that
fail and give their claims back at once, deletes of earlier servers) is
replayed, item by item, against

(a) the hierarchy: ``InProcessSchedulers`` over --cells cells, the API
    level's ``CellsScheduler`` choosing a cell from its aggregates and
    the cell's ``CellScheduler`` its host, claims in the cells' databases;
(b) the global reference: one ``CellScheduler`` over a single cell that
    holds every host -- what the flat scheduler was: one scheduler that
    sees every host;

on the same fleet (the same hosts, capacities, names and uuids), until
the reference has filled 95 % of the fleet (the binding resource class)
and a tenth as many items again. The figures are taken at the item
where the reference first reached 95 % (and again at the end): requests
placed by each, first-choice rejections (requests during which a cell
refused), extra cells asked per request, hosts used (packing), the
spread of fill across the cells (the reference's hosts counted in the
cells they have in the hierarchy), decisions per second of each; and the
requests that the hierarchy refused but the reference placed, by shape,
with the hierarchy's reasons. The last line is one JSON object (hosts,
cells, placed, reference_placed, placed_ratio, extra_cells_per_request,
decisions_per_s, ...); target: placed_ratio >= 0.995 at 95 % fill.

  .venv/bin/python benchmarks/placement_accuracy.py --hosts 1000 \\
      --cells 10 --seed 1
  .venv/bin/python benchmarks/placement_accuracy.py --hosts 2000 \\
      --cells 27 --zone-levels 3 --fan-out 3 --schedulers 4

--zone-levels and --fan-out put the hierarchy's cells under a tree of
zones (see scheduler_fleet; written only where the API database has
zones). --schedulers K runs K API-level ``CellsScheduler`` instances
over the same cell schedulers, taking the stream's items in turn: each
sees the others' claims only through the cells' aggregates, as
schedulers in several processes do; a delete is released through the
scheduler that placed it.

--generic adds custom resources and a shared pool (``placement_stream``,
``placement_pools``): CUSTOM_FPGA on a quarter of the hosts, a trait on
half, a tenth of the creates asking one FPGA and a fifth the trait; the
hosts report no DISK_GB, every disk comes from one DISK_GB pool serving
every cell (the hierarchy claims its shares in the API database as a
boot does, the reference against an exact copy in memory). The figures
gain the requests asking the class and the trait and how many each side
placed, and the pool's use at the end against its capacity. Either way
the run fails (exit status 1, after the figures) if some host or pool
holds more than its capacity.

Without --db-url the databases are SQLite files in a temporary
directory; with one, throw-away databases on that server, dropped at
the end.
"""

import collections
import json
import random
import sys
import tempfile
import time

from cellboot.cli import arguments

import placement_pools
import placement_side
import placement_stream
import scheduler_fleet
import scheduler_levels
import scheduler_pools

REPORT_FILL = 0.95
PROGRESS_EVERY = 2000  # items between progress lines


def _build(dbs, ref_dbs, sizes, cells, zone_levels=0, fan_out=1,
           extras=None):
    """Both fleets: the hierarchy's cells (under zones, if asked and the
    API database has them), and one reference cell with the very same
    hosts (only the hierarchy's cells are mapped); the zones written.
    ``extras``: per host ``({class: total}, [trait])``, the hosts then
    without disk (--generic: ``main`` writes the pool)."""
    import datetime
    import uuid as uuid_mod

    now = datetime.datetime.utcnow()
    per_cell = [scheduler_fleet.CellRows() for _ in range(cells)]
    reference = scheduler_fleet.CellRows()
    host_sizes = scheduler_pools.host_sizes(sizes, bool(extras))
    for i, size in enumerate(host_sizes):
        uuid, name = str(uuid_mod.uuid4()), f'c{i % cells + 1}-h{i:06d}'
        extra, traits = extras[i] if extras else ({}, ())
        for rows in (per_cell[i % cells], reference):
            rows.add(uuid, name, size, 'nova', now, extra, traits)
    zone_of, zones = scheduler_fleet.write_zones(dbs, cells, zone_levels,
                                                 fan_out)
    scheduler_fleet.write_mappings(dbs, range(cells), per_cell, zone_of)
    for cell, rows in enumerate(per_cell):
        rows.write(dbs.cell_urls[cell])
    reference.write(ref_dbs.cell_urls[0])
    return zones


def _generic(sides):
    """The --generic figures of a snapshot: requests asking the class,
    the trait and the pool, placed by each side; the pools' use."""
    hier, ref = sides
    found = {}
    for key, test in (('custom_class', lambda item: item.fpga),
                      ('trait', lambda item: item.trait),
                      ('pool', lambda item: True)):
        asked, placed = hier.placed_where(test)
        found.update({f'{key}_requests': asked, f'{key}_placed': placed,
                      f'reference_{key}_placed': ref.placed_where(test)[1]})
    for prefix, side in (('', hier), ('reference_', ref)):
        pool = side.pool_figures()
        found.update({f'{prefix}pool_used': pool['used'],
                      f'{prefix}pool_capacity': pool['capacity'],
                      f'{prefix}overcommitted_pools': pool['overcommitted']})
    return found


def _snapshot(item_count, sides, fill):
    hier, ref = sides
    placed, ref_placed = hier.placed_requests, ref.placed_requests
    cell_of = hier.cell_of_host()
    return {
        'requests': item_count,
        'creates': hier.creates,
        'placed': placed, 'reference_placed': ref_placed,
        'placed_ratio': round(placed / ref_placed, 5) if ref_placed else None,
        'instances_placed': hier.placed_instances,
        'reference_instances_placed': ref.placed_instances,
        'first_choice_rejections': hier.first_choice_rejections,
        'extra_cells_per_request': round(
            hier.extra_cells / max(hier.creates, 1), 4),
        'unavailable': hier.unavailable,
        'hosts_used': hier.hosts_used(),
        'reference_hosts_used': ref.hosts_used(),
        'cell_fill_stddev': round(hier.cell_fill_stddev(cell_of), 4),
        'reference_cell_fill_stddev': round(
            ref.cell_fill_stddev(cell_of), 4),
        'fill': round(hier.fill(), 4), 'reference_fill': round(fill, 4),
        'decisions_per_s': hier.decisions_per_s(),
        'reference_decisions_per_s': ref.decisions_per_s(),
        'refused_only_by_hierarchy': len(hier.refused_only(ref)),
        **hier.api_sync(),
        'refused_only_by_reference': len(ref.refused_only(hier)),
        'false_refusals': len(hier.false_refusals),
        'reference_false_refusals': len(ref.false_refusals),
        **(_generic(sides) if hier.pools else {}),
    }


def replay(ctx, hier, ref, max_items):
    """Feed both sides the stream; the snapshots at 95 % fill and end."""
    at_fill, end_at = None, max_items
    count = 0
    for item in placement_stream.stream(hier.seed, generic=hier.pools):
        if count >= end_at:
            break
        for side in (hier, ref):
            side.apply(ctx, item)
        count += 1
        fill = ref.fill()
        if at_fill is None and fill >= REPORT_FILL:
            at_fill = _snapshot(count, (hier, ref), fill)
            end_at = min(max_items, count + max(count // 10, 100))
            print(f'reference at {fill:.1%} fill after {count} items: '
                  f'placed {at_fill["placed"]} / '
                  f'{at_fill["reference_placed"]}', flush=True)
        if count % PROGRESS_EVERY == 0:
            print(f'{count} items: fill {hier.fill():.1%} (hierarchy), '
                  f'{fill:.1%} (reference); placed {hier.placed_requests} '
                  f'/ {ref.placed_requests}', flush=True)
    return at_fill, _snapshot(count, (hier, ref), ref.fill())


def _analysis(hier, ref):
    """Lines naming, over the whole run, what one side refused and the
    other placed, and the refusals although a host had room."""
    only, theirs_only = hier.refused_only(ref), ref.refused_only(hier)
    lines = [f'over the whole run, refused by the hierarchy only: '
             f'{len(only)} request(s); by the reference only: '
             f'{len(theirs_only)}; by shape, hierarchy only / reference '
             f'only:']
    shapes = collections.Counter(hier.items[i].shape() for i in only)
    theirs = collections.Counter(ref.items[i].shape() for i in theirs_only)
    for shape, _count in (shapes + theirs).most_common(12):
        lines.append(f'  {shapes[shape]:5d} / {theirs[shape]:<5d} {shape}')
    lines.append('  the hierarchy\'s reasons:')
    reasons = collections.Counter(
        placement_side.reason_kind(hier.refusals[i]) for i in only)
    for reason, count in reasons.most_common(6):
        lines.append(f'  {count:5d}  {reason}')
    for i in only[:3]:
        lines.append(f'  e.g. item {i} ({hier.items[i].shape()}): '
                     f'{hier.refusals[i][:300]}')
    lines.append('refused although some host of the side had room (false '
                 'refusals), hierarchy / reference:')
    shapes = collections.Counter(hier.items[i].shape()
                                 for i in hier.false_refusals)
    theirs = collections.Counter(ref.items[i].shape()
                                 for i in ref.false_refusals)
    for shape, count in (shapes + theirs).most_common(10):
        lines.append(f'  {shapes[shape]:5d} / {theirs[shape]:<5d} {shape}')
    lines.append(f'  {len(hier.false_refusals):5d} / '
                 f'{len(ref.false_refusals):<5d} in all; the hierarchy\'s '
                 f'by reason:')
    reasons = collections.Counter(placement_side.reason_kind(
        hier.refusals[i]) for i in hier.false_refusals)
    for reason, count in reasons.most_common(6):
        lines.append(f'  {count:5d}  {reason}')
    for i in hier.false_refusals[:5]:
        lines.append(f'  e.g. item {i} ({hier.items[i].shape()}): '
                     f'{hier.refusals[i][:400]}')
    return lines


def _table(at_fill, final):
    rows = [('requests placed', 'placed', 'reference_placed'),
            ('instances placed', 'instances_placed',
             'reference_instances_placed'),
            ('hosts used', 'hosts_used', 'reference_hosts_used'),
            ('fill', 'fill', 'reference_fill'),
            ('stddev of fill per cell', 'cell_fill_stddev',
             'reference_cell_fill_stddev'),
            ('decisions/s', 'decisions_per_s', 'reference_decisions_per_s')]
    lines = [f'{"":28s}{"hierarchy":>12s}{"reference":>12s}   (at 95 % '
             f'fill | at the end)']
    for label, mine, theirs in rows:
        lines.append(f'{label:28s}{at_fill[mine]!s:>12s}'
                     f'{at_fill[theirs]!s:>12s}   | {final[mine]} / '
                     f'{final[theirs]}')
    lines.append('first-choice rejections: {} | {}; extra cells per '
                 'request: {} | {}'.format(
                     at_fill['first_choice_rejections'],
                     final['first_choice_rejections'],
                     at_fill['extra_cells_per_request'],
                     final['extra_cells_per_request']))
    return lines


def _parse_args(argv):
    parser = scheduler_levels.Parser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=arguments.positive_int, default=1000)
    parser.add_argument('--cells', type=arguments.positive_int, default=10)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--requests', type=arguments.positive_int,
                        default=1000000,
                        help='stop after this many stream items at the '
                             'latest (default: at 95 %% fill of the '
                             'reference and a tenth as many items more)')
    parser.add_argument('--db-url', help='database server URL (MariaDB, '
                        'PostgreSQL); default: SQLite in a temp dir')
    parser.add_argument('--schedulers', type=arguments.positive_int,
                        default=1, help='API-level schedulers over the '
                        'same cell schedulers, taking the items in turn '
                        '(default 1)')
    parser.add_argument('--generic', action='store_true',
                        help='CUSTOM_FPGA and a trait on some hosts and '
                             'requests, the disk in one shared pool')
    scheduler_levels.add_zone_arguments(parser)
    scheduler_levels.add_conf_argument(parser)
    args = parser.parse_args(argv)
    scheduler_levels.check_fleet_args(parser, args)
    if args.generic and args.zone_levels:
        parser.error('--generic: one pool serves the whole fleet; not with '
                     '--zone-levels (the reference has no pools per zone)')
    return args


def main(argv=None):
    args = _parse_args(argv)
    random.seed(args.seed)  # the schedulers' own draws (ties, shuffles)
    workdir = tempfile.mkdtemp(prefix='cellboot-accuracy-')
    dbs = scheduler_fleet.Databases(args.cells, args.db_url, workdir)
    ref_dbs = scheduler_fleet.Databases(
        1, args.db_url, tempfile.mkdtemp(dir=workdir),
        prefix=dbs.prefix + 'r', cell_names=['reference'])
    started = time.perf_counter()
    try:
        dbs.create()
        ref_dbs.create()
        zones = _build(dbs, ref_dbs, placement_stream.host_sizes(
            args.hosts, args.seed), args.cells, args.zone_levels,
            args.fan_out, args.generic and placement_stream.host_extras(
                args.hosts, args.seed))
        print(f'fleets: {args.hosts} hosts, {args.cells} cells under '
              f'{zones} zones and one reference cell on {dbs.backend}, '
              f'built in {time.perf_counter() - started:.1f} s',
              flush=True)
        scheduler_levels.configure(dbs.api_url, overrides=args.conf)
        from cellboot import context

        ctx = context.get_admin_context()
        pool = None
        if args.generic:
            scheduler_pools.write(ctx, placement_pools.pool_sizes(
                placement_stream.host_sizes(args.hosts, args.seed)), 1,
                dbs.cell_names, [])
            pool = placement_pools.api_figures(ctx)
        hier = placement_side.Hierarchy(ctx, args.seed, args.schedulers,
                                        pools=args.generic)
        ref = placement_side.Reference(ctx, args.seed, ref_dbs.cell_urls[0],
                                       pool and pool['capacity'])
        try:
            at_fill, final = replay(ctx, hier, ref, args.requests)
        finally:
            hier.stop()
            ref.stop()
        overcommitted = scheduler_fleet.overcommitted_providers(
            dbs.cell_urls + ref_dbs.cell_urls)
    finally:
        dbs.drop()
        ref_dbs.drop()
    for line in _table(at_fill or final, final) + _analysis(hier, ref):
        print(line)
    report = dict(at_fill or final, reached_fill=at_fill is not None)
    print(json.dumps(dict(hosts=args.hosts, cells=args.cells,
                          seed=args.seed, backend=dbs.backend,
                          zone_levels=args.zone_levels, zones=zones,
                          schedulers=args.schedulers, generic=args.generic,
                          overcommitted_providers=overcommitted, **report,
                          final=final)))
    over_pools = final.get('overcommitted_pools', 0) + final.get(
        'reference_overcommitted_pools', 0)
    if overcommitted or over_pools:
        print(f'over-committed: {overcommitted} host(s), {over_pools} '
              f'pool(s)', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
