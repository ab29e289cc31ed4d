"""``cellboot-scheduler`` as an operator runs it: separate processes.

On RabbitMQ with SQLite databases, the cell on a vhost of its own: with
``--cell NAME`` it is the cell's scheduler, configured with the cell's
``[database] connection`` and bus only, serving topic
``cellboot-scheduler.NAME``; without, the API level's, configured with
the API database and bus, serving ``cellboot-scheduler`` and reaching
the cell's scheduler over the cell's bus. A client in the test, standing
for a compute host or a conductor of the cell (it knows only the cell's
name and transport), reports its host and claims on the cell's topic; a
super conductor's client gets it scheduled and released through the API
level; the cell's scheduler refuses a report naming another cell and
logs that refusal once; SIGTERM stops either cleanly. Without a broker:
``--help`` and the one-line errors of a service that cannot start.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.cmd import scheduler as scheduler_cmd
from cellboot import context as cb_context
from cellboot.db.cell import models as cell_models
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import compute_node
from cellboot.objects import instance as instance_obj
from cellboot.objects import service as service_obj
from cellboot import rpc
from cellboot.scheduler import host_state_cache
from cellboot.scheduler import rpcapi as scheduler_rpcapi
from cellboot.scheduler.resources import providers
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
# How often the API level reads the cells' aggregates here, and how long
# a test waits for it to have read one published just before.
CELL_CHECK_INTERVAL = 0.2
READ_WAIT = 3 * CELL_CHECK_INTERVAL

INVENTORY = {'VCPU': {'total': 4}, 'MEMORY_MB': {'total': 4096},
             'DISK_GB': {'total': 40}}
FLAVOR = {'vcpus': 1, 'memory_mb': 512, 'root_gb': 1}
FLAVOR_RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


def command(*args):
    return [sys.executable, '-m', 'cellboot.cmd.scheduler', *args]


class SchedulerProcess:
    """A running ``cellboot-scheduler``; its output goes to files."""

    def __init__(self, config_file, directory, *args, label='scheduler'):
        self.stdout_path = os.path.join(directory, f'{label}.out')
        self.stderr_path = os.path.join(directory, f'{label}.err')
        with open(self.stdout_path, 'w') as out, \
                open(self.stderr_path, 'w') as err:
            self.process = subprocess.Popen(
                command('--config-file', config_file, *args), stdout=out,
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
        return self

    def terminate(self):
        """SIGTERM, then the exit code."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(STOP_TIMEOUT)

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class SchedulerServiceTest(base.DatabaseTestCase):

    def setUp(self):
        super().setUp()
        self.api_url = rpc_base.rabbit_url()
        # The cell's bus on the same broker: a vhost of its own.
        self.cell_url = rpc_base.rabbit_url(vhost='cell1')
        self.admin = cb_context.get_admin_context()
        self.cell = cell_mapping.CellMapping.create(
            self.admin, f'cell-{uuidutils.generate_uuid()[:8]}',
            self.dbs.cell_urls[0], self.cell_url)
        self.node_uuid = self._compute_host('host1')
        self.cell_scheduler = self._start('cell', f"""\
            [DEFAULT]
            state_path = {self.state_path}
            host = scheduler-{self.cell.name}
            transport_url = {self.cell_url}

            [database]
            connection = {self.dbs.cell_urls[0]}
            """, '--cell', self.cell.name)
        self.api_scheduler = self._start('api', f"""\
            [DEFAULT]
            state_path = {self.state_path}
            host = scheduler-api
            transport_url = {self.api_url}

            [api_database]
            connection = {self.dbs.api_url}

            [scheduler]
            cell_check_interval = {CELL_CHECK_INTERVAL}
            """)
        self.addCleanup(rpc.cleanup)
        self.ctx = rpc_base.user_context()

    def _compute_host(self, name):
        uuid = uuidutils.generate_uuid()
        with self.target() as cctxt:
            compute_node.ComputeNode.create(cctxt, name, name, 4, 4096, 40,
                                            uuid=uuid)
            service_obj.Service.create(
                cctxt, name, host_state_cache.COMPUTE_BINARY).report_up(
                cctxt)
        return uuid

    def _start(self, label, config, *args):
        config_file = os.path.join(self.state_path, f'{label}.conf')
        with open(config_file, 'w') as conf:
            conf.write(textwrap.dedent(config))
        scheduler = SchedulerProcess(config_file, self.state_path, *args,
                                     label=label)
        self.addCleanup(scheduler.kill)
        return scheduler

    def target(self):
        return cb_context.target_cell(self.admin, self.cell)

    def _cell_client(self):
        """What a compute host or conductor of the cell has."""
        self.cell_scheduler.wait_started()
        return scheduler_rpcapi.CellSchedulerRPCAPI(
            rpc.get_transport(self.cell_url), self.cell.name)

    def _api_client(self):
        """What a super conductor with [conductor] scheduler = rpc has."""
        self.api_scheduler.wait_started()
        return scheduler_rpcapi.SchedulerRPCAPI(rpc.get_transport(
            self.api_url))

    def _reported(self):
        self._cell_client().update_provider(
            self.ctx, self.node_uuid, 'host1', self.cell.name, INVENTORY,
            'nova')

    def _instance(self):
        uuid = uuidutils.generate_uuid()
        with self.target() as cctxt:
            instance_obj.Instance.create(cctxt, uuid, 'p-1', 'building')
        return uuid

    def held(self, consumer):
        with self.target() as cctxt:
            return usage.get_allocations_for_consumer(cctxt, consumer)

    def test_a_compute_hosts_report_is_written_in_the_cells_database(self):
        self._reported()
        with self.target() as cctxt:
            provider = providers.get_provider(cctxt, self.node_uuid)
        self.assertEqual(('host1', 4), (
            provider['name'], provider['inventories']['VCPU']['total']))

    def test_the_cells_scheduler_publishes_in_the_cells_database(self):
        self._cell_client()
        rows = cell_models.SchedulerAggregate.__table__
        engine = sa.create_engine(self.dbs.cell_urls[0])
        self.addCleanup(engine.dispose)
        with engine.connect() as conn:
            names = conn.execute(sa.select(rows.c.scheduler)).scalars()
            self.assertEqual([f'scheduler-{self.cell.name}'], list(names))

    def test_a_cell_conductor_claims_and_releases_on_the_cells_topic(self):
        self._reported()
        client = self._cell_client()
        instance = self._instance()

        client.claim_resources(self.ctx, instance, self.node_uuid,
                               FLAVOR_RESOURCES)
        released = client.release_resources(self.ctx, instance)

        self.assertEqual(({self.node_uuid: FLAVOR_RESOURCES}, {}),
                         (released, self.held(instance)))

    def test_the_api_level_gets_the_host_scheduled_by_its_cell(self):
        self._reported()
        client = self._api_client()
        time.sleep(READ_WAIT)  # the API level read the cell's new row
        instance = uuidutils.generate_uuid()

        [[chosen]] = client.select_destinations(self.ctx, {'flavor': FLAVOR},
                                                [instance])

        self.assertEqual((self.node_uuid, self.cell.uuid),
                         (chosen['compute_node_uuid'], chosen['cell_uuid']))
        self.assertEqual({self.node_uuid: FLAVOR_RESOURCES},
                         self.held(instance))

    def test_the_api_level_releases_in_the_cell_named(self):
        self._reported()
        instance = self._instance()
        self._cell_client().claim_resources(self.ctx, instance,
                                            self.node_uuid, FLAVOR_RESOURCES)

        released = self._api_client().release_resources(
            self.ctx, instance, cell_uuid=self.cell.uuid)

        self.assertEqual({self.node_uuid: FLAVOR_RESOURCES}, released)

    def test_no_valid_host_reaches_the_client_as_itself(self):
        client = self._api_client()

        exc = self.assertRaises(
            exception.NoValidHost, client.select_destinations,
            self.ctx, {'flavor': FLAVOR}, [uuidutils.generate_uuid()])
        self.assertNotIn('Traceback', str(exc))

    def test_a_report_naming_another_cell_is_refused_and_logged_once(self):
        exc = self.assertRaises(
            exception.CellNotAuthorized, self._cell_client().update_provider,
            self.ctx, self.node_uuid, 'host1', 'another-cell', INVENTORY)

        self.assertIn("'another-cell', not of this one", str(exc))
        refusals = [line for line in self.cell_scheduler.stderr.splitlines()
                    if 'Refused update_provider' in line]
        self.assertEqual(1, len(refusals), self.cell_scheduler.stderr)
        self.assertIn('WARNING', refusals[0])
        self.assertIn(f'from the bus of cell {self.cell.name}', refusals[0])
        # Once: not repeated as the exception's own text either.
        self.assertNotIn('CellNotAuthorized', refusals[0])

    def _assert_stops_cleanly(self, scheduler):
        scheduler.wait_started()

        code = scheduler.terminate()

        stderr = scheduler.stderr
        self.assertEqual(0, code, stderr)
        self.assertNotIn('Traceback', stderr)
        self.assertIn('Caught SIGTERM, stopping', stderr)
        return scheduler_cmd.parse_counters(stderr)

    def test_sigterm_stops_the_cells_scheduler_cleanly(self):
        [counters] = self._assert_stops_cleanly(self.cell_scheduler)
        self.assertEqual((0, 0), (counters['claims_tried'],
                                  counters['failed_claims']))

    def test_sigterm_stops_the_api_levels_scheduler_cleanly(self):
        [counters] = self._assert_stops_cleanly(self.api_scheduler)
        self.assertEqual(0, counters['requests_placed'])

    def test_the_cells_scheduler_logs_its_claims_as_it_stops(self):
        self._reported()
        client = self._api_client()
        time.sleep(READ_WAIT)  # the API level read the cell's new row
        client.select_destinations(self.ctx, {'flavor': FLAVOR},
                                   [uuidutils.generate_uuid()])

        [counters] = self._assert_stops_cleanly(self.cell_scheduler)

        self.assertEqual((1, 0), (counters['claims_tried'],
                                  counters['failed_claims']))


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
        self.assertIn('--cell NAME', result.stdout)
        self.assertIn('cellboot-scheduler.NAME', result.stdout)

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

    def test_a_cell_scheduler_without_the_cells_database_is_one_line(self):
        config = self._config(transport_url='fake://')

        self.assertOneErrorLine(
            self._run('--config-file', config, '--cell', 'cell1'),
            'a scheduler of cell cell1 needs the cell\'s [database] '
            'connection')

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
