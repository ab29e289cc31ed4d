"""The race of real scheduler services (``scheduler_race.py --services``).

``--services A,C`` builds the deployment the race is about out of the
services an operator runs: A API-level schedulers (``cellboot-scheduler``
on the API's bus, topic ``cellboot-scheduler``) and C schedulers per
cell (``cellboot-scheduler --cell NAME`` on that cell's bus), each a
process of its own started with this interpreter (``python -m
cellboot.cmd.scheduler``, the checkout's cellboot on its PYTHONPATH),
configured by files as ``tests/functional/multiprocess/deployment.py``
writes them: an API level knows the API database and bus, a cell's
scheduler only its cell's database and bus. The buses are RabbitMQ
vhosts made for the run (one for the API level, one per cell; every
cell mapping's transport_url is pointed at its cell's), deleted at the
end with their queues. A pool of client threads calls
``SchedulerRPCAPI.select_destinations`` for one instance each, as super
conductors with ``[conductor] scheduler = rpc`` do; RabbitMQ hands each
call to one of the API levels, and each API level's call into a cell to
one of that cell's schedulers, so every scheduler races the others of
its level.

What only the services know -- claims tried and failed, generation
conflicts, the change feed's pulls and lag, the cells that refused --
comes from the line of counters each logs as SIGTERM stops it
(``cellboot.cmd.scheduler.COUNTERS``), read back from its log file; a
service that logged none is reported broken.

Every service gets those of the fleet, then the run's options
(``--conf``, the sync value; they win): heartbeats written once when it
is built (``service_down_time`` far away); the cellboot loggers at
WARNING but for the service runner and the counters (a NoValidHost is
an INFO line per cell asked: thousands near a full fleet, which would
cost more than the decisions, as in the in-process mode); and database
pools of 4 connections (2 more at a burst) instead of a scheduler's 8
(4 more). At their own sizes, 4 API levels over 4 cells and 2
schedulers a cell may hold 336 connections (``pools.budget``: 60 per
API level, 12 per cell scheduler); they held up to 140 at once here,
and MariaDB's default ``max_connections`` is 151 for every user of the
server: calls failed with "Too many connections". With the smaller
pools they held up to 111, and the failed claims were as many as at
the services' own sizes (docs/benchmarks.md).
"""

import concurrent.futures
import functools
import logging
import os
import sys
import threading
import time

# tools/ (vhosts, service processes) is the checkout's, one level up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

import cellboot  # noqa: E402
from cellboot.cmd import scheduler as scheduler_cmd  # noqa: E402
from tools import rabbit_vhosts  # noqa: E402
from tools import service_processes  # noqa: E402

import deployment_cost_cpu  # noqa: E402
import scheduler  # noqa: E402
import scheduler_fleet  # noqa: E402
import scheduler_levels  # noqa: E402

# What every service is told, before the run's own options: the fleet's
# heartbeats are written once, when it is built; and smaller database
# pools (see the module docstring).
FLEET_OPTIONS = [('scheduler', 'service_down_time', str(10 ** 9))] + [
    (group, option, value) for group in ('database', 'api_database')
    for option, value in (('max_pool_size', '4'), ('max_overflow', '2'))]
QUIET_LOGGERS = ['cellboot=WARNING', 'cellboot.service_runner=INFO',
                 'cellboot.cmd.scheduler=INFO']

Unavailable = rabbit_vhosts.Unavailable


class StartFailed(Exception):
    """A service exited, or did not serve in time; says which, its last
    line, and where the logs are."""


def check_broker():
    """Raise Unavailable, saying why, unless a vhost can be made."""
    rabbit_vhosts.delete(rabbit_vhosts.create('cellboot-race'))


@functools.cache
def _configure_client():
    """This process only calls the API level: cellboot's configuration
    without a file, its loggers quiet; once (oslo.config parses once)."""
    scheduler_levels.configure(api_url=None)
    # Its clients' calls at once are many reply waiters, not a leak.
    logging.getLogger('oslo_messaging._drivers.amqpdriver').setLevel(
        logging.ERROR)


def _conf_text(sections):
    """``{group: {option: value}}`` as a configuration file."""
    return ''.join(
        f'[{group}]\n' + ''.join(f'{option} = {value}\n'
                                 for option, value in options.items())
        + '\n' for group, options in sections.items())


def _env():
    """This environment, the checkout's cellboot first on the path."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(
        cellboot.__file__)))
    paths = [root] + [p for p in [os.environ.get('PYTHONPATH')] if p]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths))


class Services:
    """The schedulers of one run, in processes, over ``dbs``'s fleet.

    A context manager: entering starts them (cells' first, so that the
    API levels read published aggregates) and returns once all serve;
    leaving -- also after a failure or Ctrl-C -- stops every one with
    SIGTERM (SIGKILL if it lingers) and deletes the vhosts. ``counters``
    is then each service's line, by name (None: it logged none).
    """

    def __init__(self, dbs, api_level, per_cell, overrides, workdir):
        self.dbs = dbs
        self.api_level = api_level
        self.per_cell = per_cell
        self.overrides = FLEET_OPTIONS + list(overrides)
        self.workdir = workdir
        self.vhosts, self.services, self.cell_services = [], [], []
        self.api_bus = self.counters = None
        self.load_s = None

    def __enter__(self):
        try:
            self._start()
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(self, *exc_info):
        self._stop()

    def _bus(self):
        self.vhosts.append(rabbit_vhosts.create('cellboot-race'))
        return rabbit_vhosts.url(self.vhosts[-1])

    def _sections(self, name, bus):
        from oslo_log import log

        state = os.path.join(self.workdir, name)
        os.makedirs(state, exist_ok=True)
        sections = {'DEFAULT': {
            'state_path': state, 'host': name, 'transport_url': bus,
            'default_log_levels': ','.join(
                QUIET_LOGGERS + log.get_default_log_levels())}}
        for group, option, value in self.overrides:
            sections.setdefault(group, {})[option] = value
        return sections

    def _start_service(self, name, sections, *args):
        path = os.path.join(self.workdir, f'{name}.conf')
        with open(path, 'w') as conf:
            conf.write(_conf_text(sections))
        service = service_processes.ServiceProcess(
            name, service_processes.command(
                'cellboot.cmd.scheduler', '--config-file', path, *args),
            os.path.join(self.workdir, f'{name}.log'), env=_env())
        self.services.append(service)
        return service

    def _start(self):
        started = time.perf_counter()
        self.api_bus = self._bus()
        cell_buses = {name: self._bus() for name in self.dbs.cell_names}
        scheduler_fleet.set_transport_urls(self.dbs, cell_buses)
        for cell, url in zip(self.dbs.cell_names, self.dbs.cell_urls):
            for index in range(1, self.per_cell + 1):
                name = f'scheduler-{cell}-{index}'
                sections = self._sections(name, cell_buses[cell])
                sections.setdefault('database', {})['connection'] = url
                self.cell_services.append(
                    self._start_service(name, sections, '--cell', cell))
        self._wait(self.cell_services)
        api_services = []
        for index in range(1, self.api_level + 1):
            name = f'scheduler-api-{index}'
            sections = self._sections(name, self.api_bus)
            sections.setdefault('api_database', {})['connection'] = \
                self.dbs.api_url
            api_services.append(self._start_service(name, sections))
        self._wait(api_services)
        self.load_s = round(time.perf_counter() - started, 1)

    def _wait(self, services):
        try:
            service_processes.wait_ready(services)
        except AssertionError as exc:
            failed = [s for s in services if not s.alive()]
            last = failed[0].log().strip().splitlines()[-1:] if failed \
                else []
            raise StartFailed(' '.join(
                [str(exc).splitlines()[0]] + last
                + [f'(logs in {self.workdir})'])) from None

    def _stop(self):
        try:
            service_processes.stop_all(self.services)
        finally:
            for vhost in self.vhosts:
                rabbit_vhosts.delete(vhost)
        self.counters = {}
        for service in self.services:
            lines = scheduler_cmd.parse_counters(service.log())
            self.counters[service.name] = lines[-1] if lines else None

    def cpu_ms(self):
        """CPU ms the services have used so far, all together."""
        return sum(deployment_cost_cpu.process_cpu_ms(service.process.pid)
                   for service in self.services)


def _drive(bus, requests, clients):
    """``requests`` single-instance calls from ``clients`` threads that
    start together; ``(seconds, latencies, placed, rejected,
    unavailable, errors)``, errors being what else the calls raised."""
    from cellboot import context
    from cellboot import rpc
    from cellboot.scheduler import rpcapi

    _configure_client()
    api = rpcapi.SchedulerRPCAPI(rpc.get_transport(bus))
    ctx = context.get_admin_context()
    barrier = threading.Barrier(clients)
    spans, errors = [], []

    def client(share):
        barrier.wait()
        began = time.perf_counter()
        outcome = scheduler._select_loop(api, ctx, share, errors)
        spans.append((began, time.perf_counter()))
        return outcome

    try:
        with concurrent.futures.ThreadPoolExecutor(clients) as pool:
            outcomes = list(pool.map(client, scheduler._shares(requests,
                                                               clients)))
    finally:
        rpc.cleanup()   # before the vhost goes
    seconds = max(end for _, end in spans) - min(start for start, _ in spans)
    return (seconds, [lat for o in outcomes for lat in o[0]],
            *(sum(o[i] for o in outcomes) for i in (1, 2, 3)), errors)


def _summed(lines, key):
    return sum(line.get(key, 0) for line in lines)


def _worst(lines, key):
    values = [line[key] for line in lines if key in line]
    return max(values) if values else None


def run(dbs, api_level, per_cell, requests, clients, overrides, workdir):
    """One race of services on the fleet of ``dbs``; its figures (the
    keys of ``scheduler.run_concurrent``'s, and the services')."""
    with Services(dbs, api_level, per_cell, overrides, workdir) as services:
        cpu_before = services.cpu_ms()
        seconds, latencies, placed, rejected, unavailable, errors = \
            _drive(services.api_bus, requests, clients)
        cpu = services.cpu_ms() - cpu_before
    cells = [services.counters[s.name] for s in services.cell_services]
    apis = [services.counters[s.name] for s in services.services
            if s not in services.cell_services]
    silent = sorted(name for name, line in services.counters.items()
                    if line is None)
    cells, apis = [c for c in cells if c], [a for a in apis if a]
    return dict(
        requests=requests, api_level=api_level, per_cell=per_cell,
        clients=clients, placed=placed, rejected=rejected,
        unavailable=unavailable,
        overcommitted_providers=scheduler_fleet.overcommitted_providers(
            dbs.cell_urls),
        holding_consumers=scheduler_fleet.consumers(dbs.cell_urls),
        decisions_per_s=round(requests / seconds, 1),
        cpu_ms=round(cpu / requests, 3), load_s=services.load_s,
        claims_tried=_summed(cells, 'claims_tried'),
        failed_claims=_summed(cells, 'failed_claims'),
        conflicts=_summed(cells, 'generation_conflicts'),
        db_retries=_summed(cells + apis, 'db_retries'),
        sync_pulls=_summed(cells, 'sync_pulls'),
        sync_seen=_summed(cells, 'sync_seen'),
        sync_errors=_summed(cells, 'sync_errors'),
        sync_lag_p50_ms=_worst(cells, 'sync_lag_p50_ms'),
        sync_lag_p99_ms=_worst(cells, 'sync_lag_p99_ms'),
        sync_view_age_p50_ms=_worst(cells, 'sync_view_age_p50_ms'),
        sync_view_age_p99_ms=_worst(cells, 'sync_view_age_p99_ms'),
        api_requests_placed=_summed(apis, 'requests_placed'),
        extra_cells_per_request=round((
            _summed(apis, 'cells_refused')
            + _summed(apis, 'cells_unreachable')) / requests, 4),
        failed_claims_per_cell_scheduler=[
            line.get('failed_claims') for line in cells],
        silent_services=silent, errors=len(errors),
        first_error=str(errors[0])[:300] if errors else None,
        **scheduler._latency_stats(latencies))


def check(result):
    """What only a race of services can break; sentences."""
    broken = []
    if result['errors']:
        broken.append(f'{result["errors"]} request(s) failed otherwise '
                      f'than NoValidHost, the first: '
                      f'{result["first_error"]}')
    if result['silent_services']:
        broken.append(f'no counters logged at stop by '
                      f'{", ".join(result["silent_services"])}')
    if result['claims_tried'] != result['placed'] + result['failed_claims']:
        broken.append(f'the cell schedulers tried {result["claims_tried"]} '
                      f'claims for {result["placed"]} placed and '
                      f'{result["failed_claims"]} failed')
    if result['api_requests_placed'] != result['placed']:
        broken.append(f'the API levels placed '
                      f'{result["api_requests_placed"]}, the clients got '
                      f'{result["placed"]}')
    return broken
