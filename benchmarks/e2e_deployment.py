"""The deployment the e2e benchmark boots through, all in one process.

``cellboot all-in-one``'s own composition
(``cellboot.allinone.deployment.Deployment``) with one cell, ``hosts``
compute hosts with the fake driver (instant spawn), the scheduler
library with its RPC service, the super conductor and the cell's
conductor, all on one transport: ``fake://`` by default, or a broker
URL (the cell shares it, as one vhost). Every message goes through
oslo.messaging with the RPC serializer, as between processes. With
``server``, the REST API is served too, by that HTTP server class.

``Completions`` learns when each instance is settled (ACTIVE or ERROR)
from the services themselves, right after the endpoint that settled it
returns (``BenchmarkHooks.endpoint`` wraps them), so that the benchmark
need not poll the databases:

* a compute host's ``build_and_run_instance`` (ACTIVE, or ERROR after
  an aborted build; a rescheduled build is not settled yet);
* a cell conductor's ``build_instances`` (ERROR once retries run out);
* the super conductor's ``schedule_and_build_instances`` (instances
  buried in cell0).

Databases are SQLite files in a directory, or throw-away databases on a
MariaDB/MySQL or PostgreSQL server named by a server URL (created here,
dropped by ``drop``); the deployment syncs them as ``db sync`` does.
"""

import importlib
import os
import threading
import time
import uuid as uuid_mod

import oslo_messaging
import sqlalchemy as sa

from cellboot.allinone import deployment
from cellboot.allinone import hooks
from cellboot.compute import rpc_endpoint as compute_endpoint
from cellboot.conductor import manager as conductor_manager
from cellboot.db.api import connection as api_connection
from cellboot.db.api import models as api_models
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot.objects import cell_mapping
from cellboot.objects import instance as instance_obj
from cellboot import quota

CELL = deployment.cell_name(1)
DATABASES = ('api', 'flows', 'cell0', CELL)
SETTLED = (instance_obj.vm_states.ACTIVE, instance_obj.vm_states.ERROR)

# The project every benchmark boot is made in, its quota lifted.
PROJECT = 'bench-project'

_MAPPINGS = api_models.InstanceMapping.__table__
_CELLS = api_models.CellMapping.__table__
_INSTANCES = cell_models.Instance.__table__


def load_class(name):
    """The class named ``module:Class``."""
    module, _, attribute = name.partition(':')
    return getattr(importlib.import_module(module), attribute)


class Databases:
    """The URLs of one run's databases; creates and drops them."""

    def __init__(self, workdir, server_url=None):
        self.workdir = workdir
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
        """Create the server's databases (SQLite files need nothing)."""
        if self.backend != 'sqlite':
            self._on_server('CREATE DATABASE')

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

    target = compute_endpoint.ComputeEndpoint.target

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


class BenchmarkHooks(hooks.Hooks):
    """All-in-one's composition on the benchmark's databases and bus.

    Every endpoint that can settle a build reports to ``completions``.
    """

    cells_share_bus = True

    def __init__(self, dbs, transport_url, completions, server=None):
        self.dbs = dbs
        self.transport_url = transport_url
        self.completions = completions
        self.server = server

    def database_url(self, state_dir, name):
        return self.dbs.urls[name]

    def endpoint(self, server, endpoint):
        if isinstance(endpoint, compute_endpoint.ComputeEndpoint):
            return WatchedCompute(endpoint, self.completions)
        if isinstance(endpoint, conductor_manager.CellConductorManager):
            return WatchedCellConductor(endpoint, self.completions)
        if isinstance(endpoint, conductor_manager.SuperConductorManager):
            return WatchedSuperConductor(endpoint, self.completions)
        return endpoint

    def api_server(self, application, host, port):
        return load_class(self.server)(application, host, port)


class Deployment(deployment.Deployment):
    """All-in-one's deployment with one cell, watched for completions.

    ``server`` (``module:Class``) serves the REST API on a free port
    (``url``); without it there is none, the benchmark casts itself.
    """

    def __init__(self, dbs, transport_url, hosts, flavor, persistence,
                 server=None):
        self.completions = Completions()
        super().__init__(
            dbs.workdir, cells=1, hosts_per_cell=hosts,
            port=None if server is None else 0, flavor=flavor,
            persist_flows=persistence,
            hooks=BenchmarkHooks(dbs, transport_url, self.completions,
                                 server))

    def start(self):
        super().start()
        quota.update(self.ctx, PROJECT, {
            resource: quota.UNLIMITED for resource in quota.RESOURCES})

    def count_states(self, uuids):
        """{'active': n, 'error': n} over ``uuids``, cell0 included."""
        counts = {'active': 0, 'error': 0}
        query = sa.select(_INSTANCES.c.vm_state, sa.func.count()).where(
            _INSTANCES.c.uuid.in_(list(uuids)),
            _INSTANCES.c.deleted == sa.false()).group_by(
            _INSTANCES.c.vm_state)
        for cell in [self.cell0] + self.cells:
            engine = cell_connection.get_engine(cell.database_connection)
            with engine.connect() as conn:
                for state, count in conn.execute(query):
                    if state in counts:
                        counts[state] += count
        return counts
