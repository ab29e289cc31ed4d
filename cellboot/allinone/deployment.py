"""A whole cellboot deployment in one process: the one composition.

The composition of everything ``cellboot all-in-one`` runs: the API,
flow, cell0 and cell databases (by default SQLite files under one state
directory), created and synced when missing and reused when present
(``cellboot.db.migration`` and ``cellboot-manage``'s cell functions, the
same code an operator runs); per cell, its scheduler, one conductor and
``hosts_per_cell`` compute hosts; the API level's scheduler (which asks
the cells' schedulers of this process directly); the super conductor; a
flavor; and the REST API on a port.

Every service talks over ``fake://`` buses the way separate processes
talk over RabbitMQ: the API level on ``fake://``, each cell on a bus of
its own (``fake:///<cell>``, as a vhost per cell), where the cell's
scheduler serves the cell's services on the cell's scheduler topic. A
state directory made before cells had buses of their own keeps its
cells on ``fake://``, the API's bus, where they call their cell's
scheduler on their own topic all the same. One process
has one configuration, so what a real cell service reads from its own
``[database] connection`` and ``[DEFAULT] transport_url`` is given
explicitly: each cell conductor gets its cell's database and bus, each
compute host its cell's bus, and targets the contexts it works with at
its own cell (``cell_compute.CellComputeManager``).

This is the only place that wires a whole deployment in one process:
the functional tests' cluster and the end-to-end benchmark start this
same ``Deployment`` and change what they need through
``cellboot.allinone.hooks.Hooks`` (databases on a server, one shared
bus or a broker, a virt driver per host, an observer around each RPC
endpoint, the HTTP server) and through ordinary configuration options.
"""

import os
import threading

from oslo_log import log as logging

from cellboot.allinone import cell_compute
from cellboot.allinone import hooks as hooks_mod
from cellboot.allinone import startup
from cellboot.cells import discovery
from cellboot.cells import mappings as cells
from cellboot.compute import host as compute_host
from cellboot.compute import rpc_endpoint as compute_endpoint
from cellboot.compute import rpcapi as compute_rpcapi
from cellboot.conductor import handbacks
from cellboot.conductor import manager as conductor_manager
from cellboot.conductor import rpcapi as conductor_rpcapi
from cellboot.conf import CONF
from cellboot.console import output
from cellboot import context as cb_context
from cellboot.db.api import connection as api_connection
from cellboot.db.cell import connection as cell_connection
from cellboot.flowrun import backend as flow_db
from cellboot.db import migration
from cellboot.db import pools
from cellboot import exception
from cellboot.flowrun import schema as flow_schema
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.objects import flavor as flavor_obj
from cellboot import rpc
from cellboot.rpc import topics
from cellboot.scheduler import in_process
from cellboot.scheduler import rpc_endpoint
from cellboot.scheduler import rpcapi as scheduler_rpcapi
from cellboot import service

LOG = logging.getLogger(__name__)

# The flavor a fresh deployment offers, so the demo needs no set-up.
DEFAULT_FLAVOR = {'name': 'small', 'flavorid': 'small', 'vcpus': 1,
                  'memory_mb': 512, 'root_gb': 1}

# Hosts heartbeat, but nothing in one process can die on its own: a
# laptop that sleeps must not find its hosts "down" when it wakes up.
SERVICE_DOWN_TIME = 24 * 3600


def host_name(cell_name, index):
    """The name of the ``index``-th (from 1) compute host of a cell."""
    return f'{cell_name}-host{index}'


def cell_name(index):
    """The name of the ``index``-th (from 1) cell."""
    return f'cell{index}'


class Deployment:
    """Everything of a deployment, started in dependency order.

    ``progress`` is called with one line per step, so a command can show
    what it is doing while it starts. ``port`` 0 picks a free port (read
    it back from ``port`` once started); None serves no REST API (a
    caller that drives the conductors itself). ``fail_hosts`` sets
    ``[fake_driver] fail_hosts`` (None leaves it as configured).
    ``flavor`` is the flavor created when missing (default
    ``DEFAULT_FLAVOR``); ``persist_flows`` sets ``[conductor]
    persist_flows`` (None leaves it as configured); ``hooks`` is a
    ``cellboot.allinone.hooks.Hooks`` (default: all-in-one's choices).

    Once started: ``cells`` (mappings, cell0 apart in ``cell0``),
    ``computes`` (``{host: compute manager}``), ``cell_schedulers``
    (``{cell name: CellScheduler}``), ``scheduler`` (the API level's),
    ``super_conductor``, ``transport`` (the API
    level's bus), ``conductor_api`` (the client the API casts with),
    ``api_url``/``flow_url``, and with a port ``application`` (the WSGI
    application) and ``api_server``.
    """

    def __init__(self, state_dir, cells=2, hosts_per_cell=4, port=8774,
                 fail_hosts=None, progress=None, api_host='127.0.0.1',
                 flavor=None, persist_flows=None, hooks=None):
        if cells < 1:
            raise exception.ConfigurationError(
                reason='--cells must be at least 1')
        if hosts_per_cell < 1:
            raise exception.ConfigurationError(
                reason='--hosts-per-cell must be at least 1')
        self.state_dir = os.path.abspath(state_dir)
        self.cell_count = cells
        self.hosts_per_cell = hosts_per_cell
        self.port = port
        self.api_host = api_host
        self.fail_hosts = None if fail_hosts is None else list(fail_hosts)
        self.flavor = dict(flavor or DEFAULT_FLAVOR)
        self.persist_flows = persist_flows
        self.hooks = hooks or hooks_mod.Hooks()
        self._progress = progress or (lambda line: None)
        self.ctx = cb_context.get_admin_context()
        self.cell0 = None
        self.cells = []
        self.computes = {}
        self.schedulers = in_process.InProcessSchedulers()
        self.cell_schedulers = self.schedulers.cells
        self.scheduler = None
        self.application = None
        self.api_server = None
        self._services = []
        self._scheduler_servers = []

    # -- starting ----------------------------------------------------------

    def start(self):
        """Create or reuse the databases, then start every service."""
        try:
            self._configure()
            self._prepare_databases()
            self._map_cells()
            self._ensure_flavor()
            self.transport = rpc.get_transport(self.hooks.transport_url)
            self.conductor_api = conductor_rpcapi.ConductorAPI(
                self.transport)
            self.scheduler = self.schedulers.top
            for cell in self.cells:
                self._start_cell(cell)
            self._discover_hosts()
            self._start_super_conductor()
            if self.port is not None:
                self._start_api()
        except BaseException:
            self.stop()
            raise

    def database_url(self, name):
        """The URL of database ``name`` (``api``, ``flows``, ``cell0``...)."""
        return self.hooks.database_url(self.state_dir, name)

    def _configure(self):
        os.makedirs(self.state_dir, exist_ok=True)
        pools.serve_as('all-in-one')
        self.api_url = self.database_url('api')
        self.flow_url = self.database_url('flows')
        CONF.set_override('state_path', self.state_dir)
        CONF.set_override('transport_url', self.hooks.transport_url)
        CONF.set_override('connection', self.api_url, group='api_database')
        CONF.set_override('connection', self.flow_url,
                          group='flow_persistence')
        CONF.set_override('connection', self.database_url(cell_name(1)),
                          group='database')
        CONF.set_override('service_down_time', SERVICE_DOWN_TIME,
                          group='scheduler')
        if self.fail_hosts is not None:
            CONF.set_override('fail_hosts', self.fail_hosts,
                              group='fake_driver')
        if self.persist_flows is not None:
            CONF.set_override('persist_flows', self.persist_flows,
                              group='conductor')
        api_connection.reset()
        cell_connection.reset()
        self._progress(f'State directory {self.state_dir}')

    def _prepare_databases(self):
        migration.db_sync('api', self.api_url)
        flow_schema.sync_flow_database(self.flow_url)
        self._progress('API and flow databases synced')

    def _map_cells(self):
        self.cell0, created = cells.map_cell0(
            self.ctx, self.database_url('cell0'))
        flow_schema.sync_cell_database(self.cell0.database_connection)
        self._progress(f'cell0 {"mapped" if created else "reused"}')
        for index in range(1, self.cell_count + 1):
            self.cells.append(self._cell(cell_name(index)))

    def _cell(self, name):
        try:
            cell = cell_mapping_obj.CellMapping.get_by_name(self.ctx, name)
        except exception.CellMappingNotFound:
            url = self.database_url(name)
            flow_schema.sync_cell_database(url)
            cell = cells.create_cell(
                self.ctx, name, url, self.hooks.cell_transport_url(name),
                allow_shared_transport=self.hooks.cells_share_bus)
            self._progress(f'{name} created ({cell.uuid})')
            return cell
        flow_schema.sync_cell_database(cell.database_connection)
        self._progress(f'{name} reused ({cell.uuid})')
        return cell

    def _ensure_flavor(self):
        flavor = self.flavor
        try:
            flavor_obj.Flavor.get_by_flavor_id(self.ctx, flavor['flavorid'])
        except exception.FlavorNotFound:
            try:
                flavor_obj.Flavor.create(
                    self.ctx, flavor['name'], flavor['vcpus'],
                    flavor['memory_mb'], root_gb=flavor['root_gb'],
                    flavorid=flavor['flavorid'])
            except exception.FlavorExists:
                pass

    def _rpc_service(self, host, topic, endpoint, transport=None):
        """An RPC server of ``endpoint`` as the hooks would have it."""
        return service.RPCService(host, topic,
                                  [self.hooks.endpoint(host, endpoint)],
                                  transport or self.transport)

    def _serve(self, host, topic, endpoint, transport=None):
        server = self._rpc_service(host, topic, endpoint, transport)
        server.start()
        self._services.append(server)
        return server

    def _start_cell_scheduler(self, cell, transport):
        """The cell's scheduler, served on its bus and known to the API
        level's scheduler as a scheduler of this process."""
        scheduler = self.schedulers.add_cell(cell)
        scheduler.start(self.ctx)
        self._scheduler_servers.append(self._serve(
            f'scheduler-{cell.name}', topics.scheduler(cell.name),
            rpc_endpoint.CellSchedulerEndpoint(scheduler), transport))

    def _start_cell(self, cell):
        transport = rpc.get_cell_transport(cell)
        self._start_cell_scheduler(cell, transport)
        scheduler = scheduler_rpcapi.CellSchedulerRPCAPI(transport,
                                                         cell.name)
        conductor = conductor_manager.CellConductorManager(
            cell_name=cell.name, database_connection=cell.database_connection,
            scheduler=scheduler,
            compute_rpcapi=compute_rpcapi.ComputeAPI(cell.name, transport),
            handback_rpcapi=conductor_rpcapi.HandBackAPI(cell.name,
                                                         transport))
        self._serve(f'conductor-{cell.name}', topics.cell_conductor(cell.name),
                    conductor, transport)
        for index in range(1, self.hosts_per_cell + 1):
            self._start_compute(cell, host_name(cell.name, index), scheduler,
                                transport)
        self._progress(f'{cell.name}: scheduler, conductor and '
                       f'{output.plural(self.hosts_per_cell, "compute host")}'
                       f' started')

    def _start_compute(self, cell, host, scheduler, transport):
        manager = cell_compute.CellComputeManager(
            cell, host, scheduler,
            conductor_rpcapi.CellConductorAPI(cell.name, transport),
            driver=self.hooks.driver(host))
        rpc_service = self._rpc_service(
            host, topics.compute(cell.name),
            compute_endpoint.ComputeEndpoint(manager), transport)
        compute = compute_host.ComputeHost(
            manager, rpc_service, cb_context.targeted_copy(self.ctx, cell))
        compute.start()
        self._services.append(compute)
        self.computes[host] = manager

    def _discover_hosts(self):
        for report in discovery.discover_hosts(self.ctx):
            if report.failure is not None:
                raise exception.ConfigurationError(
                    reason=f'host discovery failed in cell '
                           f'{report.cell.name}: {report.failure}')
        # The hosts reported their providers; load them now rather than
        # at the next refresh, so the first boot sees every host.
        for scheduler in self.cell_schedulers.values():
            scheduler.refresh(self.ctx)
        self.scheduler.start(self.ctx)
        self._progress(f'{output.plural(len(self.computes), "host")} mapped '
                       f'to their cells')

    def _start_super_conductor(self):
        self.super_conductor = conductor_manager.SuperConductorManager(
            scheduler=self.scheduler)
        self._serve('conductor', topics.CONDUCTOR, self.super_conductor)
        for cell in self.cells:
            self._serve(f'super-conductor-{cell.name}',
                        topics.super_conductor(cell.name),
                        handbacks.HandBackEndpoint(self.super_conductor,
                                                   cell),
                        rpc.get_cell_transport(cell))
        resumed = self.super_conductor.runner.resume_unfinished() + \
            self.super_conductor.cross_cell_runner.resume_unfinished()
        self._progress('Super conductor started' + (
            f', {output.plural(resumed, "unfinished flow")} resumed'
            if resumed else ''))

    def _start_api(self):
        # Imported here: the API pulls in webob and jsonschema, which
        # the rest of the composition does not need.
        from cellboot.api import wsgi as api_wsgi
        self.application = api_wsgi.make_app(self.scheduler,
                                             conductor=self.conductor_api)
        try:
            self.api_server = self.hooks.api_server(
                self.application, self.api_host, self.port)
        except OSError as exc:
            raise startup.cannot_listen(self.api_host, self.port, exc)
        self.port = self.api_server.port
        self.api_server.start()
        self._progress(f'API listening on {self.url}')

    @property
    def url(self):
        return f'http://{self.api_host}:{self.port}/v2.1'

    # -- stopping ----------------------------------------------------------

    def stop(self):
        """Stop the API and every service; wait for all.

        In two rounds: first everything but the cells' schedulers, whose
        builds and flows in flight finish meanwhile, then the schedulers.
        A compute host ends a build by calling its cell's scheduler
        (``record_build_result``) and a cell conductor claims through it:
        with the schedulers stopped first, such a call would wait for its RPC
        timeout (a minute) before the host could stop. Within a round,
        each RPC server takes up to a second to notice it was stopped
        (the fake driver's poll), so they are waited for in parallel.
        """
        last = [server for server in self._services
                if server in self._scheduler_servers]
        first = [server for server in reversed(self._services)
                 if server not in self._scheduler_servers]
        if self.api_server is not None:
            first.insert(0, self.api_server)
            self.api_server = None
        self._services = []
        self._scheduler_servers = []
        _stop_and_wait(first)
        _stop_and_wait(last)
        self.schedulers.stop()
        self.scheduler = None
        rpc.cleanup()
        api_connection.reset()
        cell_connection.reset()
        flow_db.reset()


def _stop_and_wait(servers):
    """Stop ``servers``, then wait for all of them at once."""
    for server in servers:
        server.stop()
    waiters = [threading.Thread(target=server.wait, daemon=True)
               for server in servers]
    for waiter in waiters:
        waiter.start()
    for waiter in waiters:
        waiter.join()
