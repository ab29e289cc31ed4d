"""``cellboot-scheduler`` as an operator runs it: a separate process.

On RabbitMQ with a SQLite API database, each cell on a vhost of its own:
a client in the test, standing for a compute host of a cell (it knows
only the cell's name and transport), reports its host on its cell's
topic, the API level gets it scheduled and claims and releases on it;
the same client is refused another cell's instance, and the service
logs that refusal once; SIGTERM stops the service cleanly. Without a
broker: ``--help`` and the one-line errors of a service that cannot
start.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

from oslo_utils import uuidutils

from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import compute_node
from cellboot.objects import instance_mapping
from cellboot.objects import service as service_obj
from cellboot import rpc
from cellboot.scheduler import host_state_cache
from cellboot.scheduler import rpcapi as scheduler_rpcapi
from cellboot.scheduler.resources import usage
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional.rpc import base as rpc_base

# Seconds the service may take to start serving, and to stop.
START_TIMEOUT = 60
STOP_TIMEOUT = 30
# What the service logs once all its servers consume their queues (a
# message sent before a queue exists is dropped by the broker).
STARTED = 'waiting for SIGTERM or SIGINT'

INVENTORY = {'VCPU': {'total': 4}, 'MEMORY_MB': {'total': 4096},
             'DISK_GB': {'total': 40}}
FLAVOR = {'vcpus': 1, 'memory_mb': 512, 'root_gb': 1}
FLAVOR_RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


def command(*args):
    return [sys.executable, '-m', 'cellboot.cmd.scheduler', *args]


class SchedulerProcess:
    """A running ``cellboot-scheduler``; its output goes to files."""

    def __init__(self, config_file, directory):
        self.stdout_path = os.path.join(directory, 'scheduler.out')
        self.stderr_path = os.path.join(directory, 'scheduler.err')
        with open(self.stdout_path, 'w') as out, \
                open(self.stderr_path, 'w') as err:
            self.process = subprocess.Popen(
                command('--config-file', config_file), stdout=out,
                stderr=err)

    @property
    def stderr(self):
        with open(self.stderr_path) as err:
            return err.read()

    def wait_started(self):
        """Wait until every server of the service is consuming."""
        deadline = time.monotonic() + START_TIMEOUT
        while STARTED not in self.stderr:
            if self.process.poll() is not None:
                raise AssertionError(
                    f'cellboot-scheduler exited with '
                    f'{self.process.returncode}:\n{self.stderr}')
            if time.monotonic() > deadline:
                raise AssertionError(f'cellboot-scheduler did not start in '
                                     f'{START_TIMEOUT} s:\n{self.stderr}')
            time.sleep(0.1)

    def terminate(self):
        """SIGTERM, then the exit code."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(STOP_TIMEOUT)

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class SchedulerServiceTest(base.DatabaseTestCase):

    CELLS = 2

    def setUp(self):
        super().setUp()
        self.api_url = rpc_base.rabbit_url()
        # Each cell's bus on the same broker: a vhost of its own, which
        # the service must serve as well.
        self.cell_url = rpc_base.rabbit_url(vhost='cell1')
        self.cell2_url = rpc_base.rabbit_url(vhost='cell2')
        self.admin = cb_context.get_admin_context()
        suffix = uuidutils.generate_uuid()[:8]
        self.cell = cell_mapping.CellMapping.create(
            self.admin, f'cell-{suffix}', self.dbs.cell_urls[0],
            self.cell_url)
        self.cell2 = cell_mapping.CellMapping.create(
            self.admin, f'cell2-{suffix}', self.dbs.cell_urls[1],
            self.cell2_url)
        self.node_uuid = self._compute_host('host1')
        self.node2_uuid = self._compute_host('host2', self.cell2)
        self.scheduler = self._start_scheduler()
        self.addCleanup(rpc.cleanup)

    def _compute_host(self, name, cell=None):
        uuid = uuidutils.generate_uuid()
        with cb_context.target_cell(self.admin, cell or self.cell) as cctxt:
            compute_node.ComputeNode.create(cctxt, name, name, 4, 4096, 40,
                                            uuid=uuid)
            service_obj.Service.create(
                cctxt, name, host_state_cache.COMPUTE_BINARY).report_up(
                cctxt)
        return uuid

    def _start_scheduler(self):
        config_file = os.path.join(self.state_path, 'cellboot.conf')
        with open(config_file, 'w') as conf:
            conf.write(textwrap.dedent(f"""\
                [DEFAULT]
                state_path = {self.state_path}
                host = scheduler-test
                transport_url = {self.api_url}

                [api_database]
                connection = {self.dbs.api_url}
                """))
        scheduler = SchedulerProcess(config_file, self.state_path)
        self.addCleanup(scheduler.kill)
        return scheduler

    def _client(self, url, cell=None):
        """A client on ``url``'s transport, once the service is up.

        With ``cell``, on that cell's topic, as the cell's services call.
        """
        self.scheduler.wait_started()
        return scheduler_rpcapi.SchedulerRPCAPI(
            rpc.get_transport(url), cell_name=cell and cell.name)

    def test_a_cell_service_reports_its_host_and_gets_it_scheduled(self):
        client = self._client(self.cell_url, self.cell)
        ctx = rpc_base.user_context()
        instance = uuidutils.generate_uuid()

        client.update_provider(ctx, self.node_uuid, 'host1', self.cell.name,
                               INVENTORY, 'nova')
        [[chosen]] = self._client(self.api_url).select_destinations(
            ctx, {'flavor': FLAVOR}, [instance])

        self.assertEqual((self.node_uuid, self.cell.uuid),
                         (chosen['compute_node_uuid'], chosen['cell_uuid']))
        self.assertEqual({self.node_uuid: FLAVOR_RESOURCES},
                         usage.get_allocations_for_consumer(self.admin,
                                                            instance))

    def test_a_cell_service_is_refused_another_cells_instance(self):
        ctx = rpc_base.user_context()
        self._client(self.cell2_url, self.cell2).update_provider(
            ctx, self.node2_uuid, 'host2', self.cell2.name, INVENTORY)
        instance2 = uuidutils.generate_uuid()
        instance_mapping.InstanceMapping.create(
            self.admin, instance2, 'p-1', cell_uuid=self.cell2.uuid)
        self._client(self.api_url).claim_resources(
            ctx, instance2, self.node2_uuid, FLAVOR_RESOURCES)

        exc = self.assertRaises(
            exception.CellNotAuthorized,
            self._client(self.cell_url, self.cell).release_resources, ctx,
            instance2)

        self.assertIn('is in another cell', str(exc))
        self.assertEqual({self.node2_uuid: FLAVOR_RESOURCES},
                         usage.get_allocations_for_consumer(self.admin,
                                                            instance2))
        refusals = [line for line in self.scheduler.stderr.splitlines()
                    if 'Refused release_resources' in line]
        self.assertEqual(1, len(refusals), self.scheduler.stderr)
        self.assertIn('WARNING', refusals[0])
        self.assertIn(f'from cell {self.cell.name}', refusals[0])
        self.assertIn(instance2, refusals[0])
        # Once: not repeated as the exception's own text either.
        self.assertNotIn('CellNotAuthorized', refusals[0])

    def test_claims_and_releases_over_the_api_transport(self):
        client = self._client(self.api_url)
        ctx = rpc_base.user_context()
        client.update_provider(ctx, self.node_uuid, 'host1', self.cell.name,
                               INVENTORY, 'nova')
        instance = uuidutils.generate_uuid()

        client.claim_resources(ctx, instance, self.node_uuid,
                               FLAVOR_RESOURCES)
        released = client.release_resources(ctx, instance)

        self.assertEqual({self.node_uuid: FLAVOR_RESOURCES}, released)

    def test_no_valid_host_reaches_the_client_as_itself(self):
        client = self._client(self.api_url)

        exc = self.assertRaises(
            exception.NoValidHost, client.select_destinations,
            rpc_base.user_context(), {'flavor': FLAVOR},
            [uuidutils.generate_uuid()])
        self.assertNotIn('Traceback', str(exc))

    def test_sigterm_stops_it_cleanly(self):
        self._client(self.api_url)

        code = self.scheduler.terminate()

        stderr = self.scheduler.stderr
        self.assertEqual(0, code, stderr)
        self.assertNotIn('Traceback', stderr)
        self.assertIn('Caught SIGTERM, stopping', stderr)


class SchedulerCommandLineTest(base.TestCase):
    """What an operator sees when the service cannot start."""

    # Nothing listens on port 1: the service retries its connection.
    DEAD_BROKER = 'rabbit://guest:guest@127.0.0.1:1/'

    def _run(self, *args):
        return subprocess.run(command(*args), capture_output=True,
                              text=True, timeout=STOP_TIMEOUT)

    def _config(self, **values):
        path = os.path.join(self.state_path, 'cellboot.conf')
        lines = ['[DEFAULT]', f'state_path = {self.state_path}']
        lines += [f'transport_url = {values["transport_url"]}'
                  ] if 'transport_url' in values else []
        if 'api' in values:
            lines += ['[api_database]', f'connection = {values["api"]}']
        with open(path, 'w') as conf:
            conf.write('\n'.join(lines) + '\n')
        return path

    def assertOneErrorLine(self, result, *fragments):
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        self.assertEqual(1, result.returncode, result.stderr)
        self.assertEqual(1, len(lines), result.stderr)
        self.assertTrue(lines[0].startswith('ERROR: '), result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])

    def test_help_describes_the_service(self):
        result = self._run('--help')

        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('usage: cellboot-scheduler', result.stdout)
        self.assertIn('select_destinations', result.stdout)

    def test_missing_config_file_is_one_error_line(self):
        missing = os.path.join(self.state_path, 'missing.conf')

        self.assertOneErrorLine(self._run('--config-file', missing),
                                'not found', missing)

    def test_bad_transport_url_is_one_error_line(self):
        api = f'sqlite:///{self.state_path}/api.sqlite'
        config = self._config(transport_url='nosuchdriver://u:pw@h/',
                              api=api)

        self.assertOneErrorLine(self._run('--config-file', config),
                                'Invalid transport URL',
                                'nosuchdriver://u:***@h/')

    def test_api_database_without_schema_is_one_error_line(self):
        api = f'sqlite:///{self.state_path}/empty.sqlite'
        config = self._config(transport_url='fake://', api=api)

        self.assertOneErrorLine(self._run('--config-file', config),
                                'cellboot-manage db sync')

    def test_sigterm_while_the_broker_is_unreachable_stops_it(self):
        api = self.useFixture(cb_fixtures.Database(schema='api')).url
        config = self._config(transport_url=self.DEAD_BROKER, api=api)
        scheduler = SchedulerProcess(config, self.state_path)
        self.addCleanup(scheduler.kill)
        deadline = time.monotonic() + START_TIMEOUT
        while 'Connection refused' not in scheduler.stderr:
            self.assertIsNone(scheduler.process.poll(), scheduler.stderr)
            self.assertLess(time.monotonic(), deadline, scheduler.stderr)
            time.sleep(0.1)

        code = scheduler.terminate()

        self.assertEqual(0, code, scheduler.stderr)
        self.assertNotIn('Traceback', scheduler.stderr)
