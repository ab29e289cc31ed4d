"""The API's health checks: bounded, clear, and as oslo.middleware serves.

The checks run against real sockets: a port nobody listens on (refused
at once), a listener that accepts and never answers (a hung database:
the check must give up within ``[metrics] health_check_timeout``), the
local RabbitMQ. The application is the one ``cellboot.api.wsgi`` mounts
at ``/healthcheck``, called with WebOb requests.
"""

import json
import os
import socket
import threading
import time

from oslo_middleware import healthcheck
import webob

from cellboot.api import errors
from cellboot.api import health
from cellboot.api import operator_paths
from cellboot.conf import CONF
from cellboot.db.api import connection as api_db
from tests import base
from tests.functional import test_scatter_gather as sg

TIMEOUT = 1.0
# Thread start-up on a loaded machine.
MARGIN = 2.0
RABBIT = 'rabbit://guest:guest@127.0.0.1:5672/'


def closed_port():
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _not_found(environ, start_response):
    start_response('404 Not Found', [('Content-Type', 'text/plain')])
    return [b'fallback']


class HealthTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(health_check_timeout=TIMEOUT, group='metrics')
        self.use_database(
            f'sqlite:///{os.path.join(self.state_path, "api.sqlite")}')
        self.flags(transport_url='fake://')

    def use_database(self, url):
        self.flags(connection=url, group='api_database')
        api_db.reset()
        self.addCleanup(api_db.reset)

    def get(self, method='GET', accept='application/json', path=None):
        app = health.application(_not_found)
        request = webob.Request.blank(path or '/healthcheck',
                                      method=method)
        request.accept = accept
        started = time.monotonic()
        response = request.get_response(errors.FaultWrapper(
            operator_paths.HealthPath(_not_found, app)))
        return response, time.monotonic() - started

    def reasons(self, response):
        return json.loads(response.text)['reasons']

    def test_healthy_when_both_answer(self):
        response, _elapsed = self.get()
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual(['API database: OK',
                          'message broker: OK (the in-process bus)'],
                         self.reasons(response))
        head, _elapsed = self.get(method='HEAD')
        self.assertEqual(204, head.status_int)
        self.assertEqual(b'', head.body)

    def test_a_real_broker_that_listens(self):
        self.flags(transport_url=RABBIT)
        response, _elapsed = self.get()
        self.assertEqual(200, response.status_int, response.text)
        self.assertIn('message broker: OK (127.0.0.1:5672 accepts '
                      'connections)', self.reasons(response))

    def test_a_database_that_refuses(self):
        self.use_database(sg.mysql_url(closed_port()))
        response, elapsed = self.get()
        self.assertEqual(503, response.status_int)
        self.assertIn('API database: not reachable (DatabaseConnectionError)',
                      self.reasons(response))
        self.assertLess(elapsed, TIMEOUT + MARGIN)
        text, _elapsed = self.get(accept='text/plain')
        self.assertEqual(503, text.status_int)
        self.assertIn('API database: not reachable', text.text)
        for body in (response.text, text.text):
            self.assertNotIn('Traceback', body)
            self.assertNotIn('u:p@', body)

    def test_a_database_that_never_answers_is_bounded(self):
        listener = sg.SilentListener()
        self.addCleanup(listener.stop)
        self.use_database(sg.mysql_url(listener.port))
        app = health.application(_not_found)
        for _attempt in range(3):
            request = webob.Request.blank('/healthcheck')
            request.accept = 'application/json'
            started = time.monotonic()
            response = request.get_response(app)
            elapsed = time.monotonic() - started
            self.assertEqual(503, response.status_int)
            self.assertIn(f'API database: no answer within {TIMEOUT:g} s',
                          self.reasons(response))
            self.assertLess(elapsed, TIMEOUT + MARGIN)
        # Asked three times while the first probe hangs: one probe.
        probes = [thread for thread in threading.enumerate()
                  if thread.name == 'healthcheck API database']
        self.assertEqual(1, len(probes))

    def test_a_broker_that_refuses(self):
        port = closed_port()
        self.flags(transport_url=f'rabbit://guest:secret@127.0.0.1:{port}/')
        response, elapsed = self.get()
        self.assertEqual(503, response.status_int)
        self.assertIn('message broker: not reachable (ConnectionError)',
                      self.reasons(response))
        self.assertIn('API database: OK', self.reasons(response))
        self.assertLess(elapsed, TIMEOUT + MARGIN)
        self.assertNotIn('secret', response.text)

    def test_disabled_by_file_as_oslo_does(self):
        path = os.path.join(self.state_path, 'disabled')
        self.flags(backends=['disable_by_file'], disable_by_file_path=path,
                   group='healthcheck')
        response, _elapsed = self.get()
        self.assertEqual(200, response.status_int, response.text)
        open(path, 'w').close()
        response, _elapsed = self.get()
        self.assertEqual(503, response.status_int)
        self.assertIn('DISABLED BY FILE', self.reasons(response))

    def test_other_methods_and_paths(self):
        for method in ('POST', 'PUT', 'DELETE', 'PATCH'):
            response, _elapsed = self.get(method=method)
            self.assertEqual(405, response.status_int)
            self.assertEqual('GET, HEAD, OPTIONS',
                             response.headers['Allow'])
            self.assertIn('is not allowed on /healthcheck',
                          response.json['badMethod']['message'])
        response, _elapsed = self.get(method='OPTIONS')
        self.assertEqual(204, response.status_int)
        response, _elapsed = self.get(path='/healthcheck/x')
        self.assertEqual(b'fallback', response.body)


class HealthcheckContractTest(base.TestCase):
    """What ``health.application`` relies on in oslo.middleware."""

    def test_the_backends_are_extensions_with_obj(self):
        self.flags(backends=['disable_by_file'], group='healthcheck')
        app = healthcheck.Healthcheck(None, CONF)
        backends = list(app._backends)
        self.assertEqual(1, len(backends))
        self.assertTrue(hasattr(backends[0].obj, 'healthcheck'))
