"""One run of the devstack plugin under ``harness.sh``, as a fixture.

``Stack`` gives a run everything of its own, so that runs in parallel
(two pytest workers, two checkouts) never meet: RabbitMQ vhosts (the
API's, and cell1's, which the plugin adds and the clean-up deletes), a
database name prefix, a free API port, a directory for the
configuration, the state, the pid files and the logs. ``harness``
runs ``harness.sh stack|unstack|clean`` with that environment; clean-up
runs ``unstack`` and ``clean`` whatever the test did, then kills and
drops whatever they left, so that a failed test leaves nothing behind
either. When the test fails, the harness's output and every service's
log are attached to it.
"""

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid

import fixtures
from testtools import content

from tests import fixtures as cb_fixtures
from tests.functional.multiprocess import rabbit

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(HERE, 'harness.sh')
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
DEVSTACK_DIR = os.path.join(REPO, 'devstack')
VENV_BIN = os.path.dirname(sys.executable)

# Seconds one harness command may take (stack: databases, migrations,
# six services starting on a loaded 2-core machine).
HARNESS_TIMEOUT = 240
# The last characters of each log attached to a failed test.
LOG_TAIL = 20000


def mysql_admin():
    """(host, port, user, password) of MariaDB's administrator."""
    spec = os.environ.get('CELLBOOT_MYSQL_ADMIN_URL', '127.0.0.1:3306:root:')
    host, port, user, password = (spec.split(':', 3) + [''] * 4)[:4]
    return host, port or '3306', user, password


def mysql(sql):
    """Run ``sql`` with the mysql client as the administrator; stdout."""
    host, port, user, password = mysql_admin()
    result = subprocess.run(
        ['mysql', '-N', '-B', f'-u{user}', f'-h{host}', f'-P{port}',
         '-e', sql],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, 'MYSQL_PWD': password})
    if result.returncode != 0:
        raise AssertionError(f'mysql {sql!r}: {result.stderr.strip()}')
    return result.stdout


def require_tools():
    """Skip (fail under CI) when the plugin's outside tools are missing."""
    for tool, why in (('mysql', 'the MariaDB client'),
                      ('curl', 'curl (the plugin waits for the API with '
                               'it)'),
                      ('setsid', 'setsid (util-linux)')):
        if shutil.which(tool) is None:
            cb_fixtures.service_unavailable(
                f'the devstack plugin test needs {why}: {tool} is not on '
                f'PATH')
    try:
        mysql('SELECT 1')
    except (AssertionError, OSError, subprocess.SubprocessError) as exc:
        cb_fixtures.service_unavailable(
            f'MariaDB is not reachable as its administrator ({exc}); start '
            f'it or set CELLBOOT_MYSQL_ADMIN_URL=host:port:user:password')


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def alive(pid):
    """True while ``pid`` runs (a zombie not yet reaped is gone)."""
    try:
        with open(f'/proc/{pid}/stat') as stat:
            return stat.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (OSError, IndexError):
        return False


def processes_naming(text):
    """Pids of the live processes whose command line contains ``text``."""
    found = []
    for path in glob.glob('/proc/[0-9]*/cmdline'):
        pid = int(path.split('/')[2])
        if pid == os.getpid():
            continue
        try:
            with open(path, 'rb') as cmdline:
                argv = cmdline.read().replace(b'\0', b' ').decode(
                    errors='replace')
        except OSError:
            continue
        if text in argv and alive(pid):
            found.append(pid)
    return found


class Stack(fixtures.Fixture):
    """A devstack run of the plugin in ``setup`` mode with ``computes``."""

    def __init__(self, test, setup='superconductor', computes=1):
        super().__init__()
        self.test = test
        self.setup = setup
        self.computes = computes

    def _setUp(self):
        require_tools()
        self.vhost = self.useFixture(rabbit.Vhost()).name
        self.cell1_vhost = f'{self.vhost}-cell1'
        self.addCleanup(rabbit.delete_vhost, self.cell1_vhost)
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.conf_dir = os.path.join(self.dir, 'etc', 'cellboot')
        self.conf = os.path.join(self.conf_dir, 'cellboot.conf')
        self.state_path = os.path.join(self.dir, 'data', 'cellboot')
        self.prefix = f'cbds_{uuid.uuid4().hex[:10]}'
        self.port = free_port()
        self.api_url = f'http://127.0.0.1:{self.port}/v2.1'
        self.outputs = []
        # How long each command and phase took, attached to a failure.
        self.timings = []
        self.env = {
            **os.environ,
            'HARNESS_DIR': self.dir,
            'HARNESS_RABBIT_VHOST': self.vhost,
            'HARNESS_VENV': os.path.dirname(VENV_BIN),
            'CELLBOOT_CELLSV2_SETUP': self.setup,
            'CELLBOOT_CELL1_VHOST': self.cell1_vhost,
            'CELLBOOT_NUM_COMPUTES': str(self.computes),
            'CELLBOOT_CONF_DIR': self.conf_dir,
            'CELLBOOT_DB_PREFIX': self.prefix,
            'CELLBOOT_SERVICE_PORT': str(self.port),
            'CELLBOOT_COMPUTE_HOST_PREFIX': f'{self.prefix}-cpu',
            'CELLBOOT_FAKE_SPAWN_TIME': '0.2',
        }
        self.addCleanup(self._remove_leftovers)
        self.addCleanup(self.harness, 'clean', check=False)
        self.addCleanup(self.harness, 'unstack', check=False)
        self.test.addOnException(self._attach_logs)

    def harness(self, command, check=True, env=None):
        """``harness.sh COMMAND``; its CompletedProcess (checked)."""
        started = time.monotonic()
        result = subprocess.run(
            ['bash', HARNESS, command], env={**self.env, **(env or {})},
            capture_output=True, text=True, timeout=HARNESS_TIMEOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)
        self.outputs.append((command, result))
        self.timings.append(
            f'harness.sh {command}: {time.monotonic() - started:.1f} s')
        self.timings += [line for line in result.stdout.splitlines()
                         if line.startswith('harness: ') and ' took ' in line]
        if check and result.returncode != 0:
            raise AssertionError(
                f'harness.sh {command} exited {result.returncode}:\n'
                f'{result.stdout[-LOG_TAIL:]}\n{result.stderr[-LOG_TAIL:]}')
        return result

    # -- what a run left -----------------------------------------------------

    def pid_files(self):
        """{service: pid} of the pid files run_process wrote."""
        pids = {}
        for path in glob.glob(os.path.join(self.dir, 'pids', '*.pid')):
            with open(path) as pid_file:
                pids[os.path.basename(path)[:-len('.pid')]] = int(
                    pid_file.read())
        return pids

    def processes(self):
        """Live processes started with this run's configuration."""
        return processes_naming(self.conf_dir)

    def databases(self):
        return mysql(f"SHOW DATABASES LIKE '{self.prefix}%'").split()

    def _remove_leftovers(self):
        for pid in self.processes():
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        for name in self.databases():
            mysql(f'DROP DATABASE IF EXISTS `{name}`')

    def _attach_logs(self, exc_info):
        self.test.addDetail('timings', content.text_content(
            '\n'.join(self.timings)))
        for command, result in self.outputs:
            self.test.addDetail(f'harness:{command}', content.text_content(
                (result.stdout + result.stderr)[-LOG_TAIL:]))
        for path in sorted(glob.glob(os.path.join(self.dir, 'logs', '*'))):
            with open(path, errors='replace') as log:
                text = log.read()[-LOG_TAIL:]
            name = os.path.basename(path)
            self.test.addDetail(f'log:{name}', content.text_content(text))
            if name.endswith('.log'):
                sys.stderr.write(f'\n===== {name} =====\n{text}')
