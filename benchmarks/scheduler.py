"""Scheduler benchmark: select_destinations with persisted claims.

Builds a synthetic fleet directly in the databases (see scheduler_fleet),
loads the host states like a scheduler starting up, and times
single-instance select_destinations calls, each including its claim
written to the API database. Prints a summary line per stage; the last
line is one JSON object:

  hosts, cells, backend, requests, decisions_per_s, p50_ms, p99_ms,
  rss_mb (peak RSS growth of the scheduler process from just before the
  host state load to the end of the run: the cache plus its loading),
  cache_mb (the host state arrays and strings themselves), load_s, and
  cpu_ms (the scheduler process's CPU time per decision: what the
  wall-clock figures would be on an idle core, database server aside);

with --processes (concurrency mode), P scheduler processes, each with its
own host state cache, share --requests onto a fleet with room for exactly
--capacity instances, and the summary adds placed, rejected (NoValidHost),
overcommitted_providers (from the allocations table) and conflicts
(generation compare-and-swap retries inside the claims); failed_claims
counts claims refused for capacity and retried on another host.

  .venv/bin/python benchmarks/scheduler.py --hosts 10000 --cells 20
  .venv/bin/python benchmarks/scheduler.py --hosts 1000 --cells 10 \\
      --db-url 'mysql+pymysql://root@127.0.0.1/?charset=utf8mb4'
  .venv/bin/python benchmarks/scheduler.py --hosts 500 --cells 10 \\
      --db-url 'mysql+pymysql://root@127.0.0.1/?charset=utf8mb4' \\
      --processes 4 --requests 2000 --capacity 1500

Without --db-url the databases are SQLite files in a temporary directory;
with one (a server URL, no database name) throw-away databases are
created on that server and dropped at the end unless --keep.
"""

import argparse
import concurrent.futures
import json
import multiprocessing
import resource
import sys
import tempfile
import time
import uuid as uuid_mod

import numpy as np

import scheduler_fleet

WARMUP = 20  # decisions before timing starts (lazy imports, caches)


def _configure(api_url):
    """Point cellboot's global configuration at the benchmark fleet."""
    from cellboot.conf import CONF
    from oslo_log import log as logging

    logging.register_options(CONF)
    CONF([], project='cellboot', default_config_files=[])
    logging.setup(CONF, 'cellboot-benchmark')
    CONF.set_override('connection', api_url, group='api_database')
    # The fleet's heartbeats are written once, at build time.
    CONF.set_override('service_down_time', 10 ** 9, group='scheduler')
    CONF.set_override('max_retries', 0, group='database')


def _rss_mb():
    with open('/proc/self/statm') as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() / 2 ** 20


def _peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _build_fleet(dbs_args, hosts, capacity):
    """Child process: create and fill the databases.

    Run apart so that the rows built in memory do not count in the
    scheduler process's peak RSS.
    """
    dbs = scheduler_fleet.Databases(*dbs_args)
    dbs.create()
    scheduler_fleet.build(dbs, hosts, dbs.cells, capacity)


def _select_loop(scheduler, ctx, requests):
    """Run ``requests`` single-instance decisions; latencies and outcome."""
    from cellboot import exception

    spec = {'flavor': dict(scheduler_fleet.FLAVOR), 'num_instances': 1,
            'project_id': 'bench', 'user_id': 'bench'}
    latencies, placed, rejected = [], 0, 0
    for _ in range(requests):
        instance = str(uuid_mod.uuid4())
        started = time.perf_counter()
        try:
            scheduler.select_destinations(ctx, spec, [instance])
            placed += 1
        except exception.NoValidHost:
            rejected += 1
        latencies.append(time.perf_counter() - started)
    return latencies, placed, rejected


def _start_scheduler(api_url):
    """Configure, then load the host states like a scheduler at start."""
    _configure(api_url)
    from cellboot import context
    from cellboot.scheduler import api

    ctx = context.get_admin_context()
    scheduler = api.SchedulerAPI()
    rss_before = _rss_mb()
    started = time.perf_counter()
    summary = scheduler.start(ctx, refresh_interval=0)
    load_s = time.perf_counter() - started
    with scheduler.cache.locked() as states:
        cache_mb = states.nbytes() / 2 ** 20
    return scheduler, ctx, {'load_s': round(load_s, 3),
                            'loaded_hosts': summary['hosts'],
                            'cache_mb': round(cache_mb, 1),
                            'rss_before_mb': rss_before}


def _shares(requests, parts):
    return [requests // parts + (1 if i < requests % parts else 0)
            for i in range(parts)]


def _latency_stats(latencies):
    millis = np.array(latencies) * 1000
    return {'p50_ms': round(float(np.percentile(millis, 50)), 3),
            'p99_ms': round(float(np.percentile(millis, 99)), 3)}


def run_throughput(dbs, requests, threads):
    """One scheduler process; ``threads`` callers share ``requests``."""
    scheduler, ctx, info = _start_scheduler(dbs.api_url)
    print(f'loaded {info["loaded_hosts"]} hosts in {info["load_s"]} s; '
          f'cache {info["cache_mb"]} MB', flush=True)
    _select_loop(scheduler, ctx, WARMUP)
    started, cpu_started = time.perf_counter(), time.process_time()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        outcomes = list(pool.map(
            lambda share: _select_loop(scheduler, ctx, share),
            _shares(requests, threads)))
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    latencies = [lat for o in outcomes for lat in o[0]]
    placed = sum(o[1] for o in outcomes)
    rejected = sum(o[2] for o in outcomes)
    rss_before = info.pop('rss_before_mb')
    return dict(info, requests=requests, threads=threads, placed=placed,
                rejected=rejected,
                decisions_per_s=round(requests / elapsed, 1),
                cpu_ms=round(cpu / requests * 1000, 3),
                rss_mb=round(_peak_rss_mb() - rss_before, 1),
                failed_claims=scheduler.manager.failed_claims,
                **_latency_stats(latencies))


def _worker(api_url, requests, barrier, results):
    """One of the concurrent scheduler processes."""
    from cellboot.scheduler.resources import contention

    scheduler, ctx, info = _start_scheduler(api_url)
    contention.STATS.reset()
    barrier.wait()
    started, cpu_started = time.time(), time.process_time()
    latencies, placed, rejected = _select_loop(scheduler, ctx, requests)
    results.put({'started': started, 'ended': time.time(),
                 'cpu': time.process_time() - cpu_started,
                 'latencies': latencies, 'placed': placed,
                 'rejected': rejected,
                 'failed_claims': scheduler.manager.failed_claims,
                 'rss_mb': _peak_rss_mb() - info['rss_before_mb'],
                 'conflicts': contention.STATS.snapshot()[
                     'generation_conflicts']})


def run_concurrent(dbs, processes, requests):
    """``processes`` schedulers share ``requests`` against one fleet."""
    mp = multiprocessing.get_context('spawn')
    barrier = mp.Barrier(processes)
    results = mp.Queue()
    workers = [mp.Process(target=_worker,
                          args=(dbs.api_url, share, barrier, results))
               for share in _shares(requests, processes)]
    for worker in workers:
        worker.start()
    outcomes = [results.get() for _ in workers]
    for worker in workers:
        worker.join()
    elapsed = (max(o['ended'] for o in outcomes)
               - min(o['started'] for o in outcomes))
    latencies = [lat for o in outcomes for lat in o['latencies']]
    return dict(
        requests=requests, processes=processes,
        decisions_per_s=round(requests / elapsed, 1),
        cpu_ms=round(sum(o['cpu'] for o in outcomes) / requests * 1000, 3),
        placed=sum(o['placed'] for o in outcomes),
        rejected=sum(o['rejected'] for o in outcomes),
        overcommitted_providers=scheduler_fleet.overcommitted_providers(
            dbs.api_url),
        conflicts=sum(o['conflicts'] for o in outcomes),
        failed_claims=sum(o['failed_claims'] for o in outcomes),
        rss_mb=round(max(o['rss_mb'] for o in outcomes), 1),
        **_latency_stats(latencies))


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, required=True)
    parser.add_argument('--cells', type=int, required=True)
    parser.add_argument('--db-url', help='database server URL (MariaDB, '
                        'PostgreSQL); default: SQLite in a temp dir')
    parser.add_argument('--requests', type=int, default=2000,
                        help='timed decisions (default 2000)')
    parser.add_argument('--processes', type=int, default=1,
                        help='concurrent scheduler processes; more than 1 '
                             'is the concurrency mode')
    parser.add_argument('--threads', type=int, default=1,
                        help='concurrent callers inside the one scheduler '
                             'process (throughput mode; default 1)')
    parser.add_argument('--capacity', type=int,
                        help='fleet room in instances (default: 32 per '
                             'host)')
    parser.add_argument('--keep', action='store_true',
                        help='keep the databases (and print their URLs)')
    return parser.parse_args(argv)


def main(argv=None):
    args = _parse_args(argv)
    workdir = tempfile.mkdtemp(prefix='cellboot-bench-')
    dbs = scheduler_fleet.Databases(args.cells, args.db_url, workdir)
    mp = multiprocessing.get_context('spawn')
    started = time.perf_counter()
    builder = mp.Process(target=_build_fleet,
                         args=(dbs.args(), args.hosts, args.capacity))
    builder.start()
    builder.join()
    if builder.exitcode:
        sys.exit(f'building the fleet failed (exit {builder.exitcode})')
    print(f'fleet: {args.hosts} hosts in {args.cells} cells on '
          f'{dbs.backend}, built in {time.perf_counter() - started:.1f} s',
          flush=True)
    try:
        if args.processes > 1:
            result = run_concurrent(dbs, args.processes, args.requests)
        else:
            result = run_throughput(dbs, args.requests, args.threads)
    finally:
        if args.keep:
            print(f'kept: {dbs.urls}')
        else:
            dbs.drop()
    print(json.dumps(dict(hosts=args.hosts, cells=args.cells,
                          backend=dbs.backend, **result)))


if __name__ == '__main__':
    main()
