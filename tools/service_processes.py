"""cellboot's daemons as real processes, each in a process group of its own.

``ServiceProcess`` starts a service command (``cellboot-conductor``,
``cellboot-scheduler``, ``cellboot-compute``, ``cellboot-api``) the way
an operator's init system does: its own session (so its whole process
group can be signalled), output into a log file, SIGTERM to stop and
SIGKILL if it does not stop in time. ``kill`` is the crash a chaos test
inflicts (SIGKILL, no clean-up in the service). ``wait_ready`` waits
until services log that they serve (so that several start in
parallel), ``stop_all`` stops a set of them at once.

Shared by ``tests.functional.multiprocess.processes`` (a fixture that
also attaches the logs to a failed test) and the benchmarks, which must
not import the test suite.
"""

import os
import signal
import subprocess
import sys
import time

# Seconds a service may take to start serving (imports, database, broker).
START_TIMEOUT = 60
# Seconds a service may take to stop after SIGTERM before SIGKILL.
STOP_TIMEOUT = 15
# What service_runner logs once every service of a process is started.
READY_LINE = 'waiting for SIGTERM or SIGINT'
# The last characters of a log quoted in an error.
LOG_TAIL = 20000


class ServiceProcess:
    """One started service: its command, process and log file.

    ``env``: the environment of the process (default: this one's).
    """

    def __init__(self, name, argv, log_path, env=None):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        # The log as it was at stop(): the log directory may go first.
        self.final_log = None
        with open(log_path, 'wb') as log:
            self.process = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True, env=env)

    def log(self):
        if self.final_log is not None:
            return self.final_log
        try:
            with open(self.log_path, errors='replace') as log:
                return log.read()
        except OSError:
            return ''

    def ready(self):
        """True once it serves; raises if it exited instead."""
        if self.process.poll() is not None:
            raise AssertionError(
                f'{self.name} exited with code {self.process.returncode} '
                f'before serving:\n{self.log()[-LOG_TAIL:]}')
        return READY_LINE in self.log()

    def alive(self):
        return self.process.poll() is None

    def signal_group(self, signum):
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:
            pass

    def stop(self):
        """SIGTERM the process group; SIGKILL it if it lingers."""
        if self.process.poll() is None:
            self.signal_group(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
        # Whatever the service started is killed with it.
        self.signal_group(signal.SIGKILL)
        try:
            self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        self.final_log = self.log()

    def kill(self):
        """SIGKILL the process group and reap it: a crash, not a stop."""
        self.signal_group(signal.SIGKILL)
        try:
            self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass


def command(module, *args):
    """The argv of ``python -m module args`` with this interpreter."""
    return [sys.executable, '-m', module, *args]


def wait_ready(services, timeout=START_TIMEOUT):
    """Wait until every one of ``services`` serves; AssertionError naming
    those that do not after ``timeout`` s, or quoting the log of one
    that exited."""
    deadline = time.monotonic() + timeout
    waiting = list(services)
    while waiting:
        waiting = [service for service in waiting if not service.ready()]
        if waiting and time.monotonic() > deadline:
            raise AssertionError(
                f'not serving after {timeout} s: '
                f'{", ".join(s.name for s in waiting)}')
        time.sleep(0.1)


def stop_all(services):
    """SIGTERM them all at once, then wait for each (SIGKILL if one
    lingers): each finishes its requests in flight meanwhile."""
    for service in services:
        service.signal_group(signal.SIGTERM)
    for service in reversed(services):
        service.stop()
