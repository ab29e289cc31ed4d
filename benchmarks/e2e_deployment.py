"""The deployment the e2e benchmark boots through, all in one process.

An API database, a flow database, cell0 and one cell, each synced with
cellboot's own migrations (TaskFlow's tables included); the scheduler
library with its RPC service, the super conductor, the cell's conductor
and ``hosts`` compute hosts with the fake driver (instant spawn), all on
one transport: ``fake://`` by default, or a broker URL. Every message
goes through oslo.messaging with the RPC serializer, as between
processes.

``Completions`` learns when each instance is settled (ACTIVE or ERROR)
from the services themselves, right after the endpoint that settled it
returns, so that the benchmark need not poll the databases:

* a compute host's ``build_and_run_instance`` (ACTIVE, or ERROR after
  an aborted build; a rescheduled build is not settled yet);
* a cell conductor's ``build_instances`` (ERROR once retries run out);
* the super conductor's ``schedule_and_build_instances`` (instances
  buried in cell0).

Databases are SQLite files in a directory, or throw-away databases on a
MariaDB/MySQL or PostgreSQL server named by a server URL (created here,
dropped by ``drop``).
"""

import os
import threading
import time
import uuid as uuid_mod

import oslo_messaging
import sqlalchemy as sa

from cellboot.cells import discovery
from cellboot.compute import manager as compute_manager
from cellboot.compute import rpcapi as compute_rpcapi
from cellboot.conductor import manager as conductor_manager
from cellboot.conductor import rpcapi as conductor_rpcapi
from cellboot import context as cb_context
from cellboot.db.api import connection as api_connection
from cellboot.db.api import models as api_models
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot.db import migration
from cellboot.objects import cell_mapping
from cellboot.objects import instance as instance_obj
from cellboot import rpc
from cellboot.rpc import topics
from cellboot.scheduler import api as scheduler_api
from cellboot.scheduler import rpc_endpoint
from cellboot.scheduler import rpcapi as scheduler_rpcapi
from cellboot import service

CELL = 'cell1'
DATABASES = ('api', 'flows', 'cell0', CELL)
SETTLED = (instance_obj.vm_states.ACTIVE, instance_obj.vm_states.ERROR)

_MAPPINGS = api_models.InstanceMapping.__table__
_CELLS = api_models.CellMapping.__table__
_INSTANCES = cell_models.Instance.__table__


class Databases:
    """The URLs of one run's databases; creates and drops them."""

    def __init__(self, workdir, server_url=None):
        self.server_url = server_url
        prefix = 'cbe2e_' + uuid_mod.uuid4().hex[:8]
        if server_url is None:
            self.backend = 'sqlite'
            self.urls = {name: f'sqlite:///{workdir}/{name}.sqlite'
                         for name in DATABASES}
        else:
            server = sa.engine.make_url(server_url)
            self.backend = server.get_backend_name()
            self.urls = {name: server.set(database=f'{prefix}_{name}')
                         .render_as_string(hide_password=False)
                         for name in DATABASES}

    def _on_server(self, verb):
        url = sa.engine.make_url(self.server_url)
        if self.backend == 'postgresql':
            url = url.set(database='postgres')
        engine = sa.create_engine(url, isolation_level='AUTOCOMMIT')
        try:
            with engine.connect() as conn:
                for url in self.urls.values():
                    name = sa.engine.make_url(url).database
                    conn.execute(sa.text(f'{verb} {name}'))
        finally:
            engine.dispose()

    def create(self):
        """Create the databases and sync them as ``db sync`` does."""
        if self.backend != 'sqlite':
            self._on_server('CREATE DATABASE')
        migration.db_sync('api', self.urls['api'])
        migration.sync_flow_database(self.urls['flows'])
        for name in ('cell0', CELL):
            migration.sync_cell_database(self.urls[name])

    def drop(self):
        if self.backend == 'sqlite':
            for url in self.urls.values():
                path = sa.engine.make_url(url).database
                for suffix in ('', '-wal', '-shm'):
                    if os.path.exists(path + suffix):
                        os.remove(path + suffix)
        else:
            self._on_server('DROP DATABASE IF EXISTS')


class Completions:
    """When each instance was seen settled (``time.perf_counter()``)."""

    def __init__(self):
        self.done = {}
        self._changed = threading.Condition()

    def mark(self, uuids):
        now = time.perf_counter()
        with self._changed:
            for uuid in uuids:
                self.done.setdefault(uuid, now)
            self._changed.notify_all()

    def wait(self, uuids, timeout):
        """True once every one of ``uuids`` is settled; False on timeout."""
        with self._changed:
            return self._changed.wait_for(
                lambda: all(uuid in self.done for uuid in uuids), timeout)

    def wait_for_count(self, count, timeout):
        """True once ``count`` instances in all are settled."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self.done) >= count,
                                          timeout)


@cell_connection.reader
def _settled(context, uuid):
    """True if the instance (in the local cell database) is settled.

    Its vm_state alone is read: the watch is the benchmark's, not the
    boot's, and should cost the run as little as it can.
    """
    row = context.session.execute(
        sa.select(_INSTANCES.c.vm_state, _INSTANCES.c.deleted).where(
            _INSTANCES.c.uuid == uuid)).first()
    # Deleted (or never there): nothing more will happen to it.
    return row is None or row.deleted or row.vm_state in SETTLED


class WatchedCompute:
    """A compute host's endpoint that reports the builds it settled."""

    target = compute_manager.ComputeEndpoint.target

    def __init__(self, endpoint, completions):
        self._endpoint = endpoint
        self._completions = completions

    @oslo_messaging.expose
    def build_and_run_instance(self, context, instance, host_list,
                               request_spec, retry=None):
        self._endpoint.build_and_run_instance(context, instance, host_list,
                                              request_spec, retry)
        if _settled(context, instance['uuid']):
            self._completions.mark([instance['uuid']])


class WatchedCellConductor:
    """A cell conductor's endpoint that reports reschedules given up."""

    target = conductor_manager.CellConductorManager.target

    def __init__(self, manager, completions):
        self._manager = manager
        self._completions = completions

    @oslo_messaging.expose
    def build_instances(self, context, instance, request_spec, host_list,
                        retry):
        self._manager.build_instances(context, instance, request_spec,
                                      host_list, retry)
        if _settled(context, instance['uuid']):
            self._completions.mark([instance['uuid']])


class WatchedSuperConductor:
    """The super conductor's endpoint, reporting instances buried in cell0.

    The other instances of the request settle on their compute hosts.
    """

    target = conductor_manager.SuperConductorManager.target

    def __init__(self, manager, completions):
        self._manager = manager
        self._completions = completions

    @oslo_messaging.expose
    def schedule_and_build_instances(self, context, build_requests,
                                     request_specs):
        self._manager.schedule_and_build_instances(context, build_requests,
                                                   request_specs)
        self._completions.mark(_buried_in_cell0(
            context, [br['instance_uuid'] for br in build_requests]))


@api_connection.reader
def _buried_in_cell0(context, uuids):
    query = sa.select(_MAPPINGS.c.instance_uuid).join(
        _CELLS, _MAPPINGS.c.cell_id == _CELLS.c.id).where(
        _CELLS.c.uuid == cell_mapping.CELL0_UUID,
        _MAPPINGS.c.instance_uuid.in_(uuids))
    return list(context.session.execute(query).scalars())


class Deployment:
    """Every service of a one-cell deployment, in this process."""

    def __init__(self, dbs, transport_url, hosts):
        self.dbs = dbs
        self.transport_url = transport_url
        self.hosts = hosts
        self.completions = Completions()
        self._servers = []

    def _serve(self, host, topic, endpoint):
        server = service.RPCService(host, topic, [endpoint], self.transport)
        server.start()
        self._servers.append(server)

    def start(self):
        self.ctx = cb_context.get_admin_context()
        cell_mapping.CellMapping.create(
            self.ctx, 'cell0', self.dbs.urls['cell0'], 'none:///',
            uuid=cell_mapping.CELL0_UUID)
        self.cell = cell_mapping.CellMapping.create(
            self.ctx, CELL, self.dbs.urls[CELL], self.transport_url)
        self.transport = rpc.get_transport(self.transport_url)
        self.scheduler = scheduler_api.SchedulerAPI()
        self.scheduler.start(self.ctx, refresh_interval=0)
        self._serve('scheduler', topics.SCHEDULER,
                    rpc_endpoint.SchedulerEndpoint(self.scheduler))
        cell_scheduler = scheduler_rpcapi.SchedulerRPCAPI(self.transport)
        self._serve('conductor-cell1', topics.cell_conductor(CELL),
                    WatchedCellConductor(
                        conductor_manager.CellConductorManager(
                            cell_name=CELL,
                            database_connection=self.dbs.urls[CELL],
                            scheduler=cell_scheduler,
                            compute_rpcapi=compute_rpcapi.ComputeAPI(
                                CELL, self.transport)),
                        self.completions))
        for index in range(self.hosts):
            host = f'{CELL}-host{index + 1}'
            manager = compute_manager.ComputeManager(
                host, cell_scheduler,
                conductor_rpcapi.CellConductorAPI(CELL, self.transport),
                cell_name=CELL)
            manager.init_host(self.ctx)
            self._serve(host, topics.compute(CELL), WatchedCompute(
                compute_manager.ComputeEndpoint(manager), self.completions))
        discovery.discover_hosts(self.ctx)
        self.scheduler.refresh(self.ctx)
        self._serve('conductor', topics.CONDUCTOR, WatchedSuperConductor(
            conductor_manager.SuperConductorManager(scheduler=self.scheduler),
            self.completions))
        self.conductor = conductor_rpcapi.ConductorAPI(self.transport)

    def stop(self):
        for server in reversed(self._servers):
            server.stop()
        for server in reversed(self._servers):
            server.wait()
        self.scheduler.stop()
        rpc.cleanup()

    def count_states(self, uuids):
        """{'active': n, 'error': n} over ``uuids``, cell0 included."""
        counts = {'active': 0, 'error': 0}
        query = sa.select(_INSTANCES.c.vm_state, sa.func.count()).where(
            _INSTANCES.c.uuid.in_(list(uuids)),
            _INSTANCES.c.deleted == sa.false()).group_by(
            _INSTANCES.c.vm_state)
        for name in ('cell0', CELL):
            engine = cell_connection.get_engine(self.dbs.urls[name])
            with engine.connect() as conn:
                for state, count in conn.execute(query):
                    if state in counts:
                        counts[state] += count
        return counts
