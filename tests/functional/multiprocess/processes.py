"""cellboot's daemons as real processes, stopped when the test ends.

``tools.service_processes`` starts and stops them (shared with the
benchmarks); ``Processes`` is the fixture of one test: ``restart``
starts the same command again with a log of its own, as an init system
would, clean-up always stops every process it started, whatever the
test did, and when the test fails the logs are attached to it
(testtools details, and stderr for pytest's report).
"""

import os
import sys

import fixtures
from testtools import content

from tools import service_processes

START_TIMEOUT = service_processes.START_TIMEOUT
LOG_TAIL = service_processes.LOG_TAIL

ServiceProcess = service_processes.ServiceProcess
command = service_processes.command


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
        service_processes.wait_ready(services, timeout)

    def _stop_all(self):
        service_processes.stop_all(self.services)

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
