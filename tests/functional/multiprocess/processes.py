"""cellboot's daemons as real processes, each in a process group of its own.

``Processes`` starts a service command (``cellboot-conductor``,
``cellboot-scheduler``, ``cellboot-compute``, ``cellboot-api``) the way
an operator's init system does: its own session (so its whole process
group can be signalled), output into a log file, SIGTERM to stop and
SIGKILL if it does not stop in time. ``kill`` is the crash a chaos test
inflicts (SIGKILL, no clean-up in the service), ``restart`` starts the
same command again with a log of its own, as an init system would.
Clean-up always stops every process it started, whatever the test did;
when the test fails, the logs are attached to it (testtools details, and
stderr for pytest's report).
"""

import os
import signal
import subprocess
import sys
import time

import fixtures
from testtools import content

# Seconds a service may take to start serving (imports, database, broker).
START_TIMEOUT = 60
# Seconds a service may take to stop after SIGTERM before SIGKILL.
STOP_TIMEOUT = 15
# What service_runner logs once every service of a process is started.
READY_LINE = 'waiting for SIGTERM or SIGINT'
# The last characters of each log attached to a failed test.
LOG_TAIL = 20000


class ServiceProcess:
    """One started service: its command, process and log file."""

    def __init__(self, name, argv, log_path):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        # The log as it was at stop(): the log directory may go first.
        self.final_log = None
        with open(log_path, 'wb') as log:
            self.process = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True)

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


class Processes(fixtures.Fixture):
    """The service processes of one test, stopped at clean-up.

    ``start`` returns at once; ``wait_ready`` waits until each named
    service logs that it serves, so that several start in parallel.
    """

    def __init__(self, log_dir, test):
        super().__init__()
        self.log_dir = log_dir
        self.test = test

    def _setUp(self):
        self.services = []
        self._attached = False
        self.addCleanup(self._stop_all)
        self.test.addOnException(self._attach_logs)

    def start(self, name, argv):
        service = ServiceProcess(
            name, argv, os.path.join(self.log_dir, f'{name}.log'))
        self.services.append(service)
        return service

    def restart(self, service):
        """Start ``service``'s command again (after a kill); the new one.

        Each incarnation logs to a file of its own (``NAME.N.log``), so
        that waiting for the new one to serve is not fooled by the old
        one's log; both stay attached to a failed test.
        """
        incarnation = sum(1 for started in self.services
                          if started.name == service.name)
        restarted = ServiceProcess(
            service.name, service.argv,
            os.path.join(self.log_dir, f'{service.name}.{incarnation}.log'))
        self.services.append(restarted)
        return restarted

    def wait_ready(self, services, timeout=START_TIMEOUT):
        deadline = time.monotonic() + timeout
        waiting = list(services)
        while waiting:
            waiting = [service for service in waiting
                       if not service.ready()]
            if waiting and time.monotonic() > deadline:
                raise AssertionError(
                    f'not serving after {timeout} s: '
                    f'{", ".join(s.name for s in waiting)}')
            time.sleep(0.1)

    def _stop_all(self):
        # Stop them all at once, then wait: SIGTERM lets each finish.
        for service in self.services:
            service.signal_group(signal.SIGTERM)
        for service in reversed(self.services):
            service.stop()

    def _attach_logs(self, exc_info):
        if self._attached:
            return
        self._attached = True
        for service in self.services:
            text = service.log()[-LOG_TAIL:]
            label = os.path.basename(service.log_path)
            self.test.addDetail(f'log:{label}', content.text_content(text))
            sys.stderr.write(f'\n===== {label} '
                             f'({" ".join(service.argv[2:4])}) =====\n'
                             f'{text}')
