"""A conductor process serves its metrics on ``[metrics] port``.

``cellboot-conductor --cell cell1`` is started as an operator runs it,
with a free port in its configuration; its metrics are scraped over
HTTP, and the port is free again once SIGTERM stopped it. Without the
option nothing listens. The server itself (``MetricsServer``) is then
checked in this process: odd methods, a port already taken.
"""

import signal
import socket

import requests

from cellboot import exception
from cellboot.metrics import exposition
from tests import base
from tests.functional.boot import test_conductor_command as command_test

TIMEOUT = command_test.TIMEOUT


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class ConductorMetricsTest(base.TestCase):

    # How the conductor command's tests start one (not their tests).
    _config = command_test.ConductorCommandTest._config
    _start = command_test.ConductorCommandTest._start
    _cell_config = command_test.ConductorCommandTest._cell_config
    _wait_for = command_test.ConductorCommandTest._wait_for

    def _metrics_config(self, port):
        path = self._cell_config()
        with open(path, 'a') as conf:
            conf.write(f'[metrics]\nport = {port}\n')
        return path

    def test_a_cell_conductor_serves_its_metrics(self):
        port = free_port()
        process = self._start('--cell', 'cell1', '--config-file',
                              self._metrics_config(port))
        lines = self._wait_for(process, 'Serving')
        self.assertIn(f'Metrics served on http://127.0.0.1:{port}/metrics',
                      ''.join(lines))
        response = requests.get(f'http://127.0.0.1:{port}/metrics',
                                timeout=TIMEOUT)
        self.assertEqual(200, response.status_code)
        self.assertIn('# TYPE cellboot_flows_running gauge', response.text)
        self.assertIn('cellboot_flows_running{kind="reschedule"} 0.0',
                      response.text)
        self.assertEqual(405, requests.post(
            f'http://127.0.0.1:{port}/metrics', timeout=TIMEOUT).status_code)
        process.send_signal(signal.SIGTERM)
        _stdout, stderr = process.communicate(timeout=TIMEOUT)
        self.assertEqual(0, process.returncode, stderr)
        self.assertRaises(requests.ConnectionError, requests.get,
                          f'http://127.0.0.1:{port}/metrics', timeout=5)


class MetricsServerTest(base.TestCase):

    def test_off_by_default(self):
        self.assertEqual([], exposition.services())

    def test_the_configured_port(self):
        port = free_port()
        self.flags(port=port, group='metrics')
        server, = exposition.services()
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        self.assertEqual(f'http://127.0.0.1:{port}/metrics', server.url)
        response = requests.get(server.url, timeout=TIMEOUT)
        self.assertEqual(200, response.status_code)
        self.assertIn('cellboot_boots_started_total', response.text)
        for method in ('PUT', 'DELETE', 'PATCH'):
            self.assertEqual(405, requests.request(
                method, server.url, timeout=TIMEOUT).status_code)

    def test_a_port_in_use_is_a_configuration_error(self):
        with socket.socket() as taken:
            taken.bind(('127.0.0.1', 0))
            taken.listen()
            server = exposition.MetricsServer('127.0.0.1',
                                              taken.getsockname()[1])
            error = self.assertRaises(exception.ConfigurationError,
                                      server.start)
        self.assertIn('cannot serve the metrics on 127.0.0.1:', str(error))
        self.assertIn('[metrics] host and port', str(error))
