"""Race benchmark: schedulers in several processes fill one small fleet.

Builds a fleet on a database server (by default the MariaDB at
127.0.0.1:3306: a throw-away database per cell and one for the API)
with room for exactly --capacity single-instance requests, then races
schedulers to place --requests such requests, all started together, in
one of two ways:

* --services API_LEVEL,PER_CELL: the deployment itself, out of real
  services (``scheduler_race_services``): API_LEVEL ``cellboot-
  scheduler`` processes on the API's bus and PER_CELL ``cellboot-
  scheduler --cell NAME`` processes in every cell on the cell's own bus
  (RabbitMQ vhosts made for the run), --clients threads (default 4 x
  API_LEVEL) calling ``SchedulerRPCAPI.select_destinations`` as super
  conductors do. --services 4,2 is the issue's 4 API levels over 2
  schedulers a cell. The services' own figures (failed claims,
  conflicts, the change feed's) come from the line of counters each logs
  as SIGTERM stops it; --keep-logs keeps their logs.
* --processes P (default 4): P processes, each one
  ``InProcessSchedulers`` -- its own API-level ``CellsScheduler`` and
  its own ``CellScheduler`` for every cell (``scheduler.run_concurrent``)
  -- each calling its own API level from one thread: P API levels and P
  schedulers a cell, each deciding one request at a time.

What must hold, and is asserted (exit status 1 otherwise): exactly
--capacity requests placed, no provider holding more than
(total - reserved) x allocation_ratio of any class (read back from every
cell's allocations), and as many consumers holding allocations as
requests placed; with --services also a line of counters from every
service, as many claims tried as placed plus failed, the API levels'
count of placed requests the clients', and no call failing otherwise
than NoValidHost. What is measured: failed claims (a claim refused for
capacity, the request retried on another host) and their rate per
placed request, generation conflicts (compare-and-swap retries inside
the claims), decisions/s over all processes, latencies.

--sync names values of the sync option between schedulers (--sync-option,
default scheduler.sync_backend); each value is one run on a fresh fleet
(with --services, written in every service's configuration),
``default`` meaning the option left alone. The last line is one JSON
object: the fleet, and ``runs``, one summary per value.

  PYTHONPATH=. .venv/bin/python benchmarks/scheduler_race.py --cells 4 \\
      --hosts 400 --services 4,2 --requests 2000 --capacity 1500 \\
      --sync none,database
  PYTHONPATH=. .venv/bin/python benchmarks/scheduler_race.py --cells 4 \\
      --hosts 400 --processes 4 --requests 2000 --capacity 1500 \\
      --sync default
"""

import json
import re
import shutil
import sys
import tempfile

from cellboot.cli import arguments

import scheduler
import scheduler_fleet
import scheduler_levels
import scheduler_race_services as services

# What a race of services adds to a run's summary.
SERVICES_KEYS = (
    'claims_tried', 'db_retries', 'sync_pulls', 'sync_seen', 'sync_errors',
    'sync_lag_p50_ms', 'sync_lag_p99_ms', 'sync_view_age_p50_ms',
    'sync_view_age_p99_ms', 'api_requests_placed',
    'failed_claims_per_cell_scheduler', 'silent_services', 'errors',
    'first_error', 'clients')

MARIADB = 'mysql+pymysql://root@127.0.0.1:3306/?charset=utf8mb4'


def check(result, capacity):
    """What a race must never break; the broken ones, as sentences."""
    broken = []
    if result['placed'] != capacity:
        broken.append(f'placed {result["placed"]}, not exactly the '
                      f'capacity {capacity}')
    if result['overcommitted_providers']:
        broken.append(f'{result["overcommitted_providers"]} provider(s) '
                      f'over-committed')
    if result['holding_consumers'] != result['placed']:
        broken.append(f'{result["holding_consumers"]} consumers hold '
                      f'allocations for {result["placed"]} placed')
    return broken


def race(args, sync):
    """One run on a fresh fleet; its summary."""
    overrides = list(args.conf)
    if sync != 'default':
        group, _, option = args.sync_option.rpartition('.')
        overrides.append((group, option, sync))
    workdir = tempfile.mkdtemp(prefix='cellboot-race-')
    dbs = scheduler_fleet.Databases(args.cells, args.db_url, workdir)
    try:
        _zones, build_s = scheduler.build_fleet(dbs, args.hosts,
                                                args.capacity)
        if args.services:
            result = services.run(dbs, *args.services, args.requests,
                                  args.clients, overrides, workdir)
        else:
            result = scheduler.run_concurrent(dbs, args.processes,
                                              args.requests, overrides)
    finally:
        dbs.drop()
    attempts = result['placed'] + result['failed_claims']
    summary = {key: result[key] for key in (
        'placed', 'rejected', 'unavailable', 'overcommitted_providers',
        'holding_consumers', 'failed_claims', 'conflicts',
        'decisions_per_s', 'cpu_ms', 'p50_ms', 'p99_ms',
        'extra_cells_per_request', 'load_s')}
    summary.update(
        sync=sync, build_s=build_s,
        failed_claim_rate=round(result['failed_claims'] / attempts, 4)
        if attempts else 0.0,
        broken=check(result, args.capacity))
    if args.services:
        summary.update({key: result[key] for key in SERVICES_KEYS})
        summary['broken'] += services.check(result)
        # The services' logs and configuration: kept to read if broken.
        summary['logs'] = workdir if summary['broken'] or \
            args.keep_logs else None
    if not summary.get('logs'):
        shutil.rmtree(workdir, ignore_errors=True)
    return summary


def _parse_args(argv):
    parser = scheduler_levels.Parser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=arguments.positive_int, default=400)
    parser.add_argument('--cells', type=arguments.positive_int, default=4)
    parser.add_argument('--processes', type=arguments.positive_int,
                        help='scheduler processes (API level and a '
                        'scheduler per cell each; default 4)')
    parser.add_argument('--services', metavar='API_LEVEL,PER_CELL',
                        help='race real cellboot-scheduler services '
                        'instead: API_LEVEL of the API level and PER_CELL '
                        'in every cell, on RabbitMQ')
    parser.add_argument('--keep-logs', action='store_true',
                        help='with --services: keep their logs and '
                        'configuration files (kept anyway when broken)')
    parser.add_argument('--clients', type=arguments.positive_int,
                        help='with --services: threads calling the API '
                        'level (default 4 x API_LEVEL)')
    parser.add_argument('--requests', type=arguments.positive_int,
                        default=2000)
    parser.add_argument('--capacity', type=arguments.positive_int,
                        default=1500, help='fleet room in instances '
                        '(default 1500)')
    parser.add_argument('--db-url', default=MARIADB,
                        help=f'database server URL (default {MARIADB})')
    parser.add_argument('--sync', default='default',
                        help='comma-separated values of --sync-option, a '
                        'run each (default: "default", the option alone)')
    parser.add_argument('--sync-option', default='scheduler.sync_backend',
                        metavar='GROUP.OPTION')
    scheduler_levels.add_conf_argument(parser)
    args = parser.parse_args(argv)
    scheduler_levels.check_fleet_args(parser, args)
    _check_topology(parser, args)
    if args.requests < args.capacity:
        parser.error(f'--requests: must be at least --capacity '
                     f'({args.capacity}) to fill the fleet, not '
                     f'{args.requests}')
    args.sync = [value.strip() for value in args.sync.split(',')]
    if not all(args.sync):
        parser.error('--sync: an empty value in the list')
    group, dot, option = args.sync_option.rpartition('.')
    if not dot or not group or not option:
        parser.error(f'--sync-option: must be GROUP.OPTION, not '
                     f'{args.sync_option!r}')
    try:
        scheduler_levels.check_overrides(
            [(group, option, value) for value in args.sync
             if value != 'default'])
    except ValueError as exc:
        parser.error(str(exc).replace('--conf', '--sync', 1))
    if args.services:
        try:
            services.check_broker()
        except services.Unavailable as exc:
            parser.exit(2, f'{parser.prog}: cannot run: RabbitMQ {exc}\n')
    return args


def _check_topology(parser, args):
    """``--processes`` or ``--services A,C`` (and ``--clients``)."""
    if args.services is None:
        if args.clients is not None or args.keep_logs:
            parser.error(f'--{"clients" if args.clients else "keep-logs"}'
                         f': only with --services')
        args.processes = 4 if args.processes is None else args.processes
        if args.processes < 2:
            parser.error('--processes: a race needs at least 2, not '
                         f'{args.processes}')
        return
    if args.processes is not None:
        parser.error('--processes: not with --services (each service is '
                     'a process)')
    counts = re.fullmatch(r'\s*([0-9]+)\s*,\s*([0-9]+)\s*', args.services)
    if counts is None or min(int(c) for c in counts.groups()) < 1:
        parser.error(f'--services: must be API_LEVEL,PER_CELL, two whole '
                     f'numbers of at least 1, not {args.services!r}')
    args.services = tuple(int(c) for c in counts.groups())
    if args.services == (1, 1):
        parser.error('--services: a race needs at least 2 schedulers at '
                     'one level, not 1,1')
    if args.clients is None:
        args.clients = 4 * args.services[0]


def _topology(args):
    if args.services:
        return dict(api_levels=args.services[0],
                    cell_schedulers_per_cell=args.services[1],
                    clients=args.clients, services=True)
    return dict(processes=args.processes,
                cell_schedulers_per_cell=args.processes)


def main(argv=None):
    args = _parse_args(argv)
    runs = []
    for sync in args.sync:
        try:
            summary = race(args, sync)
        except services.StartFailed as exc:
            print(f'scheduler_race.py: sync {sync}: {exc}', file=sys.stderr)
            return 1
        print(f'sync {sync}: placed {summary["placed"]} / {args.requests} '
              f'for room for {args.capacity}; over-committed providers '
              f'{summary["overcommitted_providers"]}; failed claims '
              f'{summary["failed_claims"]} ({summary["failed_claim_rate"]:.1%}'
              f'); generation conflicts {summary["conflicts"]}; '
              f'{summary["decisions_per_s"]} decisions/s', flush=True)
        for sentence in summary['broken']:
            print(f'  BROKEN: {sentence}', flush=True)
        runs.append(summary)
    print(json.dumps(dict(
        hosts=args.hosts, cells=args.cells, **_topology(args),
        requests=args.requests, capacity=args.capacity,
        backend=scheduler_fleet.Databases(1, args.db_url, '.').backend,
        runs=runs)))
    return 1 if any(run['broken'] for run in runs) else 0


if __name__ == '__main__':
    sys.exit(main())
