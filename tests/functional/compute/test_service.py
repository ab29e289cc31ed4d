"""``cellboot-compute`` as an operator runs it: a process in its cell.

On MariaDB and RabbitMQ: a ``cellboot-scheduler --cell`` process
schedules the cell from the cell's database; the compute host process
gets only its cell's database, bus and name (no API database),
registers, heartbeats, builds what is cast to it, casts a failed build
to its cell conductor (played by the test) and stops cleanly on
SIGTERM. Without a broker: ``--help`` and the
one-line errors of a host that cannot start.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

from oslo_utils import uuidutils

from cellboot.compute import manager as compute_manager
from cellboot.compute import rpcapi as compute_rpcapi
from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import compute_node
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action
from cellboot.objects import service as service_obj
from cellboot import rpc
from cellboot.rpc import client as rpc_client
from cellboot.rpc import topics
from cellboot.scheduler.resources import claims
from cellboot.scheduler.resources import providers
from cellboot.scheduler.resources import usage
from tests import base
from tests.functional.compute import base as compute_base
from tests.functional.rpc import base as rpc_base

# Seconds a service may take to start serving, to build, and to stop.
START_TIMEOUT = 60
BUILD_TIMEOUT = 30
STOP_TIMEOUT = 30

HOST = 'compute1'


class ServiceProcess:
    """A running cellboot service; its output goes to files."""

    def __init__(self, module, args, directory, name):
        self.name = name
        self.stderr_path = os.path.join(directory, f'{name}.err')
        with open(os.path.join(directory, f'{name}.out'), 'w') as out, \
                open(self.stderr_path, 'w') as err:
            self.process = subprocess.Popen(
                [sys.executable, '-m', module, *args], stdout=out,
                stderr=err)

    @property
    def stderr(self):
        with open(self.stderr_path) as err:
            return err.read()

    def check_running(self, test):
        if self.process.poll() is not None:
            test.fail(f'{self.name} exited with {self.process.returncode}:'
                      f'\n{self.stderr}')

    def terminate(self):
        """SIGTERM, then the exit code."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(STOP_TIMEOUT)

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class _ComputeServiceTestCase(base.MySQLMixin, base.DatabaseTestCase):
    """A cell on MariaDB + RabbitMQ, its scheduler and one compute host."""

    CELLS = 1
    FAKE_DRIVER = ''

    def setUp(self):
        super().setUp()
        self.url = rpc_base.rabbit_url()
        self.admin = cb_context.get_admin_context()
        self.cell = cell_mapping.CellMapping.create(
            self.admin, 'cell-' + uuidutils.generate_uuid()[:8],
            self.dbs.cell_urls[0], self.url)
        self.addCleanup(rpc.cleanup)
        self.scheduler = self._start('cellboot.cmd.scheduler', 'scheduler',
                                     self._scheduler_config(), '--cell',
                                     self.cell.name)
        self._wait_for_scheduler()
        # The compute host's own state directory: nothing of the API
        # database may appear in it.
        self.compute_state = os.path.join(self.state_path, 'compute')
        os.mkdir(self.compute_state)
        self.compute = self._start('cellboot.cmd.compute', 'compute',
                                   self._compute_config(), '--host', HOST)
        self.node_uuid = self._wait_for_provider()

    def _write(self, name, text):
        path = os.path.join(self.state_path, name)
        with open(path, 'w') as conf:
            conf.write(textwrap.dedent(text))
        return path

    def _scheduler_config(self):
        return self._write('scheduler.conf', f"""\
            [DEFAULT]
            state_path = {self.state_path}
            host = scheduler-test
            transport_url = {self.url}

            [database]
            connection = {self.dbs.cell_urls[0]}
            """)

    def _compute_config(self, cell_name=None, name='compute.conf'):
        return self._write(name, f"""\
            [DEFAULT]
            state_path = {self.compute_state}
            transport_url = {self.url}
            cell_name = {cell_name or self.cell.name}

            [database]
            connection = {self.dbs.cell_urls[0]}

            [compute]
            report_interval = 1
            vcpus = 8
            memory_mb = 8192
            local_gb = 100

            [fake_driver]
            {self.FAKE_DRIVER}
            """)

    def _start(self, module, name, config_file, *args):
        process = ServiceProcess(module, ['--config-file', config_file,
                                          *args], self.state_path, name)
        self.addCleanup(process.kill)
        return process

    def _wait_for_scheduler(self):
        """Once the scheduler answers: RabbitMQ drops what is sent to a
        topic before its first server has declared the queue."""
        client = rpc_client.RPCClient(rpc.get_transport(self.url),
                                      topics.scheduler(self.cell.name))
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            self.scheduler.check_running(self)
            try:
                client.call(self.admin, 'release_resources', timeout=2,
                            consumer_uuid=uuidutils.generate_uuid())
                return
            except exception.RPCTimeout:
                if time.monotonic() > deadline:
                    raise

    def _wait_for_provider(self):
        """The host's node uuid, once its provider is in the cell's DB.

        The host reports its provider only once it listens, so from then
        on a build cast to it is not lost.
        """
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            self.scheduler.check_running(self)
            self.compute.check_running(self)
            try:
                node = compute_node.ComputeNode.get_by_host_and_node(
                    self.admin, HOST, HOST)
                providers.get_provider(self.admin, node.uuid)
                return node.uuid
            except (exception.ComputeNodeNotFound,
                    exception.ResourceProviderNotFound):
                time.sleep(0.2)
        self.fail(f'{HOST} did not register within {START_TIMEOUT} s:\n'
                  f'{self.compute.stderr}')

    def _service(self):
        return service_obj.Service.get_by_host_and_binary(
            self.admin, HOST, compute_manager.BINARY)

    def _cast_build(self, ctxt, host_list=(), retry=None):
        """A building instance on the host, claimed, its build cast."""
        uuid = uuidutils.generate_uuid()
        instance = instance_obj.Instance.create(
            ctxt, uuid, ctxt.project_id, instance_obj.vm_states.BUILDING,
            user_id=ctxt.user_id, flavor=dict(compute_base.FLAVOR),
            host=HOST, node=HOST)
        instance_action.InstanceAction.start(
            ctxt, uuid, compute_manager.ACTION_CREATE, ctxt.request_id,
            user_id=ctxt.user_id, project_id=ctxt.project_id)
        claims.claim_resources(self.admin, uuid, self.node_uuid,
                               dict(compute_base.RESOURCES))
        transport = rpc.get_transport(self.url)
        compute_rpcapi.ComputeAPI(self.cell.name, transport)\
            .build_and_run_instance(ctxt, HOST, instance.to_dict(),
                                    list(host_list),
                                    {'flavor': dict(compute_base.FLAVOR)},
                                    retry)
        return instance

    def _wait_for_state(self, instance, vm_state):
        def settled():
            self.compute.check_running(self)
            return instance_obj.Instance.get_by_uuid(
                self.admin, instance.uuid).vm_state == vm_state

        if not compute_base.wait_for(settled, timeout=BUILD_TIMEOUT):
            self.fail(f'instance {instance.uuid} not {vm_state} after '
                      f'{BUILD_TIMEOUT} s:\n{self.compute.stderr}')

    def held(self, consumer_uuid):
        return usage.get_allocations_for_consumer(self.admin, consumer_uuid)


class ComputeServiceTest(_ComputeServiceTestCase):

    def test_registers_its_provider_in_its_cell(self):
        provider = providers.get_provider(self.admin, self.node_uuid)
        self.assertEqual((HOST, 8),
                         (provider['name'],
                          provider['inventories']['VCPU']['total']))

    def test_heartbeats_into_its_cell_database(self):
        first = self._service().report_count
        self.assertTrue(compute_base.wait_for(
            lambda: self._service().report_count >= first + 2,
            timeout=BUILD_TIMEOUT), self.compute.stderr)

    def test_builds_a_cast_instance_to_active(self):
        instance = self._cast_build(rpc_base.user_context())
        self._wait_for_state(instance, instance_obj.vm_states.ACTIVE)
        self.assertEqual({self.node_uuid: compute_base.RESOURCES},
                         self.held(instance.uuid))

    def test_never_touches_an_api_database(self):
        instance = self._cast_build(rpc_base.user_context())
        self._wait_for_state(instance, instance_obj.vm_states.ACTIVE)
        self.assertEqual([], os.listdir(self.compute_state))

    def test_sigterm_stops_it_cleanly(self):
        code = self.compute.terminate()
        stderr = self.compute.stderr
        self.assertEqual((0, False, True),
                         (code, 'Traceback' in stderr,
                          'Caught SIGTERM' in stderr), stderr)

    def test_unknown_cell_name_is_reported_and_never_schedulable(self):
        # A cell's scheduler serves its own cell's topic: a host naming no
        # such cell gets no answer, says what to check at each attempt,
        # is never made schedulable, and still stops on SIGTERM.
        config = self._compute_config(cell_name='no-such-cell',
                                      name='wrong-cell.conf')
        quick = self._write('quick-timeout.conf', """\
            [DEFAULT]
            rpc_response_timeout = 2
            """)
        wrong = self._start('cellboot.cmd.compute', 'wrong-cell', config,
                            '--config-file', quick, '--host', 'compute9')
        deadline = time.monotonic() + START_TIMEOUT
        while 'cellboot-scheduler.no-such-cell' not in wrong.stderr:
            wrong.check_running(self)
            self.assertLess(time.monotonic(), deadline, wrong.stderr)
            time.sleep(0.2)
        self.assertIn('Check too that [DEFAULT] cell_name, no-such-cell, '
                      'is the name of this host\'s cell', wrong.stderr)
        self.assertEqual(0, wrong.terminate(), wrong.stderr)
        self.assertNotIn('Traceback', wrong.stderr)
        node = compute_node.ComputeNode.get_by_host_and_node(
            self.admin, 'compute9', 'compute9')
        self.assertRaises(exception.ResourceProviderNotFound,
                          providers.get_provider, self.admin, node.uuid)


class ComputeRescheduleServiceTest(_ComputeServiceTestCase):

    FAKE_DRIVER = f'fail_hosts = {HOST}'

    def test_failed_build_is_cast_to_its_cell_conductor(self):
        buses = self.useFixture(rpc_base.Buses())
        conductor = rpc_base.CellConductorEndpoint()
        buses.serve('conductor-test', topics.cell_conductor(self.cell.name),
                    [conductor], rpc.get_transport(self.url))
        instance = self._cast_build(rpc_base.user_context(), host_list=[
            {'service_host': 'compute2', 'nodename': 'compute2'}])

        [(_method, _ctxt, cast)] = conductor.wait_for(
            timeout=BUILD_TIMEOUT)
        self.assertEqual(
            (instance.uuid, [{'service_host': 'compute2',
                              'nodename': 'compute2'}],
             1, [[HOST, HOST]], {}),
            (cast['instance']['uuid'], cast['host_list'],
             cast['retry']['num_attempts'], cast['retry']['hosts'],
             self.held(instance.uuid)))


class ComputeCommandLineTest(base.TestCase):
    """What an operator sees when the host cannot start."""

    def _run(self, *args):
        return subprocess.run(
            [sys.executable, '-m', 'cellboot.cmd.compute', *args],
            capture_output=True, text=True, timeout=STOP_TIMEOUT)

    def _config(self, text):
        path = os.path.join(self.state_path, 'compute.conf')
        with open(path, 'w') as conf:
            conf.write(f'[DEFAULT]\nstate_path = {self.state_path}\n'
                       f'transport_url = fake://\n{text}')
        return path

    def assertOneErrorLine(self, result, *fragments):
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        self.assertEqual((1, 1, True), (
            result.returncode, len(lines),
            bool(lines) and lines[0].startswith('ERROR: ')), result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])

    def test_help_describes_the_service(self):
        result = self._run('--help')
        self.assertEqual((0, True, True),
                         (result.returncode,
                          'usage: cellboot-compute' in result.stdout,
                          '--host NAME' in result.stdout), result.stderr)

    def test_missing_cell_name_is_one_error_line(self):
        config = self._config(
            f'[database]\nconnection = sqlite:///{self.state_path}/c.db\n')
        self.assertOneErrorLine(self._run('--config-file', config),
                                '[DEFAULT] cell_name')

    def test_missing_database_is_one_error_line(self):
        config = self._config('cell_name = cell1\n')
        self.assertOneErrorLine(self._run('--config-file', config),
                                '[database] connection')

    def test_unknown_driver_is_one_error_line(self):
        config = self._config(
            f'cell_name = cell1\n[database]\n'
            f'connection = sqlite:///{self.state_path}/c.db\n'
            f'[compute]\ndriver = hyperv\n')
        self.assertOneErrorLine(self._run('--config-file', config),
                                "Unknown virt driver 'hyperv'")
