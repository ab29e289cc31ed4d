"""The whole deployment of ``cellboot all-in-one``, as a test fixture.

``Cluster`` starts ``cellboot.allinone.deployment.Deployment``, the one
composition of a deployment in a process, with the hooks a test needs:
an API database, a flow database, cell0 and ``cells`` cells as SQLite
files in a temporary directory (or throw-away MariaDB/PostgreSQL
databases of the local server: ``backend``), each synced with
``cellboot.db.migration``, TaskFlow's tables included; per cell its
scheduler (``cell_schedulers``) behind its RPC service, one conductor and
``hosts_per_cell`` compute hosts; the API level's scheduler
(``scheduler``) and the super conductor. The compute hosts are the
per-cell compute manager all-in-one ships, heartbeating, with the fake
driver, their hosts discovered. Every service talks over the one
``fake://`` bus the way the real ones talk over RabbitMQ: clients,
servers, topics per cell, the RPC serializer. The cells share the API's
bus (as a single-vhost deployment does), so their services reach their
cell's scheduler on their own cell's topic. Every RPC endpoint is
observed (``_Endpoint``): what it is asked is recorded, and the requests
in flight tell when the deployment has gone quiet.

A test boots the way the API does (``boot``: the API's own
``cellboot.api.boot_requests``, then the cast), waits for the deployment
to go quiet (``wait_for_quiet``) and checks the invariants::

    cluster = self.useFixture(cluster.Cluster(cells=2, hosts_per_cell=2))
    uuids = cluster.boot(count=3)
    cluster.wait_for_quiet()
    self.assertEqual([], invariants.check_invariants(cluster.ctx))

``[scheduler] service_down_time`` is raised so that the hosts stay up
for the life of the cluster, and the scheduler's host states are
refreshed on demand, not by a timer.
"""

import collections
import threading
import time

import fixtures
import sqlalchemy as sa

from cellboot.allinone import deployment
from cellboot.allinone import hooks
from cellboot.api import boot_requests
from cellboot.compute.virt import fake
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot import exception
from cellboot.objects import build_request
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_fault
from cellboot.scheduler.resources import usage
from cellboot import quota
from cellboot.flowrun import lookup
from tests import fixtures as cb_fixtures
from tests.functional import invariants

FLAVOR = {'flavorid': 'small', 'name': 'small', 'vcpus': 1,
          'memory_mb': 512, 'root_gb': 10}

_INSTANCES = cell_models.Instance.__table__

# How long a scenario may take to settle, and how often to look.
QUIET_TIMEOUT = 60
POLL_SECONDS = 0.05

_UNLIMITED = {resource: quota.UNLIMITED for resource in quota.RESOURCES}


def persist_request(ctx, count=1, flavor=None, scheduler_hints=None):
    """Persist a request of ``ctx``'s user the way the API does.

    The API's own write (``cellboot.api.boot_requests``): build
    requests, request specs and instance mappings (no cell yet), one of
    each per instance, in one transaction with the quota check. The
    project's quota is lifted first: these boots test the build, not the
    quota (``tests/functional/api`` tests that). Returns
    ``(build_requests, request_specs)``, the arguments of
    ``schedule_and_build_instances``. Shared with the multi-process
    tests, which boot the same way.
    """
    quota.update(ctx, ctx.project_id, _UNLIMITED)
    instance, spec = boot_requests.describe(
        ctx, 'server', dict(flavor or FLAVOR), count=count,
        image_ref='cirros', hints=scheduler_hints)
    return boot_requests.persist(ctx, count, instance, spec)


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
    """An RPC endpoint seen through the cluster: counted and recorded.

    Every request is counted while it is handled (``wait_for_quiet``)
    and recorded under its server's name (``Cluster.handled``).
    """

    def __init__(self, endpoint, in_flight, server):
        self._endpoint = endpoint
        self._in_flight = in_flight
        self._server = server
        self.target = endpoint.target

    def __getattr__(self, name):
        method = getattr(self._endpoint, name)
        if name.startswith('_') or not callable(method):
            return method

        def handle(ctxt, **kwargs):
            self._in_flight.enter(self._server, name)
            try:
                return method(ctxt, **kwargs)
            finally:
                self._in_flight.exit()
        # Served under ExplicitRPCAccessPolicy: keep the method's mark.
        handle.exposed = getattr(method, 'exposed', False)
        return handle


class _SizedFakeDriver(fake.FakeDriver):
    """The fake driver, reporting a capacity of the test's choosing."""

    def __init__(self, host, capacity):
        super().__init__(host)
        self.capacity = capacity

    def get_available_resource(self):
        return dict(super().get_available_resource(), **self.capacity)


class _ClusterHooks(hooks.Hooks):
    """All-in-one's composition as a test needs it (module docstring)."""

    cells_share_bus = True

    def __init__(self, cluster):
        self.cluster = cluster

    def database_url(self, state_dir, name):
        return (self.cluster.server_urls.get(name)
                or super().database_url(state_dir, name))

    def driver(self, host):
        cluster = self.cluster
        return _SizedFakeDriver(host, dict(
            cluster.capacity, **cluster.host_capacity.get(host, {})))

    def endpoint(self, server, endpoint):
        return _Endpoint(endpoint, self.cluster.in_flight, server)


class Cluster(fixtures.Fixture):
    """A whole deployment in this process; see the module docstring."""

    def __init__(self, cells=2, hosts_per_cell=2, vcpus=8, memory_mb=8192,
                 local_gb=200, host_capacity=None, persist_flows=True,
                 backend='sqlite', port=None, reroute=None):
        """``host_capacity``: ``{host: {'vcpus': ..., ...}}`` for hosts
        that differ from the others (hosts are named ``cell1-host1``...).
        ``backend``: 'sqlite' (files in a temporary directory), 'mysql'
        or 'postgresql' (throw-away databases on the local server, see
        ``tests.fixtures.Database``). ``port``: serve the REST API there
        too (0: a free port), as all-in-one does. ``reroute``: ``{name:
        fn(url)}``, the URL the deployment is given for a server database
        instead of its own (a test puts a proxy in front of it);
        ``direct_urls`` keeps the real ones.
        """
        super().__init__()
        self.backend = backend
        self.cell_count = cells
        self.hosts_per_cell = hosts_per_cell
        self.capacity = {'vcpus': vcpus, 'memory_mb': memory_mb,
                         'local_gb': local_gb}
        self.host_capacity = dict(host_capacity or {})
        self.persist_flows = persist_flows
        self.port = port
        self.reroute = dict(reroute or {})

    # -- set-up ------------------------------------------------------------

    def _setUp(self):
        self.state_path = self.useFixture(fixtures.TempDir()).path
        # Before the deployment's stop is registered: dropped only once
        # the services that use them have stopped.
        self.server_urls = {}
        if self.backend != 'sqlite':
            for name in ['api', 'flows', 'cell0'] + [
                    deployment.cell_name(i + 1)
                    for i in range(self.cell_count)]:
                kind = name if name in ('api', 'flows') else 'cell'
                self.server_urls[name] = self.useFixture(
                    cb_fixtures.Database(self.backend,
                                         reuse=kind)).url
        self.direct_urls = dict(self.server_urls)
        for name, fn in self.reroute.items():
            self.server_urls[name] = fn(self.server_urls[name])
        self.in_flight = _InFlight()
        CONF.set_override('host_state_refresh_interval', 0,
                          group='scheduler')
        # What the fake driver reports ([compute]) where no host differs.
        for name, value in self.capacity.items():
            CONF.set_override(name, value, group='compute')
        self.deployment = deployment.Deployment(
            self.state_path, cells=self.cell_count,
            hosts_per_cell=self.hosts_per_cell, port=self.port,
            flavor=FLAVOR, persist_flows=self.persist_flows,
            hooks=_ClusterHooks(self))
        self.addCleanup(self.deployment.stop)
        self.deployment.start()
        self.ctx = cb_context.RequestContext(user_id='alice',
                                             project_id='project-a')
        d = self.deployment
        self.api_url, self.flow_url = d.api_url, d.flow_url
        self.cell0, self.cells = d.cell0, d.cells
        self.cell0_url = self.cell0.database_connection
        self.cell_urls = [cell.database_connection for cell in self.cells]
        self.transport, self.conductor_api = d.transport, d.conductor_api
        self.scheduler = d.scheduler
        self.cell_schedulers = d.cell_schedulers
        self.super_conductor = d.super_conductor
        self.computes = d.computes

    # -- driving it ----------------------------------------------------------

    def build_request(self, count=1, flavor=None, scheduler_hints=None):
        """Persist a request the way the API does; return its payloads.

        Returns ``(build_requests, request_specs)``, the arguments of
        ``schedule_and_build_instances``.
        """
        return persist_request(self.ctx, count, flavor, scheduler_hints)

    def boot(self, count=1, flavor=None, scheduler_hints=None):
        """Request ``count`` servers and cast the request; their uuids."""
        build_requests, specs = self.build_request(count, flavor,
                                                   scheduler_hints)
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
        """``{provider uuid: {rc: amount}}`` the instance holds, in
        whichever cell's database."""
        held = {}
        for cell in self.cells:
            with cb_context.target_cell(self.ctx, cell) as cctxt:
                held.update(usage.get_allocations_for_consumer(cctxt, uuid))
        return held
