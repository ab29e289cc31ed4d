"""Hostile HTTP, continued: floods beyond the pool, and stopping.

A flood of clients beyond ``[api] wsgi_threads`` gets quick JSON 503s
with ``Retry-After`` and the server recovers; a stop lets a request in
flight finish, closes idle and half-open connections at once, and cuts
off what outlives ``[api] shutdown_timeout``; ``cellboot-api`` and
``cellboot all-in-one`` exit on SIGTERM within seconds while attackers
hold connections (their request and idle timeouts set to ten minutes,
so that only the stop can free them). See ``test_hostile_http`` for the
malformed and slow requests.
"""

import concurrent.futures
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.parse

import fixtures
import requests

from cellboot.api import server as api_server
from cellboot.db import migration
from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional.api import raw_http
from tests.functional.api import test_command
from tests.functional.api import test_hostile_http as hostile
from tests.functional import commands

AUTH = dict(hostile.AUTH)
QUICK = hostile.QUICK
# Seconds a stopped process may take to exit; it needs about one, or
# [api] shutdown_timeout with a request in flight. Only stops a hang.
EXIT_WITHIN = 30
# Seconds a process may take to start serving.
START_WITHIN = 120
HOLD = (('X-Test-Hold', '1'),)


class Gate:
    """In front of the API: a request with ``X-Test-Hold`` waits inside
    the application until ``opened`` (so that a test can fill the pool
    or have a request in flight at will)."""

    def __init__(self, application):
        self.application = application
        self.entered = threading.Semaphore(0)
        self.opened = threading.Event()

    def __call__(self, environ, start_response):
        if 'HTTP_X_TEST_HOLD' in environ:
            self.entered.release()
            self.opened.wait(300)
        return self.application(environ, start_response)


class GatedServerBase(base.TestCase):
    """The API behind a ``Gate``, on the built-in server."""

    SERVER = {}

    def setUp(self):
        super().setUp()
        api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                     hosts_per_cell=1))
        self.gate = Gate(api.app)
        self.http = api_server.WSGIService(self.gate, '127.0.0.1', 0,
                                           **self.SERVER)
        self.http.start()
        self.addCleanup(self.http.wait)
        self.addCleanup(self.http.stop)
        self.addCleanup(self.gate.opened.set)
        self.url = self.http.url + '/v2.1'

    def connect(self):
        connection = raw_http.Connection(self.http.port)
        self.addCleanup(connection.close)
        return connection

    def hold(self):
        """A connection whose request is inside the application."""
        connection = self.connect()
        connection.send(raw_http.request('GET', '/v2.1/', HOLD,
                                         length=False))
        self.assertTrue(self.gate.entered.acquire(timeout=QUICK))
        return connection


class FloodTest(GatedServerBase):

    SERVER = {'threads': 2, 'shed_wait': 0.2}

    def get(self, path='/servers'):
        started = time.monotonic()
        response = requests.get(self.url + path, headers=AUTH,
                                timeout=QUICK)
        return response, time.monotonic() - started

    def test_a_flood_beyond_the_pool_is_503_then_served_again(self):
        held = [self.hold(), self.hold()]
        with concurrent.futures.ThreadPoolExecutor(30) as pool:
            flood = list(pool.map(lambda _: self.get(), range(60)))
        for response, _seconds in flood:
            self.assertEqual(503, response.status_code, response.text)
            self.assertEqual('1', response.headers['Retry-After'])
            self.assertEqual(503, response.json()[
                'serviceUnavailable']['code'])
        self.assertEqual(60, self.http.guard.shed)
        self.gate.opened.set()
        for connection in held:
            self.assertEqual(200, connection.answer(QUICK).code)
        for _ in range(10):
            self.assertEqual(200, self.get()[0].status_code)

    def test_a_flood_of_real_requests_gets_answers_never_errors(self):
        with concurrent.futures.ThreadPoolExecutor(40) as pool:
            answers = list(pool.map(lambda _: self.get(), range(200)))
        codes = {response.status_code for response, _ in answers}
        self.assertLessEqual(codes, {200, 503}, codes)
        self.assertIn(200, codes)


class StopTest(GatedServerBase):

    SERVER = {'shutdown_timeout': 60}

    def stop_in_background(self):
        stopper = threading.Thread(
            target=lambda: (self.http.stop(), self.http.wait()), daemon=True)
        stopper.start()
        return stopper

    def assertRefusesConnections(self):
        deadline = time.monotonic() + QUICK
        while time.monotonic() < deadline:
            try:
                socket.create_connection(('127.0.0.1', self.http.port),
                                         timeout=1).close()
            except OSError:
                return
            time.sleep(0.1)
        self.fail('the stopping server still accepts connections')

    def test_stop_finishes_the_request_in_flight_and_closes_the_rest(self):
        held = self.hold()
        idle = self.connect()
        idle.send(raw_http.request('GET', '/v2.1/', length=False))
        self.assertEqual(200, idle.answer(QUICK).code)
        partial = self.connect()
        partial.send(b'GET /v2.1/serv')
        silent = self.connect()
        stopper = self.stop_in_background()
        for connection in (idle, partial, silent):
            self.assertTrue(connection.closed_within(QUICK))
        self.assertRefusesConnections()
        self.assertTrue(stopper.is_alive())  # the held request runs
        self.gate.opened.set()
        self.assertEqual(200, held.answer(QUICK).code)
        self.assertTrue(held.closed_within(QUICK))
        stopper.join(EXIT_WITHIN)
        self.assertFalse(stopper.is_alive())


class StopTimeoutTest(GatedServerBase):

    SERVER = {'shutdown_timeout': 0.5}

    def test_a_request_outliving_the_shutdown_timeout_is_cut_off(self):
        held = self.hold()
        self.http.stop()
        waiter = threading.Thread(target=self.http.wait, daemon=True)
        waiter.start()
        waiter.join(EXIT_WITHIN)
        self.assertFalse(waiter.is_alive())
        self.assertRaises(raw_http.Closed, held.answer, QUICK)


def attack(port, test):
    """Connections in every state a stop must not wait for."""
    connections = []

    def connect():
        connection = raw_http.Connection(port)
        test.addCleanup(connection.close)
        connections.append(connection)
        return connection

    for _ in range(5):
        connect()  # silent
        connect().send(b'GET /v2.1/serv')
        connect().send(b'GET /v2.1/ HTTP/1.1\r\nHost: x\r\n')
        connect().send(raw_http.request(
            'POST', '/v2.1/servers', (('Content-Length', '500'),),
            body=b'{"server"', length=False))
        idle = connect()
        idle.send(raw_http.request('GET', '/v2.1/', length=False))
        test.assertEqual(200, idle.answer(QUICK).code)
    return connections


LONG_TIMEOUTS = """
    [api]
    request_timeout = 600
    idle_timeout = 600
    shutdown_timeout = 2
    """


class SigtermTest(base.TestCase):

    def config(self, text):
        path = os.path.join(self.state_path, 'cellboot.conf')
        with open(path, 'w') as conf:
            conf.write(textwrap.dedent(text) + textwrap.dedent(LONG_TIMEOUTS))
        return path

    def wait_until_serving(self, url):
        deadline = time.monotonic() + START_WITHIN
        while True:
            try:
                return requests.get(url, timeout=5)
            except requests.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def assertStopsOnSigterm(self, process, port):
        connections = attack(port, self)
        process.send_signal(signal.SIGTERM)
        self.assertEqual(0, process.wait(EXIT_WITHIN))
        for connection in connections:
            self.assertTrue(connection.closed_within(QUICK))

    def test_cellboot_api_exits_on_sigterm_while_attackers_hold_on(self):
        api_url = 'sqlite:///' + os.path.join(self.state_path, 'api.sqlite')
        migration.db_sync('api', api_url)
        port = test_command.free_port()
        process = commands.start_module(
            self, 'cellboot.cmd.api', '--config-file', self.config(f"""
                [DEFAULT]
                state_path = {self.state_path}
                transport_url = fake://
                [api_database]
                connection = {api_url}
                """), '--port', str(port))
        self.wait_until_serving(f'http://127.0.0.1:{port}/v2.1/')
        self.assertStopsOnSigterm(process, port)

    def test_all_in_one_exits_on_sigterm_while_attackers_hold_on(self):
        state_dir = self.useFixture(fixtures.TempDir()).path
        process = subprocess.Popen(
            [sys.executable, '-m', 'cellboot.cmd.cellboot', 'all-in-one',
             '--state-dir', state_dir, '--port', '0', '--cells', '1',
             '--hosts-per-cell', '1', '--config-file', self.config('')],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.addCleanup(process.kill)
        port = None
        for line in process.stdout:
            found = re.search(r'--url (\S+) ', line)
            if found:
                port = urllib.parse.urlsplit(found.group(1)).port
                break
        self.assertIsNotNone(port, 'the all-in-one never said it was ready')
        # Nothing reads its output any more: let it not block on a pipe.
        threading.Thread(target=process.stdout.read, daemon=True).start()
        self.assertStopsOnSigterm(process, port)


class BrokenApplicationTest(base.TestCase):
    """Even an application that raises past its own fault handling gets
    a JSON answer from the server, never a traceback."""

    def test_an_exception_in_the_application_is_a_json_500(self):
        def broken(environ, start_response):
            raise RuntimeError('secret internals')

        http = api_server.WSGIService(broken, '127.0.0.1', 0)
        http.start()
        self.addCleanup(http.wait)
        self.addCleanup(http.stop)
        response = requests.get(http.url + '/v2.1/', timeout=QUICK)
        self.assertEqual(500, response.status_code)
        self.assertEqual(500, response.json()['computeFault']['code'])
        self.assertNotIn('secret', response.text)
        self.assertNotIn('Traceback', response.text)
