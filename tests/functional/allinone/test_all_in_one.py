"""``cellboot all-in-one`` as a user runs it: a process, a state dir."""

import os
import re
import signal
import socket
import subprocess
import sys

import fixtures

from cellboot.cli import exit_codes
from tests import base

_SUMMARY = re.compile(r'^Summary: (\d+) ACTIVE, (\d+) ERROR, (\d+) '
                      r'reschedules, [\d.]+ s$', re.MULTILINE)

# A demo of a few servers takes seconds; this only stops a hang.
TIMEOUT = 240


def _all_in_one(state_dir, *args):
    return subprocess.run(
        [sys.executable, '-m', 'cellboot.cmd.cellboot', 'all-in-one',
         '--state-dir', state_dir, '--port', '0', *args],
        capture_output=True, text=True, timeout=TIMEOUT)


def _summary(process):
    found = _SUMMARY.search(process.stdout)
    if found is None:
        raise AssertionError(f'no summary line in:\n{process.stdout}\n'
                             f'{process.stderr}')
    active, error, reschedules = (int(value) for value in found.groups())
    return active, error, reschedules


class DemoTest(base.TestCase):

    DEMO = ('--demo', '6', '--cells', '2', '--hosts-per-cell', '2',
            '--fail-host', 'cell1-host1')

    def setUp(self):
        super().setUp()
        self.state_dir = self.useFixture(fixtures.TempDir()).path

    def test_demo_boots_every_server_active_then_reuses_the_state_dir(self):
        first = _all_in_one(self.state_dir, *self.DEMO)
        self.assertEqual(0, first.returncode, first.stderr)
        active, error, reschedules = _summary(first)
        self.assertEqual((6, 0), (active, error))
        self.assertGreaterEqual(reschedules, 1)
        self.assertIn('* cell1 created', first.stdout)

        second = _all_in_one(self.state_dir, *self.DEMO)
        self.assertEqual(0, second.returncode, second.stderr)
        self.assertEqual((6, 0), _summary(second)[:2])
        self.assertIn('* cell0 reused', second.stdout)
        self.assertIn('* cell1 reused', second.stdout)
        self.assertIn('* cell2 reused', second.stdout)

    def test_demo_table_names_the_cell_and_host_of_each_server(self):
        process = _all_in_one(self.state_dir, '--demo', '2', '--cells', '1',
                              '--hosts-per-cell', '1')
        self.assertEqual(0, process.returncode, process.stderr)
        rows = re.findall(r'^\| (demo-\d) +\| ACTIVE +\| (\S+) +\| (\S+) ',
                          process.stdout, re.MULTILINE)
        self.assertEqual([('demo-1', 'cell1', 'cell1-host1'),
                          ('demo-2', 'cell1', 'cell1-host1')], rows)

    def test_demo_exits_non_zero_when_a_server_ends_in_error(self):
        process = _all_in_one(self.state_dir, '--demo', '1', '--cells', '1',
                              '--hosts-per-cell', '1', '--fail-host',
                              'cell1-host1')
        self.assertEqual(exit_codes.NOT_ACTIVE, process.returncode,
                         process.stdout)
        self.assertEqual((0, 1), _summary(process)[:2])


class BadInputTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.state_dir = self.useFixture(fixtures.TempDir()).path

    def assertOneLineError(self, process, code, fragment):
        self.assertEqual(code, process.returncode, process.stderr)
        self.assertEqual(1, len(process.stderr.splitlines()),
                         process.stderr)
        self.assertIn(fragment, process.stderr)

    def test_an_unknown_fail_host_is_a_usage_error(self):
        process = _all_in_one(self.state_dir, '--demo', '1',
                              '--fail-host', 'cell9-host1')
        self.assertOneLineError(process, exit_codes.USAGE, 'cell9-host1')
        self.assertEqual([], os.listdir(self.state_dir))

    def test_zero_cells_is_a_usage_error(self):
        process = _all_in_one(self.state_dir, '--cells', '0')
        self.assertOneLineError(process, exit_codes.USAGE, '--cells')

    def test_a_port_in_use_is_a_one_line_error(self):
        with socket.socket() as taken:
            taken.bind(('127.0.0.1', 0))
            taken.listen()
            port = str(taken.getsockname()[1])
            process = subprocess.run(
                [sys.executable, '-m', 'cellboot.cmd.cellboot', 'all-in-one',
                 '--state-dir', self.state_dir, '--port', port, '--demo',
                 '1', '--cells', '1', '--hosts-per-cell', '1'],
                capture_output=True, text=True, timeout=TIMEOUT)
        self.assertOneLineError(process, exit_codes.ERROR, port)


class ServeTest(base.TestCase):
    """Without --demo it serves the API until SIGINT, then exits 0."""

    def test_serves_the_api_until_interrupted(self):
        state_dir = self.useFixture(fixtures.TempDir()).path
        process = subprocess.Popen(
            [sys.executable, '-m', 'cellboot.cmd.cellboot', 'all-in-one',
             '--state-dir', state_dir, '--port', '0', '--cells', '1',
             '--hosts-per-cell', '1'],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.addCleanup(process.kill)
        url = None
        for line in process.stdout:
            found = re.search(r'--url (\S+) ', line)
            if found:
                url = found.group(1)
                break
        self.assertIsNotNone(url, 'the all-in-one never said it was ready')
        listing = subprocess.run(
            [sys.executable, '-m', 'cellboot.cmd.cellboot', '--url', url,
             'server', 'list'], capture_output=True, text=True,
            timeout=TIMEOUT)
        self.assertEqual(0, listing.returncode, listing.stderr)
        process.send_signal(signal.SIGINT)
        self.assertEqual(0, process.wait(timeout=TIMEOUT))
