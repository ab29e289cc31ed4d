"""Scheduler benchmark: select_destinations through both levels, claimed.

Builds a synthetic fleet directly in the databases (see scheduler_fleet:
cell and host mappings in the API database, each cell's hosts and their
resource providers in the cell's own database), starts the two levels of
scheduler in one process like ``cellboot all-in-one`` (an
``InProcessSchedulers``: a ``CellScheduler`` per cell, loading its
cell's host states, and the API level's ``CellsScheduler`` on top,
holding one aggregate per cell), and times single-instance
``top.select_destinations`` calls, each including its claim written to
the chosen cell's database. Prints a summary line per stage; the last
line is one JSON object:

  hosts, cells, backend, requests, decisions_per_s, p50_ms, p99_ms,
  rss_mb (peak RSS growth of the scheduler process from just before the
  host state loads to the end of the run: both levels plus loading),
  cache_mb and cell_cache_mb (the cells' host states, arrays and
  strings, summed over the cells: what the flat scheduler's cache_mb
  was), api_level_mb (the API level's own memory after the run: a
  ``sys.getsizeof`` walk of the ``CellsScheduler`` and its aggregates,
  the cell schedulers apart; see scheduler_levels),
  api_level_at_claims_bound_mb (the same with its memory of claimed
  consumers full: what a long-running API level holds),
  api_level_traced_mb (tracemalloc around its start), extra_cells_per_
  request (cells asked beyond the first, from ``CellsScheduler.stats``),
  load_s (every cell loaded, then the API level's first read),
  cells_load_s, cpu_ms (the scheduler process's CPU time per
  decision: what the wall-clock figures would be on an idle core,
  database server aside), process_rss_mb and process_peak_rss_mb (the
  whole process, interpreter and libraries included: what the host
  pays), cell_cache_mb_per_1000_hosts and
  cell_scheduler_mb_per_1000_hosts (one cell scheduler's memory for
  its own hosts: arrays, then a ``deep_size`` walk of the whole
  scheduler; see scheduler_levels.cell_level_figures), and zone_levels,
  fan_out, zones (written), build_s, api_level_ms and
  api_level_decisions_per_s (a decision's wall time minus the time
  inside the cell clients' ``select``: the API level's own cost, and
  the rate it alone would sustain; see scheduler_levels.CellCallTimer);

with --zone-levels L --fan-out F the cells sit under a tree of zones
(scheduler_fleet: F roots, F children each, L levels; written only where
the API database has zones, so the same command measures a revision
without them, flat);

with --processes (concurrency mode), P processes, each with its own
``InProcessSchedulers`` (so P schedulers per cell and P API levels),
share --requests onto a fleet with room for exactly --capacity
instances, and the summary adds placed, rejected (NoValidHost),
unavailable (CellsUnavailable), overcommitted_providers (from every
cell's allocations table), conflicts (generation compare-and-swap
retries inside the claims) and failed_claims (claims refused for
capacity and retried on another host).

  .venv/bin/python benchmarks/scheduler.py --hosts 100000 --cells 50
  .venv/bin/python benchmarks/scheduler.py --hosts 1000000 --cells 1000 \\
      --zone-levels 3 --fan-out 10
  .venv/bin/python benchmarks/scheduler.py --hosts 1000 --cells 10 \\
      --db-url 'mysql+pymysql://root@127.0.0.1/?charset=utf8mb4'
  .venv/bin/python benchmarks/scheduler.py --hosts 500 --cells 10 \\
      --db-url 'mysql+pymysql://root@127.0.0.1/?charset=utf8mb4' \\
      --processes 4 --requests 2000 --capacity 1500

Without --db-url the databases are SQLite files in a temporary directory;
with one (a server URL, no database name) throw-away databases are
created on that server and dropped at the end unless --keep.
"""

import concurrent.futures
import cProfile
import json
import multiprocessing
import pstats
import queue
import sys
import tempfile
import time
import uuid as uuid_mod

import numpy as np

from cellboot.cli import arguments

import generic_fleet
import scheduler_fleet
import scheduler_levels
import scheduler_pools

WARMUP = 20  # decisions before timing starts (lazy imports, caches)


def _build_fleet(dbs_args, hosts, capacity, zone_levels=0, fan_out=1,
                 extra_classes=0, traits=0, pools_per_zone=0):
    """Child process: create and fill the databases.

    Run apart so that the rows built in memory do not count in the
    scheduler process's peak RSS.
    """
    dbs = scheduler_fleet.Databases(*dbs_args)
    dbs.create()
    scheduler_fleet.build(dbs, hosts, dbs.cells, capacity, zone_levels,
                          fan_out, extra_classes, traits, pools_per_zone)


def build_fleet(dbs, hosts, capacity=None, zone_levels=0, fan_out=1,
                extra_classes=0, traits=0, pools_per_zone=0):
    """``_build_fleet`` in a child process; the zones written, and the
    seconds it took."""
    mp = multiprocessing.get_context('spawn')
    started = time.perf_counter()
    builder = mp.Process(target=_build_fleet,
                         args=(dbs.args(), hosts, capacity, zone_levels,
                               fan_out, extra_classes, traits,
                               pools_per_zone))
    builder.start()
    builder.join()
    if builder.exitcode:
        sys.exit(f'building the fleet failed (exit {builder.exitcode})')
    zones = (sum(fan_out ** level for level in range(1, zone_levels + 1))
             if scheduler_fleet.has_zones() else 0)
    return zones, round(time.perf_counter() - started, 1)


# The request specs of the run, cycled (``generic_fleet.specs``).
SPECS = generic_fleet.specs(scheduler_fleet.FLAVOR, 0, 0)


def _select_loop(top, ctx, requests, errors=None):
    """``requests`` single-instance decisions; latencies and outcome.

    ``errors``: a list to append any other exception to (one request
    lost, the loop goes on), instead of raising it.
    """
    from cellboot import exception

    specs = SPECS
    latencies, placed, rejected, unavailable = [], 0, 0, 0
    for i in range(requests):
        instance = str(uuid_mod.uuid4())
        started = time.perf_counter()
        try:
            selections = top.select_destinations(
                ctx, specs[i % len(specs)], [instance])
            scheduler_pools.claim(top, ctx, instance, selections)
            placed += 1
        except exception.CellsUnavailable:
            unavailable += 1
        except exception.NoValidHost:
            rejected += 1
        except Exception as exc:
            if errors is None:
                raise
            errors.append(exc)
        latencies.append(time.perf_counter() - started)
    return latencies, placed, rejected, unavailable


def _warm_every_cell(top, ctx):
    """Place and release one instance in every cell (``target_cell``).

    SQLAlchemy compiles a statement once per engine, and each cell has
    its own engine: with a thousand cells, a few thousand timed requests
    would mostly measure first compilations that a long-running
    scheduler paid once, long ago.
    """
    from cellboot import exception

    spec = {'flavor': dict(scheduler_fleet.FLAVOR), 'num_instances': 1,
            'project_id': 'bench', 'user_id': 'bench'}
    for cell in scheduler_levels.cell_mappings(ctx):
        instance = str(uuid_mod.uuid4())
        try:
            top.select_destinations(ctx, dict(spec, scheduler_hints={
                'target_cell': cell.uuid}), [instance])
        except (exception.NoValidHost, exception.CellsUnavailable):
            continue
        top.release_resources(ctx, instance)


def _start(api_url, overrides, prefix='bench'):
    """Configure, then start both levels like a scheduler process."""
    scheduler_levels.configure(api_url, overrides=overrides)
    from cellboot import context

    ctx = context.get_admin_context()
    schedulers, info = scheduler_levels.start(
        ctx, scheduler_levels.cell_mappings(ctx), prefix)
    info['cache_mb'] = info['cell_cache_mb']
    return schedulers, ctx, info


def _shares(requests, parts):
    return [requests // parts + (1 if i < requests % parts else 0)
            for i in range(parts)]


def _latency_stats(latencies):
    millis = np.array(latencies) * 1000
    return {'p50_ms': round(float(np.percentile(millis, 50)), 3),
            'p99_ms': round(float(np.percentile(millis, 99)), 3)}


def _profiled(profile, fn, *args):
    if profile is None:
        return fn(*args)
    profile.enable()
    try:
        return fn(*args)
    finally:
        profile.disable()


def run_throughput(dbs, requests, threads, overrides, profile_to=None,
                   warm_cells=False):
    """One scheduler process; ``threads`` callers share ``requests``."""
    schedulers, ctx, info = _start(dbs.api_url, overrides)
    top = schedulers.top
    print(f'loaded {info["loaded_hosts"]} hosts of {dbs.cells} cells in '
          f'{info["load_s"]} s; cell host states {info["cache_mb"]} MB',
          flush=True)
    _select_loop(top, ctx, WARMUP)
    if warm_cells:
        _warm_every_cell(top, ctx)
    timer = scheduler_levels.CellCallTimer(top)
    scheduler_levels.reset_sync_figures(schedulers)
    extra_before = scheduler_levels.extra_cells(top)
    profile = cProfile.Profile() if profile_to else None
    started, cpu_started = time.perf_counter(), time.process_time()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        outcomes = list(pool.map(
            lambda share: _profiled(profile, _select_loop, top, ctx, share),
            _shares(requests, threads)))
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    if profile is not None:
        profile.dump_stats(profile_to)
        pstats.Stats(profile).sort_stats('cumulative').print_stats(25)
    latencies = [lat for o in outcomes for lat in o[0]]
    api_ms = max(sum(latencies) - timer.seconds, 0.0) / requests * 1000
    rss_before = info.pop('rss_before_mb')
    result = dict(
        info, requests=requests, threads=threads,
        placed=sum(o[1] for o in outcomes),
        rejected=sum(o[2] for o in outcomes),
        unavailable=sum(o[3] for o in outcomes),
        decisions_per_s=round(requests / elapsed, 1),
        cpu_ms=round(cpu / requests * 1000, 3),
        warm_cells=warm_cells,
        api_level_ms=round(api_ms, 3),
        api_level_decisions_per_s=round(1000 / api_ms, 1) if api_ms
        else None,
        rss_mb=round(scheduler_levels.peak_rss_mb() - rss_before, 1),
        process_rss_mb=round(scheduler_levels.rss_mb(), 1),
        process_peak_rss_mb=round(scheduler_levels.peak_rss_mb(), 1),
        failed_claims=scheduler_levels.failed_claims(schedulers),
        extra_cells_per_request=round(
            (scheduler_levels.extra_cells(top) - extra_before) / requests,
            4),
        **_sync_stats([scheduler_levels.sync_figures(schedulers)], requests),
        **_latency_stats(latencies))
    result.update(scheduler_levels.memory_figures(schedulers))
    result.update(scheduler_levels.cell_level_figures(schedulers))
    schedulers.stop()
    return result


def _worker(api_url, overrides, index, requests, barrier, results,
            warm_cells=False, specs=None):
    """One of the concurrent scheduler processes (both levels)."""
    global SPECS
    SPECS = specs or SPECS
    from cellboot.scheduler.resources import contention

    schedulers, ctx, info = _start(api_url, overrides,
                                   prefix=f'bench-p{index}')
    top = schedulers.top
    if warm_cells:
        _warm_every_cell(top, ctx)
        scheduler_levels.reset_sync_figures(schedulers)
    contention.STATS.reset()
    barrier.wait()
    started, cpu_started = time.time(), time.process_time()
    latencies, placed, rejected, unavailable = _select_loop(top, ctx,
                                                            requests)
    results.put({'started': started, 'ended': time.time(),
                 'cpu': time.process_time() - cpu_started,
                 'latencies': latencies, 'placed': placed,
                 'rejected': rejected, 'unavailable': unavailable,
                 'failed_claims': scheduler_levels.failed_claims(schedulers),
                 'sync': scheduler_levels.sync_figures(schedulers),
                 'extra_cells': scheduler_levels.extra_cells(top),
                 'rss_mb': scheduler_levels.peak_rss_mb()
                 - info['rss_before_mb'],
                 'memory': scheduler_levels.memory_figures(schedulers),
                 'load_s': info['load_s'],
                 'conflicts': contention.STATS.snapshot()[
                     'generation_conflicts']})
    schedulers.stop()


def _outcomes(workers, results):
    """Each worker's result; exits (stopping the others, which would
    wait at the barrier for ever) as soon as one of them died."""
    outcomes = []
    while len(outcomes) < len(workers):
        try:
            outcomes.append(results.get(timeout=1))
        except queue.Empty:
            dead = [w for w in workers if w.exitcode not in (None, 0)]
            if dead:
                for worker in workers:
                    worker.terminate()
                sys.exit(f'scheduler process {dead[0].name} failed (exit '
                         f'{dead[0].exitcode}); see its traceback above')
    return outcomes


def run_concurrent(dbs, processes, requests, overrides, warm_cells=False):
    """``processes`` schedulers share ``requests`` against one fleet."""
    mp = multiprocessing.get_context('spawn')
    barrier = mp.Barrier(processes)
    results = mp.Queue()
    workers = [mp.Process(target=_worker,
                          args=(dbs.api_url, overrides, i, share, barrier,
                                results, warm_cells, SPECS))
               for i, share in enumerate(_shares(requests, processes))]
    for worker in workers:
        worker.start()
    outcomes = _outcomes(workers, results)
    for worker in workers:
        worker.join()
    elapsed = (max(o['ended'] for o in outcomes)
               - min(o['started'] for o in outcomes))
    latencies = [lat for o in outcomes for lat in o['latencies']]
    memory = {key: max(o['memory'][key] for o in outcomes)
              for key in outcomes[0]['memory']}
    return dict(
        requests=requests, processes=processes,
        decisions_per_s=round(requests / elapsed, 1),
        cpu_ms=round(sum(o['cpu'] for o in outcomes) / requests * 1000, 3),
        placed=sum(o['placed'] for o in outcomes),
        rejected=sum(o['rejected'] for o in outcomes),
        unavailable=sum(o['unavailable'] for o in outcomes),
        overcommitted_providers=scheduler_fleet.overcommitted_providers(
            dbs.cell_urls),
        holding_consumers=scheduler_fleet.consumers(dbs.cell_urls),
        conflicts=sum(o['conflicts'] for o in outcomes),
        failed_claims=sum(o['failed_claims'] for o in outcomes),
        **_sync_stats([o['sync'] for o in outcomes], requests),
        extra_cells_per_request=round(
            sum(o['extra_cells'] for o in outcomes) / requests, 4),
        rss_mb=round(max(o['rss_mb'] for o in outcomes), 1),
        load_s=max(o['load_s'] for o in outcomes),
        cache_mb=memory['cell_cache_mb'],
        **memory, **_latency_stats(latencies))


def _percentiles_ms(name, seconds):
    """``{name}_p50_ms``, ``_p99_ms`` and ``_max_ms`` of ``seconds``."""
    millis = np.array(seconds or [0.0]) * 1000
    return {f'{name}_p50_ms': round(float(np.percentile(millis, 50)), 2),
            f'{name}_p99_ms': round(float(np.percentile(millis, 99)), 2),
            f'{name}_max_ms': round(float(millis.max()), 2)}


def _sync_stats(figures, requests):
    """The change feed's staleness and cost, summed over the processes;
    empty when the feed is off.

    ``sync_view_age``: from the start of the last pull to each decision,
    the bound (every peer's change committed earlier is in the
    decision). ``sync_lag``: from a peer's write of a change to the pull
    that delivered it, which also counts the time a scheduler had
    nothing to decide (it pulls when it decides). The pull's cost is its
    time per decision, ms.
    """
    lags = [lag for f in figures for lag in f['lags']]
    ages = [age for f in figures for age in f.get('ages', ())]
    pulls = sum(f['pulls'] for f in figures)
    if not pulls:
        return {}
    return {**_percentiles_ms('sync_view_age', ages),
            **_percentiles_ms('sync_lag', lags),
            'sync_changes_seen': len(lags), 'sync_pulls': pulls,
            'sync_pull_ms_per_decision': round(
                sum(f['pull_seconds'] for f in figures) / requests * 1000,
                3),
            'sync_errors': sum(f['errors'] for f in figures)}


def _parse_args(argv):
    parser = scheduler_levels.Parser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=arguments.positive_int, required=True)
    parser.add_argument('--cells', type=arguments.positive_int, required=True)
    parser.add_argument('--db-url', help='database server URL (MariaDB, '
                        'PostgreSQL); default: SQLite in a temp dir')
    parser.add_argument('--requests', type=arguments.positive_int,
                        default=2000,
                        help='timed decisions (default 2000)')
    parser.add_argument('--processes', type=arguments.positive_int, default=1,
                        help='concurrent scheduler processes; more than 1 '
                             'is the concurrency mode')
    parser.add_argument('--threads', type=arguments.positive_int, default=1,
                        help='concurrent callers inside the one scheduler '
                             'process (throughput mode; default 1)')
    parser.add_argument('--capacity', type=arguments.non_negative_int,
                        help='fleet room in instances (default: 32 per '
                             'host)')
    parser.add_argument('--keep', action='store_true',
                        help='keep the databases (and print their URLs)')
    parser.add_argument('--profile', metavar='FILE',
                        help='throughput mode: cProfile the timed '
                             'decisions, dump the stats to FILE and print '
                             'the top 25 by cumulative time')
    parser.add_argument('--warm-cells', action='store_true',
                        help='place and release one instance in every '
                             'cell (in every process) before timing, as a '
                             'long-running scheduler has (each cell\'s '
                             'statements compiled once, per engine)')
    generic_fleet.add_arguments(parser, arguments)
    scheduler_pools.add_arguments(parser, arguments)
    scheduler_levels.add_zone_arguments(parser)
    scheduler_levels.add_conf_argument(parser)
    args = parser.parse_args(argv)
    scheduler_levels.check_fleet_args(parser, args)
    return args


def run(args):
    """Build the fleet, run the benchmark; its JSON result as a dict."""
    global SPECS
    SPECS = generic_fleet.specs(scheduler_fleet.FLAVOR,
                                args.extra_classes, args.traits)
    workdir = tempfile.mkdtemp(prefix='cellboot-bench-')
    dbs = scheduler_fleet.Databases(args.cells, args.db_url, workdir)
    zones, build_s = build_fleet(dbs, args.hosts, args.capacity,
                                 args.zone_levels, args.fan_out,
                                 args.extra_classes, args.traits,
                                 args.pools_per_zone)
    print(f'fleet: {args.hosts} hosts in {args.cells} cells under '
          f'{zones} zones on {dbs.backend}, built in {build_s} s',
          flush=True)
    try:
        if args.processes > 1:
            result = run_concurrent(dbs, args.processes, args.requests,
                                    args.conf, args.warm_cells)
        else:
            result = run_throughput(dbs, args.requests, args.threads,
                                    args.conf, args.profile,
                                    args.warm_cells)
    finally:
        if args.keep:
            print(f'kept: {dbs.urls}')
        else:
            dbs.drop()
    return dict(hosts=args.hosts, cells=args.cells, backend=dbs.backend,
                zone_levels=args.zone_levels, fan_out=args.fan_out,
                zones=zones, build_s=build_s,
                classes=3 + args.extra_classes, traits=args.traits,
                pools_per_zone=args.pools_per_zone,
                **result)


def main(argv=None):
    print(json.dumps(run(_parse_args(argv))))


if __name__ == '__main__':
    main()
