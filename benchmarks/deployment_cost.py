"""The real deployment's cost per boot: CPU, connections and boots/s.

Starts cellboot as operators run it, every service a process of its own
on MariaDB, RabbitMQ and a Redis jobboard on this machine: the REST API
(``cellboot-api``), ``--super-conductors`` super conductors scheduling
in-process (``--scheduler local``; or through ``cellboot-scheduler``
with ``--scheduler rpc``), the scheduler service, and 2 cells of a cell
conductor and 4 compute hosts each with the fake driver, which builds
at once (``deployment_cost_deploy``: the chaos test's deployment).
Then, through the REST API, ACTIVE out:

1. ``--warmup`` single boots, not measured (first-use costs);
2. ``--idle-seconds`` of nothing: each kind's idle CPU rate (periodic
   tasks, this shared machine's other load);
3. phase ``singles``: ``--singles`` single boots from ``--clients``
   client threads, as fast as the API takes them (or at ``--rate``
   boots/s);
4. phase ``batch``: one multi-create of ``--batch`` servers;
5. phase ``burst``, with ``--burst-batch`` above 0: a multi-create of
   ``--burst-batch`` servers and ``--burst-singles`` single boots (from
   ``--clients`` threads) at once, the load that took MariaDB past its
   ``max_connections`` (``--super-conductors 3 --burst-batch 500``).

Each phase waits until none of its servers is building any more
(bounded by ``--timeout``; those left are reported as stragglers) and
measures:

* ``boots_per_s``: the servers that settled over the time from the
  first POST to the last of them (stragglers left out: they are
  counted by state in ``stragglers``);
* ``cpu_ms_per_boot`` per service kind: ``super_conductors``, ``api``,
  ``scheduler``, ``cell_conductors``, ``computes`` (``utime + stime`` of
  each service's processes and their reaped children, from /proc),
  ``mariadb`` (the server's ``mariadbd``), ``deployment`` (the sum of
  those) and ``machine`` (/proc/stat's non-idle time: everything, the
  benchmark's client and the machine's other users included), over the
  phase plus ``--tail`` seconds (work that ends after the last ACTIVE:
  ``cpu_window_s``; with stragglers, up to the last server that
  settled), minus the idle rate over the same time;
* ``new_connections_per_boot``: the delta of MariaDB's ``Connections``
  status over the phase, per boot, and ``threads_connected_peak``, the
  highest ``Threads_connected`` seen (polled): both server-wide, so
  another user of the server counts too;
* ``statements_per_boot`` and ``pings_per_boot``: the deltas of
  MariaDB's ``Questions`` and ``Com_admin_commands`` (pings) over the
  phase, per boot, also server-wide.

Progress goes to stderr; the last line on stdout is one JSON object.
Exit status 0 when every server went ACTIVE, 1 when some did not (or a
service died), 2 when it could not run (bad option, a service missing).

  .venv/bin/python benchmarks/deployment_cost.py
  .venv/bin/python benchmarks/deployment_cost.py --super-conductors 3
  .venv/bin/python benchmarks/deployment_cost.py --singles 4 --batch 4 \\
      --warmup 1 --idle-seconds 1
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import unittest

import fixtures

import deployment_cost_cpu as cpu
import deployment_cost_deploy as deploy
import deployment_cost_load as load
import deployment_cost_mariadb as mariadb

# The largest multi-create the API takes by default ([api] max_count).
MAX_BATCH = 1000


def log(message):
    sys.stderr.write(f'{time.strftime("%H:%M:%S")} {message}\n')
    sys.stderr.flush()


def _count(minimum, maximum=None):
    """An argparse type: a whole number within [minimum, maximum]."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'{text!r} is not a whole '
                                             f'number')
        if value < minimum or (maximum is not None and value > maximum):
            upper = '' if maximum is None else f' and at most {maximum}'
            raise argparse.ArgumentTypeError(
                f'{value} must be at least {minimum}{upper}')
        return value
    return parse


def _positive(unit):
    """An argparse type: a positive, finite number of ``unit``."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'{text!r} is not a number')
        if not 0 < value < float('inf'):
            raise argparse.ArgumentTypeError(f'{text} must be a positive '
                                             f'number of {unit}')
        return value
    return parse


_seconds = _positive('seconds')


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog='deployment_cost.py', description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--super-conductors', type=_count(1, 8), default=1,
                        help='super conductor processes (default 1)')
    parser.add_argument('--scheduler', choices=deploy.SCHEDULERS,
                        default='local',
                        help='where the super conductors schedule: '
                             'in-process (local, default) or through '
                             'cellboot-scheduler (rpc)')
    parser.add_argument('--singles', type=_count(0), default=300,
                        help='single boots of the first phase (default '
                             '300; 0 skips the phase)')
    parser.add_argument('--clients', type=_count(1, 64), default=8,
                        help='client threads of the singles phase '
                             '(default 8)')
    parser.add_argument('--rate', type=_positive('boots per second'),
                        help='offer the singles at this pace instead of '
                             'as fast as the API takes them: below the '
                             "machine's capacity, the CPU per boot of N "
                             'super conductors is compared without the '
                             'contention of a saturated machine')
    parser.add_argument('--batch', type=_count(0, MAX_BATCH), default=200,
                        help='servers of the multi-create phase (default '
                             '200; 0 skips the phase)')
    parser.add_argument('--burst-batch', type=_count(0, MAX_BATCH),
                        default=0,
                        help='servers of the burst phase\'s multi-create, '
                             'sent while its single boots go in (default '
                             '0: no burst phase)')
    parser.add_argument('--burst-singles', type=_count(0), default=300,
                        help='single boots of the burst phase (default '
                             '300)')
    parser.add_argument('--warmup', type=_count(0), default=10,
                        help='single boots before measuring (default 10)')
    parser.add_argument('--idle-seconds', type=_seconds, default=5.0,
                        help='seconds of idle rate measured before the '
                             'load (default 5)')
    parser.add_argument('--tail', type=_seconds, default=2.0,
                        help='seconds a phase\'s CPU window runs past its '
                             'last settled server (default 2)')
    parser.add_argument('--timeout', type=_seconds, default=300.0,
                        help='seconds a phase waits for its servers '
                             '(default 300)')
    parser.add_argument('--keep-logs', metavar='DIRECTORY',
                        help="copy the services' logs there at the end "
                             '(e.g. to see why servers straggled)')
    args = parser.parse_args(argv)
    if args.keep_logs:
        try:
            os.makedirs(args.keep_logs, exist_ok=True)
        except OSError as exc:
            parser.error(f'argument --keep-logs: {exc}')
    return args


def _commit():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        return subprocess.run(
            ['git', 'rev-parse', '--short', 'HEAD'], cwd=here, text=True,
            capture_output=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


class Bench:
    """One run: the deployment, its counters, the phases' figures."""

    def __init__(self, args, deployed):
        self.args = args
        self.deployed = deployed
        self.kinds = cpu.Kinds(deploy.kinds(deployed), cpu.find_mariadb())
        self.monitor = mariadb.ConnectionMonitor(deployed.cell0_url)
        self.settlement = load.Settlement(
            deploy.cell_database_urls(deployed))
        self.clients = load.Clients(deployed.api_url, deploy.FLAVOR)
        self.idle_rates = {}

    def close(self):
        self.settlement.close()
        self.monitor.close()

    def warm_up(self):
        if not self.args.warmup:
            return
        log(f'warm-up: {self.args.warmup} single boots')
        ids, refused = self.clients.singles('cost-warmup', self.args.warmup,
                                            self.args.clients)
        _settled, counts, _ended = self.settlement.wait(
            'cost-warmup', len(ids), self.args.timeout)
        log(f'warm-up: {dict(counts)}, {len(refused)} refused')

    def measure_idle(self):
        seconds = self.args.idle_seconds
        log(f'idle: {seconds} s')
        first, started = self.kinds.sample(), time.monotonic()
        time.sleep(seconds)
        last = self.kinds.sample()
        self.idle_rates = cpu.rates(first, last, time.monotonic() - started)
        log('idle CPU ms/s: ' + ', '.join(
            f'{kind} {rate:.1f}' for kind, rate in self.idle_rates.items()))

    def phase(self, name, boot):
        """Run ``boot(project)``; the phase's figures."""
        project = f'cost-{name}'
        self.monitor.start_peak()
        connections = self.monitor.connections()
        statements = self.monitor.statements()
        first = self.kinds.sample()
        started = time.monotonic()
        ids, refused = boot(project)
        log(f'{name}: {len(ids)} accepted, {len(refused)} refused in '
            f'{time.monotonic() - started:.1f} s; waiting')
        progress = _Progress(self.kinds, started, first)
        settled, counts, ended = self.settlement.wait(
            project, len(ids), self.args.timeout, on_progress=progress)
        if settled:
            time.sleep(self.args.tail)
            progress.sample()
        last_at, last = progress.last
        window = last_at - started
        new_connections = self.monitor.connections() - connections
        sent = [after - before for after, before in zip(
            self.monitor.statements(), statements)]
        peak = self.monitor.stop_peak()
        boots, seconds = len(ids), ended - started
        done = boots - sum(count for state, count in counts.items()
                           if state not in load.SETTLED)
        figures = {
            'boots': boots,
            'active': counts.get(load.ACTIVE, 0),
            'stragglers': {state: count for state, count in counts.items()
                           if state != load.ACTIVE and count},
            'settled': settled,
            'refused': len(refused),
            'seconds': round(seconds, 2),
            'cpu_window_s': round(window, 2),
            'boots_per_s': round(done / seconds, 1) if done else None,
            'cpu_ms_per_boot': cpu.cost_per_boot(
                first, last, window, self.idle_rates, boots)
            if boots else None,
            'new_connections_per_boot': round(new_connections / boots, 3)
            if boots else None,
            'threads_connected_peak': peak,
            'statements_per_boot': round(sent[0] / boots, 1)
            if boots else None,
            'pings_per_boot': round(sent[1] / boots, 1) if boots else None,
        }
        if refused:
            figures['first_refusal'] = refused[0][:300]
        log(f'{name}: {json.dumps(figures)}')
        return figures

    def singles(self, project):
        return self.clients.singles(project, self.args.singles,
                                    self.args.clients, self.args.rate)

    def batch(self, project):
        return self.clients.multi_create(project, self.args.batch)

    def burst(self, project):
        """The burst's multi-create in a thread of its own while the
        singles go in: (accepted ids, refusals) of both."""
        multi = {}
        thread = threading.Thread(
            target=lambda: multi.update(result=self.clients.multi_create(
                project, self.args.burst_batch)), daemon=True)
        thread.start()
        ids, refused = self.clients.singles(
            project, self.args.burst_singles, self.args.clients)
        thread.join()
        batch_ids, batch_refused = multi['result']
        return ids + batch_ids, refused + batch_refused

    def run(self):
        self.warm_up()
        self.measure_idle()
        summary = {
            'benchmark': 'deployment_cost',
            'super_conductors': self.args.super_conductors,
            'scheduler': self.args.scheduler,
            'cells': len(deploy.CELLS),
            'computes_per_cell': len(next(iter(deploy.CELLS.values()))),
            'clients': self.args.clients,
            'rate': self.args.rate,
            'commit': _commit(),
            'load_avg_1m': round(os.getloadavg()[0], 2),
            'idle_cpu_ms_per_s': {kind: round(rate, 1) for kind, rate in
                                  self.idle_rates.items()},
            'max_connections': self.monitor.max_connections,
            'connections_scope': 'server-wide',
        }
        if self.args.singles:
            summary['singles'] = self.phase('singles', self.singles)
        if self.args.batch:
            summary['batch'] = self.phase('batch', self.batch)
        if self.args.burst_batch:
            summary['burst'] = self.phase('burst', self.burst)
        summary['dead_services'] = deploy.dead_services(self.deployed)
        return summary


class _Progress:
    """CPU samples taken as a phase's servers settle, the last kept.

    With stragglers, the phase's CPU window ends at the last sample, at
    most ``INTERVAL`` s before the last server that settled, rather than
    at the timeout: minutes of idle-rate subtraction would bury the
    phase's own cost in the machine's noise. Samples are that far
    apart so that reading /proc does not add to the machine's cost.
    """

    INTERVAL = 1.0

    def __init__(self, kinds, started, first):
        self.kinds = kinds
        self.last = (started, first)

    def __call__(self):
        if time.monotonic() - self.last[0] >= self.INTERVAL:
            self.sample()

    def sample(self):
        self.last = (time.monotonic(), self.kinds.sample())


def _first_error(exc):
    """The error a fixture's failed set-up wraps (MultipleExceptions)."""
    while isinstance(exc, fixtures.MultipleExceptions):
        exc = exc.args[0][1]
    return exc


def _all_active(summary):
    phases = [summary[name] for name in ('singles', 'batch', 'burst')
              if name in summary]
    return not summary['dead_services'] and all(
        phase['settled'] and not phase['stragglers'] and not
        phase['refused'] for phase in phases)


def main(argv=None):
    args = parse_args(argv)
    run = deploy.Run()
    log(f'starting the deployment: {args.super_conductors} super '
        f'conductor(s), scheduler {args.scheduler}')
    try:
        redis, deployed = deploy.start(run, args.super_conductors,
                                       args.scheduler)
    except Exception as exc:
        error = _first_error(exc)
        if isinstance(error, unittest.SkipTest):
            log(f'cannot run: {error}')
            return 2
        run.failed(sys.exc_info())
        log(f'the deployment did not start: {error}')
        return 1
    bench = None
    try:
        log(f'API at {deployed.api_url}')
        bench = Bench(args, deployed)
        summary = bench.run()
    except Exception:
        run.failed(sys.exc_info())
        raise
    finally:
        if bench is not None:
            bench.close()
        if args.keep_logs:
            deploy.keep_logs(deployed, args.keep_logs)
        log('stopping the deployment')
        deployed.cleanUp()
        redis.cleanUp()
    print(json.dumps(summary))
    return 0 if _all_active(summary) else 1


if __name__ == '__main__':
    sys.exit(main())
