"""A cellboot deployment in separate processes, set up as an operator does.

``Deployment`` is a fixture that builds, for one test:

* databases on a real server (API, flow, cell0 and each cell), empty;
* RabbitMQ vhosts of its own, deleted at the end with every queue in
  them, so that test runs sharing the broker never see each other's
  messages (the topics ``cellboot-conductor`` and ``cellboot-scheduler``
  are the same in every deployment): one for the API level and one per
  cell, as an operator confines each cell to a bus of its own;
* configuration files: ``api.conf`` for the API-level services
  (``[api_database]``, ``[flow_persistence]``, the bus; ``[conductor]
  scheduler = rpc``), one per cell for the services inside it (only
  ``[database]``, its cell's bus and ``cell_name``: no API database), one per
  compute host for what a test wants of that host;
* the operator's set-up: ``cellboot-manage db sync``, ``cell_v2
  map_cell0``, ``cell_v2 create_cell`` per cell, ``db sync`` again;
* the services: the API level's ``cellboot-scheduler``, the
  ``cellboot-conductor``, and per cell a ``cellboot-scheduler --cell
  NAME`` (named ``scheduler-NAME``), a ``cellboot-conductor --cell NAME``
  and a ``cellboot-compute --host NAME`` per host, then ``cell_v2
  discover_hosts``.

Each in-cell service gets a state directory of its own: the default API
database URL is an SQLite file there, so a service that reached for the
API database would leave that file behind (``api_database_files``).

For the durability tests it can also run several super conductors (each
its own ``[DEFAULT] host``), share their work through a Redis jobboard
(``jobboard``: a ``tests.fixtures.Redis``, whose namespace becomes
``[jobboard] namespace``), add options to every service (``options``,
e.g. short ``[conductor]`` sweep timeouts) and serve the REST API as a
``cellboot-api`` process on a free port (``api=True``; ``api_url``).
``kill`` and ``restart`` crash and bring back one service by name.

For the partition tests, ``proxied_cells`` puts the databases of the
cells it names behind a ``tests.functional.tcp_proxy.TCPProxy`` run in
the test process: the cell mapping and the cell's own configuration
hold the proxy's URL, so every service that reaches that cell's
database (the API, super conductors, scheduler, the cell's conductor
and compute hosts) goes through it, and ``cell_proxy(name)`` cuts,
black-holes and restores it for all of them at once.
"""

import os
import re
import textwrap
import time
import uuid

import fixtures
from oslo_config import fixture as config_fixture

from cellboot.conductor import rpcapi as conductor_rpcapi
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_mapping
from cellboot import rpc
from cellboot.flowrun import lookup
from tests.functional import cluster
from tests.functional import tcp_proxy
from tests.functional.cmd import base as cmd_base
from tests.functional.multiprocess import processes
from tests.functional.multiprocess import rabbit
from tests import fixtures as cb_fixtures

FLAVOR = {'flavorid': 'm1.small', 'name': 'm1.small', 'vcpus': 1,
          'memory_mb': 512, 'root_gb': 1}

# Seconds a boot may take to settle (ACTIVE or ERROR, flows finished).
SETTLE_TIMEOUT = 60

SETTLED_VM_STATES = (instance_obj.vm_states.ACTIVE,
                     instance_obj.vm_states.ERROR)
FINISHED_FLOW_STATES = ('SUCCESS', 'REVERTED')

# The API database file an in-cell service would create if it used the
# default [api_database] connection.
API_DATABASE_FILE = 'cellboot_api.sqlite'

# What cellboot-api logs once it listens (it is given port 0).
_API_LISTENING = re.compile(r'cellboot-api listening on (http://\S+)')

# Name of the only super conductor, or prefix of several.
SUPER_CONDUCTOR = 'conductor'


class Deployment(fixtures.Fixture):
    """Services in processes over ``backend`` databases and RabbitMQ.

    ``cells`` maps each cell name to its compute hosts; ``host_options``
    maps a host to configuration text of its own (e.g. a ``[compute]``
    capacity); ``cell_options`` is added to every cell's configuration
    (e.g. ``[fake_driver] fail_hosts``); ``options`` to every
    configuration, API level and cells. ``super_conductors`` is how many
    super conductor processes run (named ``conductor`` when one, else
    ``conductor-super1``...); ``jobboard`` a ``tests.fixtures.Redis``
    to share their work through; ``api`` starts ``cellboot-api``;
    ``proxied_cells`` names the cells whose database is reached through
    a proxy (``cell_proxy``).
    """

    def __init__(self, test, backend='mysql', cells=None, host_options=None,
                 cell_options='', options='', super_conductors=1,
                 jobboard=None, api=False, proxied_cells=()):
        super().__init__()
        self.test = test
        self.backend = backend
        self.cells = cells or {'cell1': ['cell1-host1']}
        self.host_options = host_options or {}
        self.cell_options = cell_options
        self.options = textwrap.dedent(options)
        self.super_conductor_count = super_conductors
        self.jobboard = jobboard
        self.with_api = api
        self.api_url = None
        self.proxied_cells = list(proxied_cells)
        unknown = set(self.proxied_cells) - set(self.cells)
        if unknown:
            raise ValueError(f'proxied_cells: no such cells {unknown}')
        self._proxies = {}

    def _setUp(self):
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.transport_url = self.useFixture(rabbit.Vhost()).url
        self.cell_transport_urls = {
            name: self.useFixture(rabbit.Vhost()).url for name in self.cells}
        self.api_url = self._database('api')
        self.flow_url = self._database('flow')
        self.cell0_url = self._database('cell0')
        self.cell_urls = {name: self._database(name) for name in self.cells}
        # The real URLs, for a test that reads around the proxies.
        self.direct_cell_urls = dict(self.cell_urls)
        for name in self.proxied_cells:
            proxy, self.cell_urls[name] = tcp_proxy.in_front_of(
                self.cell_urls[name])
            # Registered before the services' stop, so run after it.
            self.addCleanup(proxy.stop)
            self._proxies[name] = proxy
        self.api_conf = self._write('api.conf', self._api_conf())
        self._point_this_process_at_it()
        self.processes = self.useFixture(
            processes.Processes(self.dir, self.test))
        self._set_up_cells()
        if self.with_api:
            self.manage('flavor', 'create', FLAVOR['name'],
                        '--vcpus', str(FLAVOR['vcpus']),
                        '--ram', str(FLAVOR['memory_mb']),
                        '--disk', str(FLAVOR['root_gb']),
                        '--id', FLAVOR['flavorid'])
        self._start_services()
        self.manage('cell_v2', 'discover_hosts')

    # -- databases and configuration ------------------------------------------

    def _database(self, label):
        return self.useFixture(cb_fixtures.Database(
            self.backend, name=f'cb_{label}_{uuid.uuid4().hex[:10]}')).url

    def cell_proxy(self, cell):
        """The ``TCPProxy`` in front of ``cell``'s database."""
        return self._proxies[cell]

    def _write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, 'w') as conf:
            conf.write(textwrap.dedent(text))
        return path

    def _api_conf(self):
        return textwrap.dedent(f"""\
            [DEFAULT]
            state_path = {self.dir}
            transport_url = {self.transport_url}
            host = api-level

            [api_database]
            connection = {self.api_url}

            [flow_persistence]
            connection = {self.flow_url}

            [conductor]
            scheduler = rpc
            """) + self._shared_options()

    def _shared_options(self):
        """What every service's configuration ends with."""
        text = ''
        if self.jobboard is not None:
            text += textwrap.dedent(f"""
                [jobboard]
                backend = redis
                url = {self.jobboard.url}
                namespace = {self.jobboard.namespace}
                """)
        return text + '\n' + self.options

    def cell_state_path(self, cell):
        return os.path.join(self.dir, f'{cell}-state')

    def _cell_conf(self, cell):
        os.makedirs(self.cell_state_path(cell), exist_ok=True)
        return textwrap.dedent(f"""\
            [DEFAULT]
            state_path = {self.cell_state_path(cell)}
            transport_url = {self.cell_transport_urls[cell]}
            cell_name = {cell}

            [database]
            connection = {self.cell_urls[cell]}

            [compute]
            report_interval = 1
            """) + textwrap.dedent(self.cell_options) + \
            self._shared_options()

    def _point_this_process_at_it(self):
        """This test process reads the deployment's API and flow DBs."""
        conf = self.useFixture(config_fixture.Config(CONF))
        conf.config(connection=self.api_url, group='api_database')
        conf.config(connection=self.flow_url, group='flow_persistence')
        conf.config(connection=self.cell_urls[next(iter(self.cells))],
                    group='database')
        self.addCleanup(rpc.cleanup)

    # -- the operator's set-up ------------------------------------------------

    def manage(self, *args):
        """Run ``cellboot-manage --config-file api.conf ARGS``; must pass."""
        result = cmd_base.run('--config-file', self.api_conf, *args)
        if result.code != 0:
            raise AssertionError(f'set-up command failed: {result}')
        return result

    def _set_up_cells(self):
        self.manage('db', 'sync')
        self.manage('cell_v2', 'map_cell0', '--database_connection',
                    self.cell0_url)
        for name, url in self.cell_urls.items():
            self.manage('cell_v2', 'create_cell', '--name', name,
                        '--database_connection', url,
                        '--transport-url', self.cell_transport_urls[name])
        self.manage('db', 'sync')

    @staticmethod
    def cell_scheduler_name(cell):
        return f'scheduler-{cell}'

    def _start_services(self):
        """The schedulers first: compute hosts report to their cell's as
        they start, and super conductors read the cells' aggregates."""
        start = self.processes.start
        schedulers = []
        for cell in self.cells:
            cell_conf = self._write(f'{cell}.conf', self._cell_conf(cell))
            schedulers.append(start(
                self.cell_scheduler_name(cell), processes.command(
                    'cellboot.cmd.scheduler', '--config-file', cell_conf,
                    '--cell', cell)))
        schedulers.append(start('scheduler', processes.command(
            'cellboot.cmd.scheduler', '--config-file', self.api_conf)))
        self.processes.wait_ready(schedulers)
        started = [self._start_super_conductor(index) for index in
                   range(1, self.super_conductor_count + 1)]
        if self.with_api:
            started.append(start('api', processes.command(
                'cellboot.cmd.api', '--config-file', self.api_conf,
                '--port', '0')))
        for cell, hosts in self.cells.items():
            cell_conf = os.path.join(self.dir, f'{cell}.conf')
            started.append(start(f'conductor-{cell}', processes.command(
                'cellboot.cmd.conductor', '--config-file', cell_conf,
                '--cell', cell)))
            for host in hosts:
                host_conf = self._write(f'{host}.conf',
                                        self.host_options.get(host, ''))
                started.append(start(host, processes.command(
                    'cellboot.cmd.compute', '--config-file', cell_conf,
                    '--config-file', host_conf, '--host', host)))
        self.processes.wait_ready(started)
        if self.with_api:
            self.api_url = self._listening_url(self.service('api')) + '/v2.1'

    def _start_super_conductor(self, index):
        """One super conductor; several get a [DEFAULT] host each."""
        argv = processes.command('cellboot.cmd.conductor', '--config-file',
                                 self.api_conf)
        name = SUPER_CONDUCTOR
        if self.super_conductor_count > 1:
            name = f'{SUPER_CONDUCTOR}-super{index}'
            argv += ['--config-file', self._write(
                f'{name}.conf', f'[DEFAULT]\nhost = {name}\n')]
        return self.processes.start(name, argv)

    @staticmethod
    def _listening_url(service):
        found = _API_LISTENING.search(service.log())
        if found is None:
            raise AssertionError(f'{service.name} serves but logged no '
                                 f'address:\n{service.log()[-2000:]}')
        return found.group(1)

    # -- crashing and restarting services ------------------------------------

    @property
    def super_conductor_names(self):
        if self.super_conductor_count == 1:
            return [SUPER_CONDUCTOR]
        return [f'{SUPER_CONDUCTOR}-super{index}' for index in
                range(1, self.super_conductor_count + 1)]

    @staticmethod
    def cell_conductor_name(cell):
        return f'conductor-{cell}'

    def service(self, name):
        """The latest incarnation of the service called ``name``."""
        return [started for started in self.processes.services
                if started.name == name][-1]

    def kill(self, name):
        """SIGKILL service ``name`` (its whole process group)."""
        self.service(name).kill()

    def restart(self, name, wait=True):
        """Start service ``name`` again; waits until it serves."""
        restarted = self.processes.restart(self.service(name))
        if wait:
            self.processes.wait_ready([restarted])
        return restarted

    # -- booting as the API does ----------------------------------------------

    def boot(self, count=1, hints=None):
        """Persist a request as the API does, cast it; its instance uuids.

        The build requests, request specs and instance mappings (no cell
        yet) are written first (``cluster.persist_request``), then the
        super conductor is cast to with the same payload over RabbitMQ.
        """
        ctxt = cb_context.RequestContext(
            user_id='demo', project_id='demo-project',
            request_id=f'req-{uuid.uuid4()}')
        build_requests, specs = cluster.persist_request(
            ctxt, count, FLAVOR, scheduler_hints=dict(hints or {}))
        transport = rpc.get_transport(self.transport_url)
        conductor_rpcapi.ConductorAPI(transport).schedule_and_build_instances(
            ctxt, build_requests, specs)
        return [br['instance_uuid'] for br in build_requests]

    # -- reading the outcome --------------------------------------------------

    def instance(self, instance_uuid):
        """(cell name, Instance) where the instance's mapping points."""
        ctxt = cb_context.get_admin_context()
        mapping = instance_mapping.InstanceMapping.get_by_instance_uuid(
            ctxt, instance_uuid)
        if mapping.cell_mapping is None:
            return None, None
        with cb_context.target_cell(ctxt, mapping.cell_mapping) as cctxt:
            try:
                return mapping.cell_mapping.name, \
                    instance_obj.Instance.get_by_uuid(cctxt, instance_uuid)
            except exception.InstanceNotFound:
                return mapping.cell_mapping.name, None

    def flows(self, instance_uuid=None):
        """Flow summaries of the flow database and every cell."""
        return lookup.find_flows_everywhere(cb_context.get_admin_context(),
                                            instance_uuid=instance_uuid)

    def settled(self, instance_uuids):
        for instance_uuid in instance_uuids:
            _cell, instance = self.instance(instance_uuid)
            if instance is None or instance.vm_state not in \
                    SETTLED_VM_STATES:
                return False
        return all(flow['state'] in FINISHED_FLOW_STATES
                   for flow in self.flows())

    def wait_settled(self, instance_uuids, timeout=SETTLE_TIMEOUT):
        """Wait until each instance is ACTIVE or ERROR, no flow running."""
        deadline = time.monotonic() + timeout
        while not self.settled(instance_uuids):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f'not settled after {timeout} s: '
                    f'{[self.instance(u) for u in instance_uuids]}; flows '
                    f'{[(f["name"], f["state"]) for f in self.flows()]}')
            time.sleep(0.2)

    def api_database_files(self):
        """API database files left in the in-cell services' state dirs."""
        found = []
        for cell in self.cells:
            path = os.path.join(self.cell_state_path(cell),
                                API_DATABASE_FILE)
            if os.path.exists(path):
                found.append(path)
        return found
