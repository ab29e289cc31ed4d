"""``cellboot all-in-one`` as a user runs it: a process, a state dir."""

import argparse
import os
import re
import signal
import socket
import subprocess
import sys

import fixtures

from cellboot.allinone import command
from cellboot.allinone import demo
from cellboot.cli import client as cli_client
from cellboot.cli import exit_codes
from tests import base

_SUMMARY = re.compile(r'^Summary: (\d+) ACTIVE, (\d+) ERROR, (\d+) '
                      r'reschedules?, (\d+) moved to another cell, '
                      r'[\d.]+ s$', re.MULTILINE)

# A line break, non-ASCII and a byte that is not UTF-8.
_HOSTILE = os.fsencode('cell1\nERROR: forged \u00e9\u202e\udcff')

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
    return tuple(int(value) for value in found.groups())


class DemoTest(base.TestCase):

    DEMO = ('--demo', '6', '--cells', '2', '--hosts-per-cell', '2',
            '--fail-host', 'cell1-host1')

    def setUp(self):
        super().setUp()
        self.state_dir = self.useFixture(fixtures.TempDir()).path

    def test_demo_boots_every_server_active_then_reuses_the_state_dir(self):
        first = _all_in_one(self.state_dir, *self.DEMO)
        self.assertEqual(0, first.returncode, first.stderr)
        active, error, reschedules, _moves = _summary(first)
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

    def test_demo_moves_the_builds_of_a_failing_cell_to_another(self):
        # One host per cell: cell2's fails every build and, having no
        # alternate, cell2 hands it back at once. The first demo fills
        # cell1 (where every server ends); in the second, cell2 is the
        # roomier cell (its host never keeps a server), so its servers
        # are sent there first and moved: no tie left to chance.
        failing = ('--demo', '2', '--cells', '2', '--hosts-per-cell', '1',
                   '--fail-cell', 'cell2')
        first = _all_in_one(self.state_dir, *failing)
        self.assertEqual(0, first.returncode, first.stdout)
        self.assertEqual((2, 0), _summary(first)[:2])
        process = _all_in_one(self.state_dir, *failing)
        self.assertEqual(0, process.returncode, process.stdout)
        active, error, _reschedules, moves = _summary(process)
        self.assertEqual((2, 0), (active, error))
        self.assertGreaterEqual(moves, 1)
        rows = re.findall(r'^\| demo-\d +\| ACTIVE +\| (\S+) +\| (\S+) ',
                          process.stdout, re.MULTILINE)
        self.assertEqual([('cell1', 'cell1-host1')] * 2, rows)

    def test_demo_exits_non_zero_when_a_server_ends_in_error(self):
        process = _all_in_one(self.state_dir, '--demo', '1', '--cells', '1',
                              '--hosts-per-cell', '1', '--fail-host',
                              'cell1-host1')
        self.assertEqual(exit_codes.NOT_ACTIVE, process.returncode,
                         process.stdout)
        self.assertEqual((0, 1), _summary(process)[:2])


class SummaryTest(base.TestCase):

    def test_the_summary_counts_each_outcome(self):
        result = demo.Result([{'status': 'ACTIVE'}, {'status': 'ACTIVE'},
                              {'status': 'ERROR'}], 2, 4.25, moves=3)
        self.assertEqual('Summary: 2 ACTIVE, 1 ERROR, 2 reschedules, 3 '
                         'moved to another cell, 4.2 s', result.summary())

    def test_one_reschedule_is_singular(self):
        result = demo.Result([{'status': 'ACTIVE'}], 1, 0.5)
        self.assertEqual('Summary: 1 ACTIVE, 0 ERROR, 1 reschedule, 0 '
                         'moved to another cell, 0.5 s', result.summary())


class FailHostsTest(base.TestCase):
    """What --fail-host and --fail-cell make fail, checked in-process."""

    def _args(self, hosts=(), cells=(), cell_count=3, hosts_per_cell=2):
        return argparse.Namespace(cells=cell_count,
                                  hosts_per_cell=hosts_per_cell,
                                  fail_hosts=list(hosts),
                                  fail_cells=list(cells))

    def test_a_failing_cell_is_each_of_its_hosts_once(self):
        self.assertEqual(
            ['cell3-host2', 'cell1-host1', 'cell3-host1'],
            command.fail_hosts(self._args(['cell3-host2', 'cell1-host1'],
                                          ['cell3', 'cell3'])))

    def test_a_hostile_name_is_quoted_in_ascii_and_cut_short(self):
        for value in ('c' * 20000, os.fsdecode(_HOSTILE)):
            for args in (self._args(cells=[value]),
                         self._args(hosts=[value])):
                error = self.assertRaises(cli_client.CLIError,
                                          command.fail_hosts, args)
                self.assertLess(len(error.message), 200, error.message)
                self.assertTrue(error.message.isascii(), error.message)
                self.assertNotIn('\n', error.message)

    def test_nothing_fails_unless_asked(self):
        self.assertEqual([], command.fail_hosts(self._args()))

    def test_a_cell_beyond_the_deployment_is_refused(self):
        error = self.assertRaises(
            cli_client.CLIError, command.fail_hosts,
            self._args(cells=['cell1', 'cell4']))
        self.assertEqual(exit_codes.USAGE, error.code)
        self.assertEqual("--fail-cell 'cell4' is not a cell of this "
                         "deployment; its cells are cell1 ... cell3",
                         error.message)


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

    def test_an_unknown_fail_cell_is_a_usage_error(self):
        process = _all_in_one(self.state_dir, '--demo', '1', '--cells', '2',
                              '--fail-cell', 'cell3')
        self.assertOneLineError(process, exit_codes.USAGE, "'cell3'")
        self.assertIn('cell1 ... cell2', process.stderr)
        self.assertEqual([], os.listdir(self.state_dir))

    def test_a_hostile_fail_cell_or_host_is_one_short_line(self):
        # Very long; a line break, non-ASCII and a byte that is not UTF-8
        # (argv decodes it as a lone surrogate): one ERROR line each, the
        # value quoted in ASCII and cut short, nothing created.
        for option, value in (('--fail-cell', 'c' * 20000),
                              ('--fail-host', _HOSTILE)):
            process = _all_in_one(self.state_dir, '--demo', '1', option,
                                  value)
            self.assertOneLineError(process, exit_codes.USAGE, option)
            line = process.stderr.rstrip('\n')
            self.assertLess(len(line), 300, line[:300])
            self.assertTrue(line.isascii(), line)
            self.assertEqual([], os.listdir(self.state_dir))

    def test_zero_cells_is_a_usage_error(self):
        process = _all_in_one(self.state_dir, '--cells', '0')
        self.assertOneLineError(process, exit_codes.USAGE, '--cells')

    def test_a_port_in_use_is_a_one_line_error_and_creates_nothing(self):
        state_dir = os.path.join(self.state_dir, 'new')
        with socket.socket() as taken:
            taken.bind(('127.0.0.1', 0))
            taken.listen()
            port = str(taken.getsockname()[1])
            process = subprocess.run(
                [sys.executable, '-m', 'cellboot.cmd.cellboot', 'all-in-one',
                 '--state-dir', state_dir, '--port', port, '--demo',
                 '1', '--cells', '1', '--hosts-per-cell', '1'],
                capture_output=True, text=True, timeout=TIMEOUT)
        self.assertOneLineError(process, exit_codes.ERROR, port)
        self.assertIn('choose another --port', process.stderr)
        self.assertEqual('', process.stdout)
        self.assertFalse(os.path.exists(state_dir))

    def test_a_state_dir_that_cannot_be_made_is_a_one_line_error(self):
        a_file = os.path.join(self.state_dir, 'a-file')
        open(a_file, 'w').close()
        process = _all_in_one(os.path.join(a_file, 'state'), '--demo', '1')
        self.assertOneLineError(process, exit_codes.ERROR,
                                'cannot create the state directory')
        self.assertEqual(['a-file'], os.listdir(self.state_dir))

    def test_a_log_file_that_cannot_be_written_is_a_one_line_error(self):
        config = os.path.join(self.state_dir, 'cellboot.conf')
        with open(config, 'w') as conf:
            conf.write(f'[DEFAULT]\nlog_dir = {config}\n')
        process = _all_in_one(self.state_dir, '--demo', '1',
                              '--config-file', config)
        self.assertOneLineError(process, exit_codes.ERROR,
                                'cannot write the log file')
        self.assertIn('log_dir', process.stderr)


class ServeTest(base.TestCase):
    """Without --demo it serves the API until SIGINT, then exits 0."""

    def test_serves_the_api_until_interrupted(self):
        state_dir = self.useFixture(fixtures.TempDir()).path
        process = subprocess.Popen(
            [sys.executable, '-m', 'cellboot.cmd.cellboot', 'all-in-one',
             '--state-dir', state_dir, '--port', '0', '--cells', '1',
             '--hosts-per-cell', '1'],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(process.kill)
        url = None
        started = []
        for line in process.stdout:
            started.append(line)
            found = re.search(r'--url (\S+) ', line)
            if found:
                url = found.group(1)
                break
        self.assertIsNotNone(url, 'the all-in-one never said it was ready')
        token = re.search(r'--token (\S+) ', started[-1]).group(1)
        listing = subprocess.run(
            [sys.executable, '-m', 'cellboot.cmd.cellboot', '--url', url,
             '--token', token, 'server', 'list'], capture_output=True,
            text=True,
            timeout=TIMEOUT)
        self.assertEqual(0, listing.returncode, listing.stderr)
        log_file = os.path.join(state_dir, 'all-in-one.log')
        self.assertEqual(f'* Logs in {log_file}\n', started[0])
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=TIMEOUT)
        self.assertEqual(0, process.returncode, err)
        # One line for the stop; no traceback, no log on the terminal.
        self.assertRegex(out, r'^cellboot all-in-one: SIGINT; 1 service '
                              r'stopped in [0-9.]+ s\n$')
        self.assertEqual('', err)
        with open(log_file) as log:
            self.assertIn('Caught SIGINT, stopping', log.read())
