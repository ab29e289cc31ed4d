"""End-to-end boot benchmark: a request in, ACTIVE servers out.

Boots through the whole path as the API would drive it: the build
requests, request specs and instance mappings written in one API
database transaction, then ``schedule_and_build_instances`` cast to the
super conductor over RPC; the boot flow (persisted, or not with
``--no-persistence``) schedules, maps, creates each instance in its cell
and casts to the compute hosts, whose fake driver spawns at once and
sets ACTIVE. Everything runs in this process (see ``e2e_deployment``):
by default SQLite files in a temporary directory and ``fake://``; with
``--db-url`` and ``--transport-url``, throw-away databases on that
server and that broker (give it a vhost of its own: the topics are the
same in every deployment).

Modes:

* ``sequential``: ``--count`` single-instance requests, one after the
  other, each waited for until ACTIVE (with ``--clients N``, N clients
  doing so at once, ``--count`` boots in all);
* ``batch``: one multi-create request of ``--count`` instances.

Ways in: ``--via rpc`` (default) writes what the API writes and casts
itself; ``--via rest`` boots through cellboot's REST API over HTTP on
the loopback (``e2e_rest``), served by ``--server MODULE:CLASS`` (the
built-in server by default), so that two servers can be compared.

A boot's latency runs from the start of its API transaction to the
moment its instance is settled; boots/s is ``count`` over the wall time
of the whole run. A few warm-up boots go first, unmeasured. The last
line printed is one JSON object: mode, count, persistence, boots_per_s,
p50_ms, p99_ms, active, error (plus hosts, backend, transport, the
process's CPU time per boot and the 1-minute load average at the end).

  .venv/bin/python benchmarks/e2e.py --mode sequential --count 200
  .venv/bin/python benchmarks/e2e.py --mode batch --count 500
  .venv/bin/python benchmarks/e2e.py --mode batch --count 500 \\
      --no-persistence
  .venv/bin/python benchmarks/e2e.py --mode sequential --count 200 \\
      --db-url 'mysql+pymysql://root@127.0.0.1/?charset=utf8mb4' \\
      --transport-url rabbit://guest:guest@127.0.0.1:5672/bench
  .venv/bin/python benchmarks/e2e.py --via rest --mode sequential \\
      --count 200 --clients 4
"""

import argparse
import concurrent.futures
import cProfile
import json
import os
import pstats
import sys
import tempfile
import time
import uuid as uuid_mod

import numpy as np

import e2e_deployment
import e2e_rest

# Small enough that 500 fit on the default hosts many times over.
FLAVOR = {'flavorid': 'e2e', 'name': 'e2e', 'vcpus': 1, 'memory_mb': 128,
          'root_gb': 1}
WARMUP = 5
# Seconds the whole measured run may take before it is reported as is.
RUN_TIMEOUT = 600


def _configure(debug):
    """Logging and the options of a benchmark run.

    The databases, the bus and persistence are the deployment's
    (``e2e_deployment.Deployment``).
    """
    from oslo_log import log as logging

    from cellboot.conf import CONF

    logging.register_options(CONF)
    CONF([], project='cellboot', default_config_files=[])
    CONF.set_override('debug', debug)
    CONF.set_override('default_log_levels', CONF.default_log_levels + [
        'cellboot=INFO' if debug else 'cellboot=WARNING'])
    logging.setup(CONF, 'cellboot-e2e-benchmark')
    CONF.set_override('resume_flows', False, group='conductor')
    CONF.set_override('spawn_time', 0.0, group='fake_driver')
    # Host states are loaded once the hosts are discovered, not by a timer.
    CONF.set_override('host_state_refresh_interval', 0, group='scheduler')


def _persist_request(ctx, count):
    """What the API writes for one request, in one transaction.

    The API's own functions (``cellboot.api.boot_requests``), quota
    check included.
    """
    from cellboot.api import boot_requests

    instance, spec = boot_requests.describe(
        ctx, 'bench', dict(FLAVOR), count=count, image_ref='cirros')
    return boot_requests.persist(ctx, count, instance, spec)


def _request_context():
    from cellboot import context as cb_context
    return cb_context.RequestContext(
        user_id='bench', project_id=e2e_deployment.PROJECT,
        request_id=f'req-{uuid_mod.uuid4()}')


def boot(deployment, count, timeout=RUN_TIMEOUT):
    """One request of ``count`` instances; {uuid: latency s} when settled."""
    ctx = _request_context()
    started = time.perf_counter()
    build_requests, specs = _persist_request(ctx, count)
    deployment.conductor_api.schedule_and_build_instances(
        ctx, build_requests, specs)
    uuids = [br['instance_uuid'] for br in build_requests]
    if not deployment.completions.wait(uuids, timeout):
        print(f'WARNING: {len(uuids)} boot(s) not settled within '
              f'{timeout} s', file=sys.stderr, flush=True)
    done = deployment.completions.done
    return {uuid: done[uuid] - started for uuid in uuids if uuid in done}


def _sequential(boot_one, count, clients):
    """``count`` single boots by ``clients`` clients; {uuid: latency s}."""
    shares = [count // clients + (index < count % clients)
              for index in range(clients)]

    def client(share):
        latencies = {}
        for _ in range(share):
            latencies.update(boot_one(1))
        return latencies

    latencies = {}
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        for found in pool.map(client, shares):
            latencies.update(found)
    return latencies


def run(boot_one, mode, count, clients=1):
    """The measured boots: (wall seconds, CPU seconds, {uuid: latency s}).

    ``boot_one(count)`` makes one request of ``count`` instances and
    returns their latencies once settled. The CPU time is the whole
    process's (every service thread): on a shared machine it moves much
    less than the wall time, and it says how much work a boot is.
    """
    for _ in range(WARMUP):
        boot_one(1)
    latencies = {}
    cpu_started = time.process_time()
    started = time.perf_counter()
    if mode == 'sequential':
        latencies.update(_sequential(boot_one, count, clients))
    else:
        latencies.update(boot_one(count))
    return (time.perf_counter() - started,
            time.process_time() - cpu_started, latencies)


def print_last_flow(dbs):
    """Each atom's duration in the last boot flow: where the time went."""
    from cellboot.flowrun import lookup

    flows = lookup.find_flows(dbs.urls['flows'], kind='boot')
    if not flows:
        return
    flow = lookup.get_flow(dbs.urls['flows'], flows[-1]['uuid'])
    atoms = ', '.join(f'{atom["name"]} {atom["duration"] or 0:.3f} s'
                      for atom in flow['atoms'])
    print(f'last boot flow ({len(flow["instance_uuids"])} instance(s), '
          f'{flow["state"]}, {flow["duration"] or 0:.3f} s): {atoms}',
          flush=True)


def summary(args, dbs, wall, cpu, latencies, states):
    millis = np.array(list(latencies.values()) or [float('nan')]) * 1000
    return {
        'mode': args.mode, 'count': args.count, 'via': args.via,
        'clients': args.clients,
        'server': args.server if args.via == 'rest' else None,
        'persistence': not args.no_persistence,
        'boots_per_s': round(args.count / wall, 2),
        'p50_ms': round(float(np.percentile(millis, 50)), 2),
        'p99_ms': round(float(np.percentile(millis, 99)), 2),
        'active': states['active'], 'error': states['error'],
        'hosts': args.hosts, 'backend': dbs.backend,
        'transport': args.transport_url.split(':', 1)[0],
        'cpu_ms_per_boot': round(cpu * 1000 / args.count, 2),
        'load_avg_1m': round(os.getloadavg()[0], 2),
    }


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--mode', choices=('sequential', 'batch'),
                        required=True)
    parser.add_argument('--count', type=int, required=True,
                        help='boots to measure: single requests '
                             '(sequential) or one multi-create (batch)')
    parser.add_argument('--via', choices=('rpc', 'rest'), default='rpc',
                        help='boot by casting to the conductor as the API '
                             'does (rpc, default), or through the REST API '
                             'over HTTP (rest)')
    parser.add_argument('--server', default=e2e_rest.DEFAULT_SERVER,
                        metavar='MODULE:CLASS',
                        help='with --via rest: the HTTP server class '
                             f'(default {e2e_rest.DEFAULT_SERVER})')
    parser.add_argument('--clients', type=int, default=1,
                        help='sequential mode: clients booting at once '
                             '(default 1)')
    parser.add_argument('--no-persistence', action='store_true',
                        help='run the flows in memory only ([conductor] '
                             'persist_flows = False)')
    parser.add_argument('--db-url', help='database server URL (MariaDB, '
                        'PostgreSQL), no database name; default: SQLite '
                        'in a temporary directory')
    parser.add_argument('--transport-url', default='fake://',
                        help='oslo.messaging URL (default fake://)')
    parser.add_argument('--hosts', type=int, default=8,
                        help='compute hosts in the cell (default 8)')
    parser.add_argument('--profile', metavar='FILE',
                        help='profile every thread with cProfile; write '
                             'the stats to FILE and print the top entries')
    parser.add_argument('--debug', action='store_true',
                        help='log cellboot at INFO (DEBUG with oslo.log\'s '
                             'debug) instead of WARNING')
    return parser.parse_args(argv)


def _profiled(args, call):
    """``call()`` with a cProfile profiler in every thread that runs.

    The boot path runs in the RPC executor's threads, which start after
    this is installed (threading.setprofile); their profiles are merged.
    Each profiler counts its thread's CPU time (``time.thread_time``), not
    the wall clock: a thread waiting for a lock or a message costs
    nothing, so the figures add up to the work a boot takes.
    """
    import threading

    profiles = []
    lock = threading.Lock()

    def start_profiling(*_ignored):
        profile = cProfile.Profile(time.thread_time)
        with lock:
            profiles.append(profile)
        profile.enable()  # replaces this hook in the calling thread

    threading.setprofile(start_profiling)
    main_profile = cProfile.Profile(time.thread_time)
    main_profile.enable()
    try:
        return call()
    finally:
        main_profile.disable()
        threading.setprofile(None)
        stats = pstats.Stats(main_profile)
        for profile in profiles:
            profile.snapshot_stats()
            stats.add(profile)
        stats.dump_stats(args.profile)
        stats.sort_stats('tottime').print_stats(30)
        stats.sort_stats('cumulative').print_stats(50)


def main(argv=None):
    args = _parse_args(argv)
    workdir = tempfile.mkdtemp(prefix='cellboot-e2e-')
    dbs = e2e_deployment.Databases(workdir, args.db_url)
    _configure(args.debug)
    dbs.create()
    deployment = e2e_deployment.Deployment(
        dbs, args.transport_url, args.hosts, FLAVOR,
        persistence=not args.no_persistence,
        server=args.server if args.via == 'rest' else None)
    deployment.start()
    front = None
    if args.via == 'rest':
        front = e2e_rest.RESTFront(deployment, FLAVOR)

        def boot_one(count):
            return front.boot(count, RUN_TIMEOUT)
    else:
        def boot_one(count):
            return boot(deployment, count)
    print(f'deployment: {args.hosts} hosts, {dbs.backend}, '
          f'{args.transport_url.split(":", 1)[0]}, persistence '
          f'{"off" if args.no_persistence else "on"}, via {args.via}'
          + (f' ({args.server})' if front else ''), flush=True)
    try:
        if args.profile:
            wall, cpu, latencies = _profiled(
                args, lambda: run(boot_one, args.mode, args.count,
                                  args.clients))
        else:
            wall, cpu, latencies = run(boot_one, args.mode, args.count,
                                       args.clients)
        states = deployment.count_states(latencies)
        if not args.no_persistence:
            print_last_flow(dbs)
    finally:
        deployment.stop()
        dbs.drop()
    print(json.dumps(summary(args, dbs, wall, cpu, latencies, states)),
          flush=True)


if __name__ == '__main__':
    main()
