"""A service's logs and its stop, as an operator who runs it sees them.

``cellboot-scheduler --cell`` on an SQLite cell database and the
in-process ``fake://`` bus (nobody calls it: what is tested is the
process, not the scheduling): with ``[DEFAULT] log_file`` its logs go to
that file and none to the terminal; a stop prints one line on stdout;
a log directory it cannot write is one ``ERROR:`` line, no traceback.
"""

import os
import signal
import subprocess
import sys
import time

from cellboot.flowrun import schema
from tests import base

# Seconds the service may take to start, and to stop.
START_TIMEOUT = 60
STOP_TIMEOUT = 30
# What the service runner logs once every service has started.
STARTED = 'waiting for SIGTERM or SIGINT'
CELL = 'cell1'
STOP_LINE = (r'^cellboot-scheduler: %s; 2 services stopped in '
             r'[0-9]+\.[0-9] s$')


class ServiceLogFileTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.cell_db = 'sqlite:///' + os.path.join(self.state_path,
                                                   'cell1.sqlite')
        schema.sync_cell_database(self.cell_db)

    def _config(self, **defaults):
        path = os.path.join(self.state_path, 'cellboot.conf')
        lines = ['[DEFAULT]', f'state_path = {self.state_path}',
                 f'transport_url = fake:///{CELL}']
        lines += [f'{name} = {value}' for name, value in defaults.items()]
        lines += ['[database]', f'connection = {self.cell_db}']
        with open(path, 'w') as conf:
            conf.write('\n'.join(lines) + '\n')
        return path

    def _command(self, config):
        return [sys.executable, '-m', 'cellboot.cmd.scheduler', '--cell',
                CELL, '--config-file', config]

    def _start(self, config):
        process = subprocess.Popen(
            self._command(config), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        self.addCleanup(_kill, process)
        return process

    def _wait_logged(self, process, path, text):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if os.path.exists(path):
                with open(path) as log:
                    if text in log.read():
                        return
            if process.poll() is not None:
                self.fail(f'the service exited with {process.returncode}: '
                          f'{process.communicate()}')
            time.sleep(0.1)
        self.fail(f'{text!r} never logged in {path}')

    def _stopped_by(self, signum, log_file):
        process = self._start(self._config(log_file=log_file))
        self._wait_logged(process, log_file, STARTED)
        process.send_signal(signum)
        out, err = process.communicate(timeout=STOP_TIMEOUT)
        self.assertEqual(0, process.returncode, err)
        return out, err

    def test_the_logs_go_to_log_file_and_a_stop_prints_one_line(self):
        log_file = os.path.join(self.state_path, 'scheduler.log')
        out, err = self._stopped_by(signal.SIGTERM, log_file)
        self.assertEqual('', err)
        self.assertRegex(out, STOP_LINE % 'SIGTERM')
        self.assertEqual(1, len(out.splitlines()), out)
        with open(log_file) as log:
            logged = log.read()
        self.assertIn('Caught SIGTERM, stopping', logged)
        self.assertIn('Scheduler counters at stop', logged)

    def test_ctrl_c_prints_one_line_and_no_traceback(self):
        log_file = os.path.join(self.state_path, 'scheduler.log')
        out, err = self._stopped_by(signal.SIGINT, log_file)
        self.assertEqual('', err)
        self.assertRegex(out, STOP_LINE % 'SIGINT')
        self.assertEqual(1, len(out.splitlines()), out)

    def test_a_log_dir_that_cannot_be_written_is_one_error_line(self):
        # Not a directory (a file), and missing: the tests run as root,
        # to whom a directory's mode refuses nothing.
        a_file = os.path.join(self.state_path, 'a-file')
        open(a_file, 'w').close()
        for log_dir in (a_file, os.path.join(self.state_path, 'missing')):
            result = subprocess.run(
                self._command(self._config(log_dir=log_dir)),
                capture_output=True, text=True, timeout=STOP_TIMEOUT)
            self.assertEqual(1, result.returncode, result.stderr)
            self.assertEqual([], result.stdout.splitlines())
            lines = result.stderr.splitlines()
            self.assertEqual(1, len(lines), result.stderr)
            self.assertTrue(lines[0].startswith('ERROR: '), lines)
            self.assertIn('cannot write the log file ' + os.path.join(
                log_dir, 'cellboot-scheduler.log'), lines[0])
            self.assertIn('log_dir', lines[0])


def _kill(process):
    if process.poll() is None:
        process.kill()
        process.communicate()
