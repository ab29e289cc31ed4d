"""Hostile input over real HTTP: a JSON 4xx every time, nothing written.

Against the API served by ``APIServer`` (a real server on a loopback
port in front of a whole in-process deployment): bytes that are not
UTF-8 in the path and the query (percent-encoded, and raw in the
request line, with and without a token), JSON nested up to far past
Python's recursion limit, lone surrogates in every string a request can
carry, wrong methods (405 with ``Allow``), wrong media types (415), and
and whole-number floats (integers, stored as such). Metadata as large
as the schema allows, which has to fit in every row it ends up in, is in
``test_large_metadata`` (on MariaDB too, whose TEXT stops at 64 KiB).

Every refusal is checked the same way (``assertRefused``): the status,
Nova's JSON error shape, and not one row more in the API database, nor
a cast to the conductor.
"""

import json
import socket
import urllib.parse

import sqlalchemy as sa

from cellboot.api import inputs
from cellboot.db.api import connection as api_connection
from cellboot.db.api import models as api_models
from tests import base
from tests.functional.api import fixtures as api_fixtures

# Tables a rejected request must leave as they were.
TABLES = ('build_requests', 'request_specs', 'instance_mappings', 'flavors',
          'server_groups', 'server_group_members')

# The largest metadata the schema accepts: 128 keys and values of 255.
MAX_METADATA = {f'{index:03d}' + 'k' * 252: 'v' * 255
                for index in range(128)}

# A character that JSON escapes to 12 bytes (a surrogate pair).
ASTRAL = '\U0001F600'


def count_rows():
    engine = api_connection.get_engine()
    tables = api_models.Base.metadata.tables
    with engine.connect() as conn:
        return {name: conn.execute(sa.select(sa.func.count()).select_from(
            tables[name])).scalar() for name in TABLES if name in tables}


def raw_request(url, method, target, headers=None, body=b''):
    """Send ``target`` (bytes, exactly as given) in a request line.

    Returns ``(status, {lower-case header: value}, body bytes)``.
    Clients such as requests percent-encode what is not ASCII; this
    sends what an attacker sends.
    """
    parts = urllib.parse.urlsplit(url)
    lines = [method.encode('ascii') + b' ' + target + b' HTTP/1.1',
             f'Host: {parts.netloc}'.encode('ascii'), b'Connection: close',
             f'Content-Length: {len(body)}'.encode('ascii')]
    lines += [name.encode('latin-1') + b': ' + value
              for name, value in (headers or {}).items()]
    with socket.create_connection((parts.hostname, parts.port),
                                  timeout=30) as sock:
        sock.sendall(b'\r\n'.join(lines) + b'\r\n\r\n' + body)
        received = b''
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    head, _, payload = received.partition(b'\r\n\r\n')
    status_line, *header_lines = head.decode('latin-1').split('\r\n')
    found = {}
    for line in header_lines:
        name, _, value = line.partition(':')
        found[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), found, payload


class _HostileTest(base.TestCase):
    """An API over HTTP, a client per user, and the refusal check."""

    BACKEND = 'sqlite'
    # Arguments of the cluster behind the API (tests.functional.cluster).
    CLUSTER = {}

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(
            cells=1, hosts_per_cell=2, backend=self.BACKEND, **self.CLUSTER))
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        self.anonymous = self.api.client(None)
        self.casts = []
        conductor = self.api.app.api.conductor
        original = conductor.schedule_and_build_instances

        def counted(ctxt, build_requests, request_specs):
            self.casts.append(len(build_requests))
            return original(ctxt, build_requests, request_specs)

        conductor.schedule_and_build_instances = counted
        self.addCleanup(setattr, conductor, 'schedule_and_build_instances',
                        original)

    def assertRefused(self, code, response, before, message=None):
        """A JSON error of ``code`` in Nova's shape; nothing written."""
        if isinstance(response, tuple):
            status, headers, payload = response
            content_type = headers.get('content-type', '')
            body = json.loads(payload)
        else:
            status, content_type = response.status_code, response.headers[
                'Content-Type']
            body = response.json()
        self.assertEqual(code, status, body)
        self.assertTrue(content_type.startswith('application/json'),
                        content_type)
        (error,) = body.values()
        self.assertEqual(code, error['code'])
        self.assertTrue(error['message'])
        if message is not None:
            self.assertIn(message, error['message'])
        self.assertEqual(before, count_rows())
        self.assertEqual([], self.casts)
        self.assertEqual(0, self.api.app.unexpected)

    def post(self, client, path, body, ascii=True):
        """POST ``body`` as JSON; ``ascii=False`` sends characters
        outside ASCII as UTF-8 rather than as escapes."""
        return client.post(path, data=json.dumps(
            body, ensure_ascii=ascii).encode('utf-8'),
            headers={'Content-Type': 'application/json'})


class NotUTF8Test(_HostileTest):
    """Bytes that are not UTF-8, in the path and in the query."""

    TOKEN = {'X-Auth-Token': api_fixtures.ALICE_TOKEN.encode('ascii')}

    def test_a_percent_encoded_bad_byte_in_a_server_id_is_404(self):
        before = count_rows()
        for target in (b'/v2.1/servers/%ff', b'/v2.1/servers/%ed%a0%80',
                       b'/v2.1/servers/a%c3'):
            self.assertRefused(404, raw_request(
                self.api.url, 'GET', target, self.TOKEN), before)
            self.assertRefused(404, raw_request(
                self.api.url, 'DELETE', target, self.TOKEN), before)

    def test_raw_bytes_outside_ascii_in_the_request_line_are_400(self):
        """The built-in server refuses them itself, in the API's shape.

        A request target is ASCII (RFC 9112); bytes outside it are sent
        percent-encoded, which the tests above and below cover. Servers
        that pass raw bytes on (see ``test_fuzz``'s raw paths) reach the
        application's own rules instead.
        """
        before = count_rows()
        for headers in (None, self.TOKEN):
            for target in (b'/v2.1/servers/\xff\xfe', b'/\xff',
                           b'/v2.1/servers/detail?reservation_id=\xff',
                           b'/?a=\xff'):
                self.assertRefused(400, raw_request(
                    self.api.url, 'GET', target, headers), before,
                    message='Malformed HTTP request')

    def test_without_a_token_a_bad_byte_in_a_server_id_is_401(self):
        before = count_rows()
        self.assertRefused(401, raw_request(
            self.api.url, 'GET', b'/v2.1/servers/%ff'), before)

    def test_a_bad_byte_in_a_literal_segment_is_404(self):
        before = count_rows()
        for headers in (None, self.TOKEN):
            self.assertRefused(404, raw_request(
                self.api.url, 'GET', b'/v2.1/serv%ffers', headers), before,
                message='No such path')
            self.assertRefused(404, raw_request(
                self.api.url, 'GET', b'/%ff', headers), before)

    def test_a_bad_byte_in_a_query_is_400_once_authenticated(self):
        before = count_rows()
        for target in (b'/v2.1/servers?reservation_id=%ff',
                       b'/v2.1/servers/detail?reservation_id=%FF',
                       b'/v2.1/servers?%ff=1',
                       b'/v2.1/servers?reservation_id=%ed%a0%80'):
            self.assertRefused(401, raw_request(
                self.api.url, 'GET', target), before)
            self.assertRefused(400, raw_request(
                self.api.url, 'GET', target, self.TOKEN), before,
                message='not UTF-8')

    def test_a_nul_in_a_query_is_401_before_it_is_400(self):
        before = count_rows()
        self.assertRefused(401, self.anonymous.get(
            '/servers?reservation_id=%00'), before)
        self.assertRefused(403, self.alice.get('/os-flows?state=%00'),
                           before)
        self.assertRefused(400, self.admin.get('/os-flows?state=%00'),
                           before)

    def test_a_query_on_a_path_that_takes_none_is_ignored(self):
        for target in (b'/v2.1/?a=%ff', b'/?a=%ff', b'/openapi.json?%00'):
            status, headers, payload = raw_request(self.api.url, 'GET',
                                                   target)
            self.assertEqual(200, status, payload)
            self.assertTrue(json.loads(payload))

    def test_a_token_that_is_not_utf8_is_401(self):
        before = count_rows()
        for token in (b'al\xffice:project-a', b'alice:\xed\xa0\x80'):
            self.assertRefused(401, raw_request(
                self.api.url, 'GET', b'/v2.1/servers',
                {'X-Auth-Token': token}), before, message='UTF-8')

    def test_a_utf8_token_names_its_user(self):
        status, _headers, payload = raw_request(
            self.api.url, 'POST', b'/v2.1/os-server-groups',
            {'X-Auth-Token': 'élise:projet'.encode('utf-8'),
             'Content-Type': b'application/json'},
            json.dumps({'server_group': {'name': 'g', 'policy':
                                         'affinity'}}).encode())
        self.assertEqual(200, status, payload)
        group = json.loads(payload)['server_group']
        self.assertEqual(('élise', 'projet'),
                         (group['user_id'], group['project_id']))


class DeepNestingTest(_HostileTest):
    """JSON nested deeper than any valid body, up to past the parser's
    limit."""

    def body(self, depth, path='/servers'):
        inner = '"x"'
        for level in range(depth):
            inner = ('[' + inner + ']' if level % 2
                     else '{"k": ' + inner + '}')
        outer = {'/servers': ('{"server": {"name": "vm", "flavorRef": '
                              '"small", "metadata": ', '}}'),
                 '/os-server-groups': ('{"server_group": {"policy": '
                                       '"affinity", "name": ', '}}'),
                 '/flavors': ('{"flavor": {"vcpus": 1, "ram": 64, '
                              '"name": ', '}}')}[path]
        return (outer[0] + inner + outer[1]).encode('ascii')

    def send(self, client, path, body):
        return client.post(path, data=body, headers={
            'Content-Type': 'application/json'})

    def test_every_depth_up_to_past_the_parser_limit_is_400(self):
        before = count_rows()
        for path, client in (('/servers', self.alice),
                             ('/os-server-groups', self.alice),
                             ('/flavors', self.admin)):
            for depth in (inputs.MAX_DEPTH, 500, 980, 1200, 20000):
                self.assertRefused(400, self.send(
                    client, path, self.body(depth, path)), before)

    def test_the_refusal_names_the_nesting(self):
        before = count_rows()
        for depth in (inputs.MAX_DEPTH, 980, 20000):
            self.assertRefused(400, self.send(
                self.alice, '/servers', self.body(depth)), before,
                message=f'deeper than {inputs.MAX_DEPTH} levels')

    def test_a_shallow_wrong_body_gets_the_schema_error(self):
        before = count_rows()
        self.assertRefused(400, self.send(self.alice, '/servers',
                                          self.body(3)), before,
                           message='metadata')


class SurrogateTest(_HostileTest):
    """A lone surrogate in every string a request can carry is a 400."""

    SURROGATE = '\ud800'

    def test_every_string_of_a_boot(self):
        before = count_rows()
        bad = 'web' + self.SURROGATE
        servers = [
            {'name': bad}, {'flavorRef': bad}, {'imageRef': bad},
            {'availability_zone': bad}, {'metadata': {bad: 'v'}},
            {'metadata': {'k': bad}}]
        hints = [{'target_cell': bad}, {'same_host': [bad]},
                 {'different_host': [bad]}, {'group': bad}]
        for server in servers:
            self.assertRefused(400, self.post(self.alice, '/servers', {
                'server': dict({'name': 'vm', 'flavorRef': 'small'},
                               **server)}), before, message='surrogate')
        for hint in hints:
            self.assertRefused(400, self.post(self.alice, '/servers', {
                'server': {'name': 'vm', 'flavorRef': 'small'},
                'os:scheduler_hints': hint}), before, message='surrogate')

    def test_a_surrogate_in_an_unknown_key_is_400_too(self):
        before = count_rows()
        self.assertRefused(400, self.post(self.alice, '/servers', {
            'server': {'name': 'vm', 'flavorRef': 'small'},
            self.SURROGATE: 1}), before)

    def test_every_string_of_a_flavor(self):
        before = count_rows()
        for field in ('name', 'id', 'description'):
            self.assertRefused(400, self.post(self.admin, '/flavors', {
                'flavor': {'name': 'f', 'vcpus': 1, 'ram': 64,
                           field: 'f' + self.SURROGATE}}), before)

    def test_the_name_of_a_server_group(self):
        before = count_rows()
        for bad in (self.SURROGATE, '\udfff', 'a\udc80b'):
            self.assertRefused(400, self.post(
                self.alice, '/os-server-groups', {'server_group': {
                    'name': bad, 'policy': 'affinity'}}), before)

    def test_a_surrogate_pair_is_one_character_and_kept(self):
        name = 'vm-' + ASTRAL
        response = self.post(self.alice, '/os-server-groups', {
            'server_group': {'name': name, 'policy': 'affinity'}})
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual(name, response.json()['server_group']['name'])
        self.assertIn(b'\\ud83d\\ude00', response.request.body)


class MethodsTest(_HostileTest):
    """405 with Allow; HEAD as GET; OPTIONS with Allow."""

    def setUp(self):
        super().setUp()
        self.document = self.anonymous.get('/openapi.json').json()

    def concrete(self, path):
        return path.replace('{', '').replace('}', '')

    def test_every_undocumented_method_is_405_with_allow(self):
        before = count_rows()
        for path, item in self.document['paths'].items():
            documented = {method.upper() for method in item}
            allow = sorted(documented | {'OPTIONS'} | (
                {'HEAD'} if 'GET' in documented else set()))
            for method in ('GET', 'POST', 'PUT', 'PATCH', 'DELETE',
                           'TRACE'):
                if method in documented:
                    continue
                response = self.admin.request(method, self.concrete(path),
                                              json={})
                self.assertRefused(405, response, before)
                self.assertEqual(', '.join(allow),
                                 response.headers['Allow'], path)

    def test_a_literal_path_has_only_its_own_methods(self):
        before = count_rows()
        response = self.alice.delete('/servers/detail')
        self.assertRefused(405, response, before)
        self.assertEqual('GET, HEAD, OPTIONS', response.headers['Allow'])

    def test_head_answers_as_get_without_a_body(self):
        for path in ('/flavors', '/servers', '/flavors/small'):
            get = self.alice.get(path)
            head = self.alice.request('HEAD', path)
            self.assertEqual(get.status_code, head.status_code)
            self.assertEqual(get.headers['Content-Length'],
                             head.headers['Content-Length'])
            self.assertEqual(b'', head.content)
        self.assertEqual(401, self.anonymous.request('HEAD',
                                                     '/servers').status_code)

    def test_options_answers_the_methods_of_a_path(self):
        response = self.anonymous.request('OPTIONS', '/servers')
        self.assertEqual(204, response.status_code)
        self.assertEqual('GET, HEAD, OPTIONS, POST',
                         response.headers['Allow'])
        before = count_rows()
        self.assertRefused(404, self.anonymous.request('OPTIONS',
                                                       '/nowhere'), before)


class MediaTypeTest(_HostileTest):
    """A body that is not said to be JSON is 415."""

    BODIES = {
        '/servers': {'server': {'name': 'vm', 'flavorRef': 'small'}},
        '/flavors': {'flavor': {'name': 'f', 'vcpus': 1, 'ram': 64}},
        '/os-server-groups': {'server_group': {'name': 'g',
                                               'policy': 'affinity'}},
    }

    def test_wrong_media_types_are_415(self):
        before = count_rows()
        for path, body in self.BODIES.items():
            for media_type in ('text/plain', 'application/xml',
                               'application/x-www-form-urlencoded',
                               'multipart/form-data',
                               'application/json; charset=latin-1', ''):
                self.assertRefused(415, self.admin.post(
                    path, data=json.dumps(body).encode(), headers={
                        'Content-Type': media_type}), before,
                    message='application/json')

    def test_a_body_without_a_media_type_is_415(self):
        before = count_rows()
        status_headers_body = raw_request(
            self.api.url, 'POST', b'/v2.1/os-server-groups',
            {'X-Auth-Token': b'alice:project-a'},
            json.dumps(self.BODIES['/os-server-groups']).encode())
        self.assertRefused(415, status_headers_body, before)

    def test_the_media_type_is_checked_after_authorization(self):
        before = count_rows()
        self.assertRefused(403, self.alice.post(
            '/flavors', data=b'{}', headers={'Content-Type': 'text/plain'}),
            before)

    def test_json_with_a_utf8_charset_is_accepted(self):
        response = self.alice.post(
            '/os-server-groups', data=json.dumps(
                self.BODIES['/os-server-groups']).encode(),
            headers={'Content-Type': 'Application/JSON; charset="UTF-8"'})
        self.assertEqual(200, response.status_code, response.text)


class WholeNumberTest(_HostileTest):
    """1.0 is the integer 1 (JSON Schema 2020-12); what is stored is."""

    def test_a_flavor_with_whole_floats_is_stored_with_ints(self):
        response = self.post(self.admin, '/flavors', {'flavor': {
            'name': 'f', 'id': 'f', 'vcpus': 2.0, 'ram': 64.0,
            'disk': 0.0}})
        self.assertEqual(200, response.status_code, response.text)
        self.assertIn('"vcpus": 2,', response.text)
        flavor = self.alice.get('/flavors/f').json()['flavor']
        self.assertEqual((2, 64, 0), (flavor['vcpus'], flavor['ram'],
                                      flavor['disk']))
        self.assertTrue(all(type(flavor[key]) is int
                            for key in ('vcpus', 'ram', 'disk')))

    def test_a_whole_float_count_boots_that_many(self):
        response = self.post(self.alice, '/servers', {'server': {
            'name': 'vm', 'flavorRef': 'small', 'min_count': 2.0,
            'max_count': 2.0}})
        self.assertEqual(202, response.status_code, response.text)
        self.assertEqual(2, len(response.json()['servers']))
        self.assertEqual([2], self.casts)

    def test_a_fraction_is_400(self):
        before = count_rows()
        self.assertRefused(400, self.post(self.admin, '/flavors', {
            'flavor': {'name': 'f', 'vcpus': 1.5, 'ram': 64}}), before)
        self.assertRefused(400, self.post(self.alice, '/servers', {
            'server': {'name': 'vm', 'flavorRef': 'small',
                       'max_count': 1.5}}), before)

    def test_nan_and_infinity_are_not_json(self):
        before = count_rows()
        for value in (b'NaN', b'Infinity', b'-Infinity'):
            self.assertRefused(400, self.admin.post(
                '/flavors', data=b'{"flavor": {"name": "f", "ram": 64, '
                b'"vcpus": ' + value + b'}}',
                headers={'Content-Type': 'application/json'}), before,
                message='not valid JSON')
