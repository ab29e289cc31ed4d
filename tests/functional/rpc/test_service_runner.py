"""The service runner: start in order, stop in reverse, stop on SIGTERM."""

import contextlib
import io
import os
import signal
import threading
import time

from cellboot import exception
from cellboot import service_runner
from tests import base


class FakeService:
    """Writes what happens to it into a shared journal."""

    def __init__(self, name, journal, fail_start=False):
        self.name = name
        self.journal = journal
        self.fail_start = fail_start

    def start(self):
        if self.fail_start:
            raise exception.ConfigurationError(reason=f'{self.name} broken')
        self.journal.append(('start', self.name))

    def stop(self):
        self.journal.append(('stop', self.name))

    def wait(self):
        self.journal.append(('wait', self.name))


class NeverStarts(FakeService):
    """A start that retries for ever, as against a broker that is down."""

    def start(self):
        while True:
            time.sleep(0.05)


class StopAtOnce:
    """A stopper whose signal has already come."""

    def install(self):
        pass

    def started(self):
        pass

    def wait(self):
        return 'SIGTERM'


class ServiceRunnerTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.journal = []

    def _services(self, *names, failing=None):
        return [FakeService(name, self.journal, fail_start=name == failing)
                for name in names]

    def test_services_start_in_order_and_stop_in_reverse_order(self):
        service_runner.run(self._services('a', 'b'), StopAtOnce())

        self.assertEqual([('start', 'a'), ('start', 'b'), ('stop', 'b'),
                          ('stop', 'a'), ('wait', 'b'), ('wait', 'a')],
                         self.journal)

    def test_a_service_that_cannot_start_stops_those_already_started(self):
        self.assertRaises(exception.ConfigurationError, service_runner.run,
                          self._services('a', 'b', 'c', failing='b'),
                          StopAtOnce())

        self.assertEqual([('start', 'a'), ('stop', 'a'), ('wait', 'a')],
                         self.journal)

    def test_sigterm_stops_the_services_and_returns_zero(self):
        for signum in (signal.SIGTERM, signal.SIGINT):
            self.addCleanup(signal.signal, signum, signal.getsignal(signum))
        timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM))
        timer.start()
        self.addCleanup(timer.cancel)

        code = service_runner.run(self._services('a'))

        self.assertEqual(0, code)
        self.assertEqual([('start', 'a'), ('stop', 'a'), ('wait', 'a')],
                         self.journal)

    def test_sigterm_while_a_service_is_starting_stops_those_started(self):
        for signum in (signal.SIGTERM, signal.SIGINT):
            self.addCleanup(signal.signal, signum, signal.getsignal(signum))
        timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM))
        timer.start()
        self.addCleanup(timer.cancel)
        services = self._services('a') + [NeverStarts('b', self.journal)]

        code = service_runner.run(services)

        self.assertEqual(0, code)
        self.assertEqual([('start', 'a'), ('stop', 'a'), ('wait', 'a')],
                         self.journal)

    def test_a_named_run_prints_one_line_once_every_service_stopped(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            service_runner.run(self._services('a', 'b'), StopAtOnce(),
                               name='cellboot-test')
        self.assertRegex(out.getvalue(), r'^cellboot-test: SIGTERM; 2 '
                                         r'services stopped in [0-9.]+ s\n$')

    def test_an_unnamed_run_prints_nothing(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            service_runner.run(self._services('a'), StopAtOnce())
        self.assertEqual('', out.getvalue())

    def test_a_stop_while_starting_says_so_in_its_one_line(self):
        for signum in (signal.SIGTERM, signal.SIGINT):
            self.addCleanup(signal.signal, signum, signal.getsignal(signum))
        timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        self.addCleanup(timer.cancel)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = service_runner.run(
                self._services('a') + [NeverStarts('b', self.journal)],
                name='cellboot-test')
        self.assertEqual(0, code)
        self.assertEqual('cellboot-test: SIGINT while starting; stopped '
                         'before ready\n', out.getvalue())
