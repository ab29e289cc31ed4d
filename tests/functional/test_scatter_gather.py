"""scatter_gather_cells when one cell's database is down.

Healthy cells are real SQLite and MariaDB cell databases holding compute
nodes. The broken cell is either a TCP listener that accepts connections
and never says a word (a hung or partitioned server: the cell must yield
``did_not_respond_sentinel`` once the timeout is up, without holding up
the answer of the others) or a port where nothing listens (a stopped
server: the cell must yield a ``CellFailure`` right away).
"""

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

from oslo_utils import uuidutils

from cellboot import context
from cellboot.db.cell import reachability
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import compute_node
from tests import base
from tests.functional import tcp_proxy
from tests import fixtures as cb_fixtures

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TIMEOUT = 2.0
# Thread start-up and the healthy cells' own queries.
MARGIN = 1.5


class SilentListener:
    """A TCP server that accepts connections and never answers.

    Runs in a thread; ``stop()`` closes every socket and joins it.
    """

    def __init__(self):
        self._server = socket.create_server(('127.0.0.1', 0))
        self._server.settimeout(0.1)
        self.port = self._server.getsockname()[1]
        self._clients = []
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True,
                                        name='silent-listener')
        self._thread.start()

    def _accept(self):
        while not self._stopping.is_set():
            try:
                client, _addr = self._server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self._clients.append(client)

    def stop(self):
        self._stopping.set()
        self._thread.join(timeout=5)
        self._server.close()
        for client in self._clients:
            client.close()


def free_port():
    """A local port where nothing listens (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def mysql_url(port):
    return f'mysql+pymysql://u:p@127.0.0.1:{port}/x'


def _cell(name, url):
    return cell_mapping.CellMapping(uuid=uuidutils.generate_uuid(), name=name,
                                    database_connection=url,
                                    transport_url='fake://')


def _hosts(cctxt):
    return [node.host for node in compute_node.ComputeNode.get_all(cctxt)]


class ScatterGatherTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.ctx = context.get_admin_context()
        self.healthy = [self._healthy_cell('sqlite'),
                        self._healthy_cell('mysql')]

    def _healthy_cell(self, backend):
        url = self.useFixture(cb_fixtures.Database(backend,
                                                   schema='cell')).url
        cell = _cell(backend, url)
        with context.target_cell(self.ctx, cell) as cctxt:
            compute_node.ComputeNode.create(cctxt, f'{backend}-host', 'node',
                                            1, 512, 1)
        return cell

    def _gather(self, broken):
        start = time.monotonic()
        results = context.scatter_gather_cells(
            self.ctx, self.healthy + [broken], TIMEOUT, _hosts)
        return results, time.monotonic() - start

    def assertHealthyCellsAnswered(self, results):
        self.assertEqual(
            {cell.uuid: [f'{cell.name}-host'] for cell in self.healthy},
            {cell.uuid: results[cell.uuid] for cell in self.healthy})

    def _listener(self):
        listener = SilentListener()
        self.addCleanup(listener.stop)
        return listener

    def test_a_silent_cell_does_not_respond_within_the_timeout(self):
        broken = _cell('silent', mysql_url(self._listener().port))
        results, elapsed = self._gather(broken)
        self.assertIs(context.did_not_respond_sentinel, results[broken.uuid])
        self.assertLess(elapsed, TIMEOUT + MARGIN)

    def test_other_cells_answer_while_one_is_silent(self):
        broken = _cell('silent', mysql_url(self._listener().port))
        results, _elapsed = self._gather(broken)
        self.assertHealthyCellsAnswered(results)

    def test_a_refusing_cell_yields_a_cell_failure(self):
        broken = _cell('refusing', mysql_url(free_port()))
        results, elapsed = self._gather(broken)
        self.assertIsInstance(results[broken.uuid], context.CellFailure)
        self.assertTrue(context.is_cell_failure(results[broken.uuid]))
        self.assertLess(elapsed, TIMEOUT)

    def test_other_cells_answer_while_one_refuses(self):
        broken = _cell('refusing', mysql_url(free_port()))
        results, _elapsed = self._gather(broken)
        self.assertHealthyCellsAnswered(results)

    def test_a_silent_cell_does_not_keep_the_process_from_exiting(self):
        # A command that scatter-gathers (list_cells, discover_hosts) must
        # exit once it has its answer, even if a hung cell's thread is
        # still waiting for the server.
        script = textwrap.dedent('''
            import sys
            from cellboot import context
            from cellboot.conf import CONF
            from cellboot.objects import compute_node
            from tests.functional import test_scatter_gather as sg
            CONF([], project='cellboot', default_config_files=[])
            listener = sg.SilentListener()
            cell = sg._cell('silent', sg.mysql_url(listener.port))
            results = context.scatter_gather_cells(
                context.get_admin_context(), [cell], 0.5, sg._hosts)
            print(results[cell.uuid])
        ''')
        start = time.monotonic()
        proc = subprocess.run([sys.executable, '-c', script], cwd=REPO_ROOT,
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual('<cell did not respond>', proc.stdout.strip())
        self.assertLess(time.monotonic() - start, 15)


class SkipDownCellsTest(base.TestCase):
    """A cell found down is not waited for again by callers that may skip.

    The cell is a real MariaDB cell database behind a TCP proxy of the
    test: cut (refused) or black-holed (silent), then restored.
    """

    def setUp(self):
        super().setUp()
        self.ctx = context.get_admin_context()
        url = self.useFixture(cb_fixtures.Database('mysql',
                                                   schema='cell')).url
        self.proxy, proxied = tcp_proxy.in_front_of(url)
        self.addCleanup(self.proxy.stop)
        self.cell = _cell('proxied', proxied)
        with context.target_cell(self.ctx, self.cell) as cctxt:
            compute_node.ComputeNode.create(cctxt, 'proxied-host', 'node',
                                            1, 512, 1)
        self.cells = reachability.CELLS

    def _gather(self, skip=True, timeout=TIMEOUT):
        start = time.monotonic()
        result = context.scatter_gather_cells(
            self.ctx, [self.cell], timeout, _hosts,
            skip_down_cells=skip)[self.cell.uuid]
        return result, time.monotonic() - start

    def _wait_up(self):
        deadline = time.monotonic() + 30
        while self.cells.is_down(self.cell.uuid):
            self.assertLess(time.monotonic(), deadline, 'never found up')
            self._gather()
            time.sleep(0.1)

    def test_a_black_holed_cell_is_waited_for_once_then_skipped(self):
        self.assertEqual((['proxied-host'], True),
                         (self._gather()[0],
                          not self.cells.is_down(self.cell.uuid)))
        self.proxy.black_hole()
        result, elapsed = self._gather()
        self.assertIs(context.did_not_respond_sentinel, result)
        self.assertGreaterEqual(elapsed, TIMEOUT)
        self.assertTrue(self.cells.is_down(self.cell.uuid))
        for _attempt in range(5):
            result, elapsed = self._gather()
            self.assertIs(context.did_not_respond_sentinel, result)
            self.assertLess(elapsed, 0.5)
        # One call at a time reaches for the silent cell.
        self.assertEqual(1, self.cells.calls_in_flight(self.cell.uuid))
        self.proxy.restore()
        self._wait_up()
        self.assertEqual(['proxied-host'], self._gather()[0])

    def test_a_caller_that_may_not_skip_still_waits(self):
        self.proxy.black_hole()
        self._gather()
        self.assertTrue(self.cells.is_down(self.cell.uuid))
        result, elapsed = self._gather(skip=False, timeout=1.0)
        self.assertIs(context.did_not_respond_sentinel, result)
        self.assertGreaterEqual(elapsed, 1.0)
        self.proxy.restore()
        self._wait_up()

    def test_a_refusing_cell_is_down_until_it_answers_again(self):
        self._gather()
        self.proxy.cut()
        result, _elapsed = self._gather()
        self.assertIsInstance(result, context.CellFailure)
        self.assertTrue(self.cells.is_down(self.cell.uuid))
        result, elapsed = self._gather()
        self.assertTrue(context.is_cell_failure(result))
        self.assertLess(elapsed, 0.5)
        self.proxy.restore()
        self._wait_up()
        self.assertEqual(['proxied-host'], self._gather()[0])

    def test_an_error_of_the_cell_itself_is_an_answer(self):
        def fails(cctxt):
            raise exception.InstanceNotFound(instance_id='x')
        self.cells.not_answered(self.cell.uuid, self.cell.name, 'test')
        # The skipped call still runs, in the background, and clears it.
        context.scatter_gather_cells(self.ctx, [self.cell], TIMEOUT, fails,
                                     skip_down_cells=True)
        deadline = time.monotonic() + 10
        while self.cells.is_down(self.cell.uuid):
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
