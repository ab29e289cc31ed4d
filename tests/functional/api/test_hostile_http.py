"""Hostile HTTP clients against the API on its real server, over TCP.

Each test attacks a running ``APIServer`` (the built-in server, the real
application, the real databases) with raw sockets: half-sent requests,
lying or malformed lengths, bad chunking, header floods, pipelined
garbage, slow clients. Every answer must be JSON in the API's error
shape, come within a bounded time, write nothing, and leave the server
serving (checked after every test). Load shedding and stopping are in
``test_http_stop_and_overload``.
"""

import json
import threading

import requests

from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional.api import raw_http
from tests.functional.api import test_servers

# The server's timeouts in these tests (seconds): short, so that the
# tests that wait for them are quick.
REQUEST_TIMEOUT = 2.0
IDLE_TIMEOUT = 3.0
# Bounds on a loaded machine: an answer that needs no timeout, and one
# that comes when a timeout fires. They only stop a hang.
QUICK = 15.0
AFTER_TIMEOUT = REQUEST_TIMEOUT + 15.0

TABLES = ('build_requests', 'request_specs', 'instance_mappings')
AUTH = (('X-Auth-Token', api_fixtures.ALICE_TOKEN),
        ('Content-Type', 'application/json'))
BOOT = json.dumps({'server': {'name': 'vm', 'flavorRef': 'small',
                              'imageRef': 'cirros'}}).encode()


def rows():
    return [test_servers.count_rows(table) for table in TABLES]


class HostileHTTPBase(base.TestCase):
    """An API with short timeouts; after each test, still serving."""

    CONNECTIONS = 100
    REQUEST_TIMEOUT = REQUEST_TIMEOUT

    def setUp(self):
        super().setUp()
        self.flags(request_timeout=self.REQUEST_TIMEOUT,
                   idle_timeout=IDLE_TIMEOUT,
                   max_connections=self.CONNECTIONS, group='api')
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=1))
        self.port = self.api.http.port
        self.addCleanup(self.assertStillServing)

    def assertStillServing(self):
        response = self.api.client().get('/servers')
        self.assertEqual(200, response.status_code, response.text)

    def connect(self):
        connection = raw_http.Connection(self.port)
        self.addCleanup(connection.close)
        return connection

    def assertJSONError(self, code, answer):
        """``answer`` is ``code`` in the API's error shape."""
        self.assertEqual(code, answer.code, answer)
        self.assertTrue(
            answer.headers['content-type'].startswith('application/json'),
            answer)
        body = answer.json()
        self.assertEqual(1, len(body), body)
        error = next(iter(body.values()))
        self.assertEqual(code, error['code'])
        self.assertTrue(error['message'])
        return error['message']

    def assertRefused(self, code, data, within=QUICK):
        """``data`` on a new connection: ``code``, closed, nothing
        written; the error's message."""
        before = rows()
        connection = self.connect()
        connection.send(data)
        message = self.assertJSONError(code, connection.answer(within))
        self.assertTrue(connection.closed_within(QUICK))
        self.assertEqual(before, rows())
        return message


class IncompleteRequestsTest(HostileHTTPBase):

    def test_a_half_sent_request_line_is_answered_408_and_closed(self):
        message = self.assertRefused(408, b'GET /v2.1/serv',
                                     within=AFTER_TIMEOUT)
        self.assertIn('request_timeout', message)

    def test_headers_that_never_end_are_answered_408(self):
        self.assertRefused(408, b'GET /v2.1/ HTTP/1.1\r\nHost: x\r\n',
                           within=AFTER_TIMEOUT)

    def test_a_body_shorter_than_its_length_is_408_and_writes_nothing(self):
        self.assertRefused(408, raw_http.request(
            'POST', '/v2.1/servers',
            AUTH + (('Content-Length', str(len(BOOT) + 10)),), body=BOOT,
            length=False), within=AFTER_TIMEOUT)

    def test_a_body_dripped_past_the_timeout_is_408_and_writes_nothing(self):
        before = rows()
        connection = self.connect()
        connection.send(raw_http.request(
            'POST', '/v2.1/servers',
            AUTH + (('Content-Length', str(len(BOOT))),), length=False))
        for byte in BOOT:  # one byte every 0.3 s: ~20 s for the body
            if not connection.try_send(bytes([byte])):
                break
            if connection.closed_within(0.3):
                break
        self.assertJSONError(408, connection.answer(AFTER_TIMEOUT))
        self.assertEqual(before, rows())

    def test_a_silent_connection_is_closed_after_the_request_timeout(self):
        connection = self.connect()
        self.assertTrue(connection.closed_within(AFTER_TIMEOUT))
        self.assertRaises(raw_http.Closed, connection.answer, 0)

    def test_an_idle_kept_alive_connection_is_closed_after_idle_timeout(self):
        connection = self.connect()
        connection.send(raw_http.request('GET', '/v2.1/', length=False))
        self.assertEqual(200, connection.answer(QUICK).code)
        self.assertTrue(connection.closed_within(IDLE_TIMEOUT + 15))


class LengthsTest(HostileHTTPBase):

    def test_a_post_without_content_length_is_411_and_closed(self):
        message = self.assertRefused(411, raw_http.request(
            'POST', '/v2.1/servers', AUTH, body=BOOT, length=False))
        self.assertIn('Content-Length', message)

    def test_a_put_without_content_length_is_411(self):
        self.assertRefused(411, raw_http.request(
            'PUT', '/v2.1/servers', AUTH, length=False))

    def test_malformed_content_lengths_are_400(self):
        for value in ('abc', '-1', '+5', '1e3', '0x10', '5 5', '', '5.0'):
            with self.subTest(value=value):
                self.assertRefused(400, raw_http.request(
                    'POST', '/v2.1/servers',
                    AUTH + (('Content-Length', value),), body=BOOT,
                    length=False))

    def test_duplicate_content_lengths_are_400(self):
        for first, second in (('5', '5'), (str(len(BOOT)), '3')):
            with self.subTest(lengths=(first, second)):
                self.assertRefused(400, raw_http.request(
                    'POST', '/v2.1/servers',
                    AUTH + (('Content-Length', first),
                            ('Content-Length', second)),
                    body=BOOT, length=False))

    def test_a_length_over_the_limit_is_413_before_the_body(self):
        for value in ('114689', '9' * 40):
            with self.subTest(value=value):
                self.assertRefused(413, raw_http.request(
                    'POST', '/v2.1/servers',
                    AUTH + (('Content-Length', value),), length=False))

    def test_bytes_past_the_length_are_not_the_body(self):
        # The declared length holds a body the schema refuses; what
        # follows is read as the next request (never completed: 408).
        body = b'{"server": {}}'
        before = rows()
        connection = self.connect()
        connection.send(raw_http.request('POST', '/v2.1/servers', AUTH,
                                         body=body) + BOOT)
        self.assertJSONError(400, connection.answer(QUICK))
        self.assertJSONError(408, connection.answer(AFTER_TIMEOUT))
        self.assertEqual(before, rows())


class ChunkedTest(HostileHTTPBase):

    CHUNKED = AUTH + (('Transfer-Encoding', 'chunked'),)

    def test_a_chunked_body_is_read_whole_and_served(self):
        connection = self.connect()
        connection.send(raw_http.request(
            'POST', '/v2.1/servers', self.CHUNKED, length=False,
            body=raw_http.chunked(BOOT[:7], BOOT[7:30], BOOT[30:])))
        answer = connection.answer(QUICK)
        self.assertEqual(202, answer.code, answer)
        uuid = answer.json()['server']['id']
        shown = self.api.client().get(f'/servers/{uuid}')
        self.assertEqual('vm', shown.json()['server']['name'])

    def test_bad_chunking_is_400_and_writes_nothing(self):
        for body in (b'zz\r\n' + BOOT + b'\r\n0\r\n\r\n',
                     b'%x\r\n' % len(BOOT) + BOOT + b'XX0\r\n\r\n',
                     b'3;\x01\r\nabc\r\n0\r\n\r\n',
                     b'-3\r\nabc\r\n0\r\n\r\n'):
            with self.subTest(body=body[:12]):
                self.assertRefused(400, raw_http.request(
                    'POST', '/v2.1/servers', self.CHUNKED, body=body,
                    length=False))

    def test_a_chunked_body_over_the_limit_is_413(self):
        piece = b'x' * 65536
        self.assertRefused(413, raw_http.request(
            'POST', '/v2.1/servers', self.CHUNKED, length=False,
            body=raw_http.chunked(*[piece] * 3)))

    def test_a_transfer_coding_other_than_chunked_is_400(self):
        self.assertRefused(400, raw_http.request(
            'POST', '/v2.1/servers',
            AUTH + (('Transfer-Encoding', 'gzip'),), body=BOOT,
            length=False))

    def test_chunked_in_http_1_0_is_not_a_length(self):
        self.assertRefused(411, raw_http.request(
            'POST', '/v2.1/servers', self.CHUNKED, length=False,
            body=raw_http.chunked(BOOT), version='1.0'))


class HeadersAndGarbageTest(HostileHTTPBase):

    def test_a_flood_of_headers_is_431(self):
        flood = tuple((f'X-Flood-{index}', 'y' * 100)
                      for index in range(1000))
        message = self.assertRefused(431, raw_http.request(
            'GET', '/v2.1/servers', AUTH + flood, length=False))
        self.assertIn('65536', message)

    def test_one_huge_header_is_431(self):
        self.assertRefused(431, raw_http.request(
            'GET', '/v2.1/servers', AUTH + (('X-Huge', 'z' * 100000),),
            length=False))

    def test_many_small_headers_under_the_limit_are_served(self):
        headers = tuple((f'X-Small-{index}', 'y') for index in range(500))
        connection = self.connect()
        connection.send(raw_http.request('GET', '/v2.1/servers',
                                         AUTH + headers, length=False))
        self.assertEqual(200, connection.answer(QUICK).code)

    def test_garbage_request_lines_are_400(self):
        for garbage in (b'\x00\x01\x02\r\n\r\n', b'GET\r\n\r\n',
                        b'G\xffT / HTTP/1.1\r\n\r\n',
                        b'GET / HTTP/1.1\r\nNo colon here\r\n\r\n',
                        b'GET / HTTP/1.1\r\nX: a\rb\r\n\r\n',
                        b'GET / HTTP/1.1\r\n: no name\r\n\r\n'):
            with self.subTest(garbage=garbage):
                self.assertRefused(400, garbage)

    def test_pipelined_garbage_after_good_requests_is_400(self):
        connection = self.connect()
        good = raw_http.request('GET', '/v2.1/servers', AUTH, length=False)
        connection.send(good + good + b'\x16\x03\x01 TLS? \r\n\r\n' + good)
        self.assertEqual(200, connection.answer(QUICK).code)
        self.assertEqual(200, connection.answer(QUICK).code)
        self.assertJSONError(400, connection.answer(QUICK))
        self.assertTrue(connection.closed_within(QUICK))

    def test_keep_alive_serves_many_requests_on_one_connection(self):
        connection = self.connect()
        for _ in range(5):
            connection.send(raw_http.request('GET', '/v2.1/servers', AUTH,
                                             length=False))
            answer = connection.answer(QUICK)
            self.assertEqual(200, answer.code)
            self.assertNotIn('close', answer.headers.get('connection', ''))
        connection.send(raw_http.request('POST', '/v2.1/servers', AUTH,
                                         body=BOOT))
        self.assertEqual(202, connection.answer(QUICK).code)
        self.assertFalse(connection.closed_within(0.5))


class _Dripper(threading.Thread):
    """Slow clients: each sends a header line every ``every`` seconds
    (a request never finished) until ``stop`` is set."""

    def __init__(self, connections, every=0.5):
        super().__init__(daemon=True)
        self.connections = connections
        self.every = every
        self.stop = threading.Event()

    def run(self):
        index = 0
        while not self.stop.wait(self.every):
            for connection in self.connections:
                connection.try_send(f'X-Drip-{index}: 1\r\n'.encode())
            index += 1


def attackers(test, count):
    """``count`` connections each with a request half sent, dripping."""
    connections = [test.connect() for _ in range(count)]
    for index, connection in enumerate(connections):
        # Half stop in the request line, half in the headers.
        connection.send(b'GET /v2.1/servers HTTP/1.1\r\nHost: x\r\n'
                        if index % 2 else b'GET /v2.1/ser')
    dripper = _Dripper(connections)
    dripper.start()
    test.addCleanup(dripper.stop.set)
    return connections


class SlowClientsHoldingConnectionsTest(HostileHTTPBase):
    """Slow clients that outnumber the worker threads several times over,
    never timed out during the test."""

    REQUEST_TIMEOUT = 600

    def test_a_client_is_served_while_slow_clients_hold_connections(self):
        slow = attackers(self, 60)
        for _ in range(10):
            response = requests.get(
                self.api.url + '/v2.1/servers', headers=dict(AUTH),
                timeout=QUICK)
            self.assertEqual(200, response.status_code)
        # They were all still there: the client did not wait them out.
        self.assertEqual([], [c for c in slow if c.closed_within(0)])


class SlowClientsBeyondTheConnectionLimitTest(HostileHTTPBase):

    CONNECTIONS = 10

    def test_they_are_timed_out_and_a_client_is_served(self):
        slow = attackers(self, 2 * self.CONNECTIONS)
        response = requests.get(self.api.url + '/v2.1/servers',
                                headers=dict(AUTH), timeout=AFTER_TIMEOUT)
        self.assertEqual(200, response.status_code)
        # Each slow client, accepted at once or from the backlog, gets
        # its 408 within its own timeout, then is closed.
        for connection in slow:
            self.assertJSONError(408, connection.answer(2 * AFTER_TIMEOUT))
            self.assertTrue(connection.closed_within(QUICK))
