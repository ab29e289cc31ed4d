"""An in-process cellboot deployment on SQLite files and ``fake://``.

(Or on MariaDB/PostgreSQL databases of the local server: ``backend``.)

``Cluster`` is a fixture: an API database, a flow database, cell0 and
``cells`` cells (each database synced with ``cellboot.db.migration``,
TaskFlow's tables included), their cell mappings, the scheduler behind
its RPC service, the super conductor, one conductor per cell and
``hosts_per_cell`` compute hosts per cell with the fake driver, their
hosts discovered. Every service talks over the one ``fake://`` bus the
way the real ones talk over RabbitMQ: clients, servers, topics per cell,
the RPC serializer. The cells share the API's bus (as a single-vhost
deployment does), so their services reach the scheduler on their own
cell's topic, with that cell's rights (``cellboot.scheduler.doors``).
A test boots the way the API does (``boot``), waits for the deployment
to go quiet (``wait_for_quiet``) and checks the invariants::

    cluster = self.useFixture(cluster.Cluster(cells=2, hosts_per_cell=2))
    uuids = cluster.boot(count=3)
    cluster.wait_for_quiet()
    self.assertEqual([], invariants.check_invariants(cluster.ctx))

One process has one configuration, so what a real cell service reads
from its own ``[database] connection`` is given explicitly here: each
cell conductor gets its cell's database, and each compute endpoint sees
its requests' contexts targeted at its cell's database (``_Endpoint``).
Heartbeats are not started; ``[scheduler] service_down_time`` is raised
so that the hosts stay up for the life of the cluster.
"""

import collections
import os
import threading
import time

import fixtures
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.cells import discovery
from cellboot.compute import manager as compute_manager
from cellboot.conductor import manager as conductor_manager
from cellboot.conductor import rpcapi as conductor_rpcapi
from cellboot.compute import rpcapi as compute_rpcapi
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db.api import connection as api_connection
from cellboot.db.api import models as api_models
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot.flowrun import backend as flow_db
from cellboot.db import migration
from cellboot import exception
from cellboot.objects import build_request
from cellboot.objects import cell_mapping
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_fault
from cellboot.objects import instance_mapping
from cellboot.objects import request_spec
from cellboot import rpc
from cellboot.rpc import topics
from cellboot.scheduler import api as scheduler_api
from cellboot.scheduler import doors
from cellboot.scheduler import rpc_endpoint
from cellboot.scheduler import rpcapi as scheduler_rpcapi
from cellboot.scheduler.resources import usage
from cellboot import service
from cellboot.flowrun import lookup
from tests import fixtures as cb_fixtures
from tests.functional import invariants

TRANSPORT_URL = 'fake://'

FLAVOR = {'flavorid': 'small', 'name': 'small', 'vcpus': 1,
          'memory_mb': 512, 'root_gb': 10}

_INSTANCES = cell_models.Instance.__table__

# How long a scenario may take to settle, and how often to look.
QUIET_TIMEOUT = 60
POLL_SECONDS = 0.05


def persist_request(ctx, count=1, flavor=None, **spec_values):
    """Persist a request of ``ctx``'s user the way the API does.

    Build requests, request specs and instance mappings (no cell yet),
    one of each per instance. Returns ``(build_requests,
    request_specs)``, the arguments of ``schedule_and_build_instances``.
    Shared with the multi-process tests, which boot the same way.
    """
    flavor = dict(flavor or FLAVOR)
    spec = dict(spec_values, flavor=flavor, num_instances=count,
                project_id=ctx.project_id, user_id=ctx.user_id)
    reservation_id = 'r-' + uuidutils.generate_uuid()[:8]
    build_requests = []
    for index in range(count):
        uuid = uuidutils.generate_uuid()
        instance = {'uuid': uuid, 'display_name': f'server-{index}',
                    'reservation_id': reservation_id, 'flavor': flavor,
                    'image_ref': 'cirros', 'metadata': {}}
        build_request.BuildRequest.create(
            ctx, uuid, ctx.project_id, instance, user_id=ctx.user_id)
        request_spec.RequestSpec.create(ctx, uuid, spec)
        instance_mapping.InstanceMapping.create(
            ctx, uuid, ctx.project_id, user_id=ctx.user_id,
            vcpus=flavor['vcpus'], memory_mb=flavor['memory_mb'])
        build_requests.append({'instance_uuid': uuid,
                               'project_id': ctx.project_id,
                               'user_id': ctx.user_id,
                               'instance': instance})
    return build_requests, [spec] * count


class _InFlight:
    """Counts the RPC requests being handled, and records who got what."""

    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.handled = 0
        self.methods = collections.defaultdict(list)

    def enter(self, server, method):
        with self._lock:
            self.count += 1
            self.methods[server].append(method)

    def exit(self):
        with self._lock:
            self.count -= 1
            self.handled += 1


class _Endpoint:
    """An RPC endpoint seen through the cluster: counted, maybe targeted.

    Every request is counted while it is handled (``wait_for_quiet``)
    and recorded under its server's name (``Cluster.handled``); with
    ``cell``, its context is targeted at that cell's database first, as
    the local ``[database] connection`` of a real compute host of that
    cell would be.
    """

    def __init__(self, endpoint, in_flight, server, cell=None):
        self._endpoint = endpoint
        self._in_flight = in_flight
        self._server = server
        self._cell = cell
        self.target = endpoint.target

    def __getattr__(self, name):
        method = getattr(self._endpoint, name)
        if name.startswith('_') or not callable(method):
            return method

        def handle(ctxt, **kwargs):
            self._in_flight.enter(self._server, name)
            try:
                if self._cell is not None:
                    ctxt = cb_context.targeted_copy(ctxt, self._cell)
                return method(ctxt, **kwargs)
            finally:
                self._in_flight.exit()
        # Served under ExplicitRPCAccessPolicy: keep the method's mark.
        handle.exposed = getattr(method, 'exposed', False)
        return handle


class Cluster(fixtures.Fixture):
    """A whole deployment in this process; see the module docstring."""

    def __init__(self, cells=2, hosts_per_cell=2, vcpus=8, memory_mb=8192,
                 local_gb=200, host_capacity=None, persist_flows=True,
                 backend='sqlite'):
        """``host_capacity``: ``{host: {'vcpus': ..., ...}}`` for hosts
        that differ from the others (hosts are named ``cell1-host1``...).
        ``backend``: 'sqlite' (files in a temporary directory), 'mysql'
        or 'postgresql' (throw-away databases on the local server, see
        ``tests.fixtures.Database``).
        """
        super().__init__()
        self.backend = backend
        self.cell_count = cells
        self.hosts_per_cell = hosts_per_cell
        self.capacity = {'vcpus': vcpus, 'memory_mb': memory_mb,
                         'local_gb': local_gb}
        self.host_capacity = dict(host_capacity or {})
        self.persist_flows = persist_flows

    # -- set-up ------------------------------------------------------------

    def _setUp(self):
        self.state_path = self.useFixture(fixtures.TempDir()).path
        # Before _stop is registered: dropped only once the services
        # that use them have stopped.
        self._server_urls = {}
        if self.backend != 'sqlite':
            for name in ['api', 'flows', 'cell0'] + [
                    f'cell{i + 1}' for i in range(self.cell_count)]:
                self._server_urls[name] = self.useFixture(
                    cb_fixtures.Database(self.backend)).url
        self.in_flight = _InFlight()
        self._services = []
        self.addCleanup(self._stop)
        self._configure()
        self._create_databases()
        self.ctx = cb_context.RequestContext(user_id='alice',
                                             project_id='project-a')
        self._map_cells()
        self.transport = rpc.get_transport(TRANSPORT_URL)
        self._start_scheduler()
        self.computes = {}
        for cell in self.cells:
            self._start_cell(cell)
        discovery.discover_hosts(self.ctx)
        self.scheduler.refresh(self.ctx)
        self._start_super_conductor()
        self.conductor_api = conductor_rpcapi.ConductorAPI(self.transport)

    def _url(self, name):
        if name in self._server_urls:
            return self._server_urls[name]
        return 'sqlite:///' + os.path.join(self.state_path, name + '.sqlite')

    def _configure(self):
        self.api_url = self._url('api')
        self.flow_url = self._url('flows')
        self.cell0_url = self._url('cell0')
        self.cell_urls = [self._url(f'cell{i + 1}')
                          for i in range(self.cell_count)]
        CONF.set_override('state_path', self.state_path)
        CONF.set_override('transport_url', TRANSPORT_URL)
        CONF.set_override('connection', self.api_url, group='api_database')
        CONF.set_override('connection', self.flow_url,
                          group='flow_persistence')
        CONF.set_override('connection', self.cell_urls[0], group='database')
        CONF.set_override('persist_flows', self.persist_flows,
                          group='conductor')
        CONF.set_override('service_down_time', 24 * 3600, group='scheduler')
        CONF.set_override('host_state_refresh_interval', 0,
                          group='scheduler')
        self._set_capacity(self.capacity)
        api_connection.reset()
        cell_connection.reset()

    @staticmethod
    def _set_capacity(capacity):
        """What the fake driver reports ([compute]) for the next host."""
        for name, value in capacity.items():
            CONF.set_override(name, value, group='compute')

    def _create_databases(self):
        migration.db_sync('api', self.api_url)
        migration.sync_flow_database(self.flow_url)
        for url in [self.cell0_url] + self.cell_urls:
            migration.sync_cell_database(url)

    def _map_cells(self):
        self.cell0 = cell_mapping.CellMapping.create(
            self.ctx, 'cell0', self.cell0_url, 'none:///',
            uuid=api_models.CELL0_UUID)
        self.cells = [
            cell_mapping.CellMapping.create(self.ctx, f'cell{i + 1}', url,
                                            TRANSPORT_URL)
            for i, url in enumerate(self.cell_urls)]

    def _serve(self, host, topic, endpoint, cell=None):
        server = service.RPCService(
            host, topic, [_Endpoint(endpoint, self.in_flight, host, cell)],
            self.transport)
        server.start()
        self._services.append(server)
        return server

    def _start_scheduler(self):
        self.scheduler = scheduler_api.SchedulerAPI()
        self.scheduler.start(self.ctx, refresh_interval=0)
        for door in doors.plan(self.ctx, 'scheduler'):
            self._serve('scheduler', door.topic,
                        rpc_endpoint.SchedulerEndpoint(self.scheduler,
                                                       door.access))

    def _start_cell(self, cell):
        scheduler = scheduler_rpcapi.SchedulerRPCAPI(self.transport,
                                                     cell_name=cell.name)
        conductor = conductor_manager.CellConductorManager(
            cell_name=cell.name, database_connection=cell.database_connection,
            scheduler=scheduler,
            compute_rpcapi=compute_rpcapi.ComputeAPI(cell.name,
                                                     self.transport))
        self._serve(f'conductor-{cell.name}', topics.cell_conductor(cell.name),
                    conductor)
        for index in range(self.hosts_per_cell):
            host = f'{cell.name}-host{index + 1}'
            manager = compute_manager.ComputeManager(
                host, scheduler,
                conductor_rpcapi.CellConductorAPI(cell.name, self.transport),
                cell_name=cell.name)
            self._set_capacity(dict(self.capacity,
                                    **self.host_capacity.get(host, {})))
            manager.init_host(cb_context.targeted_copy(
                cb_context.get_admin_context(), cell))
            self._set_capacity(self.capacity)
            self.computes[host] = manager
            self._serve(host, topics.compute(cell.name),
                        compute_manager.ComputeEndpoint(manager), cell=cell)

    def _start_super_conductor(self):
        self.super_conductor = conductor_manager.SuperConductorManager(
            scheduler=self.scheduler)
        self._serve('conductor', topics.CONDUCTOR, self.super_conductor)

    def _stop(self):
        for server in reversed(self._services):
            server.stop()
        for server in reversed(self._services):
            server.wait()
        scheduler = getattr(self, 'scheduler', None)
        if scheduler is not None:
            scheduler.stop()
        rpc.cleanup()
        api_connection.reset()
        cell_connection.reset()
        flow_db.reset()

    # -- driving it ----------------------------------------------------------

    def build_request(self, count=1, flavor=None, **spec_values):
        """Persist a request the way the API does; return its payloads.

        Returns ``(build_requests, request_specs)``, the arguments of
        ``schedule_and_build_instances``.
        """
        return persist_request(self.ctx, count, flavor, **spec_values)

    def boot(self, count=1, flavor=None, **spec_values):
        """Request ``count`` servers and cast the request; their uuids."""
        build_requests, specs = self.build_request(count, flavor,
                                                   **spec_values)
        self.conductor_api.schedule_and_build_instances(
            self.ctx, build_requests, specs)
        return [br['instance_uuid'] for br in build_requests]

    def _is_quiet(self):
        if self.in_flight.count:
            return False
        if any(self._building(cell) for cell in self.cells):
            return False
        return not build_request.BuildRequest.get_all(self.ctx)

    @staticmethod
    def _building(cell):
        """How many live instances of ``cell`` are being built."""
        engine = cell_connection.get_engine(cell.database_connection)
        with engine.connect() as conn:
            return conn.execute(
                sa.select(sa.func.count()).select_from(_INSTANCES).where(
                    _INSTANCES.c.vm_state == instance_obj.vm_states.BUILDING,
                    _INSTANCES.c.deleted == sa.false())).scalar()

    def wait_for_quiet(self, timeout=QUIET_TIMEOUT):
        """Wait until no request is handled and no build is under way.

        Quiet means: no RPC request in any service, no instance building
        in any cell and no build request left, seen twice in a row with
        no request handled in between (a cast in the bus is picked up
        within a poll).
        """
        deadline = time.monotonic() + timeout
        quiet_since = None
        while time.monotonic() < deadline:
            handled = self.in_flight.handled
            if self._is_quiet():
                if quiet_since == handled:
                    return
                quiet_since = handled
            else:
                quiet_since = None
            time.sleep(POLL_SECONDS)
        raise AssertionError(
            f'the cluster did not go quiet within {timeout} s: '
            f'{invariants.check_invariants(self.ctx)}')

    # -- reading back --------------------------------------------------------

    def cell_by_name(self, name):
        for cell in [self.cell0] + self.cells:
            if cell.name == name:
                return cell
        raise exception.CellMappingNotFound(cell=name)

    def find(self, uuid):
        """``(cell mapping, Instance)``; a deleted instance is found too."""
        for cell in [self.cell0] + self.cells:
            with cb_context.target_cell(self.ctx, cell) as cctxt:
                try:
                    return cell, instance_obj.Instance.get_by_uuid(
                        cctxt, uuid, read_deleted=True)
                except exception.InstanceNotFound:
                    continue
        raise exception.InstanceNotFound(uuid=uuid)

    def fault(self, uuid):
        """The instance's latest fault, wherever it lives (or None)."""
        cell, _instance = self.find(uuid)
        with cb_context.target_cell(self.ctx, cell) as cctxt:
            return instance_fault.InstanceFault.get_latest_for_instances(
                cctxt, [uuid]).get(uuid)

    def handled(self, server):
        """The RPC methods ``server`` (a host name) was asked, in order."""
        return list(self.in_flight.methods[server])

    def flows(self, uuid):
        """Summaries of every flow about the instance, oldest first."""
        return lookup.find_flows_everywhere(self.ctx, instance_uuid=uuid)

    def allocations(self, uuid):
        """``{provider uuid: {rc: amount}}`` the instance holds."""
        return usage.get_allocations_for_consumer(self.ctx, uuid)
