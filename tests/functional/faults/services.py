"""Stop and restart this machine's own MariaDB, RabbitMQ and Redis.

A fault test must restart the real server, because a restart is what
loses what a server keeps only in memory: a non-durable queue and its
messages, Redis's every key, a database's open connections and
uncommitted transactions. A TCP proxy only imitates the last of these.

Each server is restarted the way its operator would, with what the
machine has (``mysqladmin``, ``rabbitmqctl``, ``redis-cli``), and
``outage`` always brings it back in a ``finally`` and waits until it
answers again: a failed test must not leave the machine without its
services, for the next test or for CI. Tests that use this run alone
(``make faults``), never beside other tests of the same server.

Restarting needs the rights of the machine's administrator (the tests
run as root here and in CI); without them the test is skipped, or fails
under ``CI=true``.
"""

import shutil
import socket
import subprocess
import time

from tests import fixtures as cb_fixtures

# Seconds a server may take to answer again after its start.
READY_TIMEOUT = 90
# Seconds one control command may take.
COMMAND_TIMEOUT = 60
POLL = 0.2


def _run(*argv):
    return subprocess.run(argv, capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT, check=True)


def _answers(port):
    try:
        socket.create_connection(('127.0.0.1', port), 1).close()
        return True
    except OSError:
        return False


def _wait(what, check, timeout=READY_TIMEOUT):
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f'{what} did not come back within '
                                 f'{timeout} s')
        time.sleep(POLL)


class Server:
    """One of the machine's servers: ``stop``, ``start``, ``ready``."""

    name = None
    port = None
    tools = ()

    def usable(self):
        """Skip (fail under CI) unless it runs and can be restarted."""
        missing = [tool for tool in self.tools if shutil.which(tool) is None]
        if missing:
            cb_fixtures.service_unavailable(
                f'cannot restart {self.name}: {", ".join(missing)} not '
                f'found')
        if not _answers(self.port):
            cb_fixtures.service_unavailable(
                f'{self.name} does not answer on 127.0.0.1:{self.port}')

    def stop(self):
        raise NotImplementedError

    def start(self):
        raise NotImplementedError

    def ready(self):
        return _answers(self.port)

    def wait_down(self):
        _wait(f'{self.name} stopping', lambda: not _answers(self.port))

    def wait_ready(self):
        _wait(self.name, self.ready)


class MariaDB(Server):
    """``mysqladmin shutdown``, then the server binary in the background
    (its configuration names the user it runs as)."""

    name = 'MariaDB'
    port = 3306
    tools = ('mysqladmin', 'start-stop-daemon')
    binary = '/usr/sbin/mariadbd'

    def stop(self):
        _run('mysqladmin', '-uroot', 'shutdown')
        self.wait_down()

    def start(self):
        _run('start-stop-daemon', '--start', '--oknodo', '--background',
             '--exec', self.binary)

    def ready(self):
        try:
            _run('mysqladmin', '-uroot', '--connect-timeout=1', 'ping')
            return True
        except (subprocess.SubprocessError, OSError):
            return False


class RabbitMQ(Server):
    """``rabbitmqctl stop_app``/``start_app``: the broker's node stays up
    (its vhosts, users and durable queues are on disk) while the AMQP
    listener and everything held in memory go away."""

    name = 'RabbitMQ'
    port = 5672
    tools = ('rabbitmqctl',)

    def stop(self):
        _run('rabbitmqctl', '-q', 'stop_app')
        self.wait_down()

    def start(self):
        _run('rabbitmqctl', '-q', 'start_app')

    def ready(self):
        if not _answers(self.port):
            return False
        try:
            _run('rabbitmqctl', '-q', 'await_startup')
            return True
        except (subprocess.SubprocessError, OSError):
            return False


class Redis(Server):
    """``SHUTDOWN NOSAVE``, then ``redis-server`` again with the settings
    the running one had (read with ``CONFIG GET`` before it stops): it
    comes back empty, as a Redis that keeps nothing on disk does."""

    name = 'Redis'
    port = 6379
    tools = ('redis-cli', 'redis-server')
    _SETTINGS = ('bind', 'port', 'dir', 'save', 'appendonly', 'logfile')

    def __init__(self):
        self._argv = None

    def _settings(self):
        settings = {}
        for name in self._SETTINGS:
            answer = _run('redis-cli', '-p', str(self.port), '--raw',
                          'config', 'get', name).stdout.splitlines()
            if len(answer) >= 2:
                settings[name] = answer[1]
        return settings

    def stop(self):
        settings = self._settings()
        argv = ['redis-server', '--daemonize', 'yes']
        for name, value in settings.items():
            argv += [f'--{name}', *(value.split() or [''])]
        self._argv = argv
        try:
            _run('redis-cli', '-p', str(self.port), 'shutdown', 'nosave')
        except subprocess.CalledProcessError:
            pass    # the connection closes as the server exits
        self.wait_down()

    def start(self):
        _run(*self._argv)


def outage(server, seconds):
    """``server`` stopped for ``seconds``, then started and answering.

    The start and the wait happen whatever went wrong before them.
    Returns the seconds it was unreachable, from the stop's end to
    answering again.
    """
    server.stop()
    down_at = time.monotonic()
    try:
        time.sleep(seconds)
    finally:
        server.start()
        server.wait_ready()
    return round(time.monotonic() - down_at, 1)
