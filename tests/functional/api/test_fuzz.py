"""No input reaches the catch-all: generated requests never get a 500.

Hypothesis generates request bodies (arbitrary JSON, lone surrogates
included, nested up to far beyond Python's recursion limit, and valid
server bodies with one field replaced by arbitrary JSON), paths from the
OpenAPI document with arbitrary identifiers, raw bytes in paths and
query strings (not UTF-8, not even percent-encoded), methods, media
types and tokens, and sends them to the WSGI application (through
webob, in process, to stay well under a minute). Every answer must be a
non-5xx JSON error (or a success), and the catch-all must never have
run. ``test_hostile_input`` sends the same kinds of input over HTTP.
"""

import json
import re
import urllib.parse

from hypothesis import given
from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
import webob

from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional.api import test_servers

EXAMPLES = 400

# Values at the edges of what the schemas accept, mixed in with the rest.
EDGE_VALUES = (0, 1, 2, -1, 1.0, 2.0, 1.5, 1e300, 2 ** 31, 2 ** 64, True,
               None, '', ' ', '1', 'small', 'x' * 256, '\x00', '\u2603',
               [], {}, [1], {'a': 'b'})
edges = st.sampled_from(EDGE_VALUES)

# Text with lone surrogates (\ud800-\udfff) among other characters.
surrogate_text = st.text(alphabet=st.characters(
    categories=['Cs', 'Lu', 'Nd', 'Zs', 'Cc']), max_size=20)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | edges
    | st.text(max_size=300) | surrogate_text,
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(max_size=20), children, max_size=5),
    max_leaves=20)

SERVER_FIELDS = ('name', 'flavorRef', 'imageRef', 'availability_zone',
                 'min_count', 'max_count', 'metadata')

QUERY_NAMES = ('instance_uuid', 'state', 'reservation_id', 'limit',
               'marker', 'other')

tokens = st.sampled_from([None, 'alice:project-a', 'admin:admin',
                          'bob:project-b', '', ':', 'x' * 300 + ':p'])

media_types = st.sampled_from([
    'application/json', 'application/json', 'application/json; charset=utf-8',
    None, 'text/plain', 'application/xml', 'multipart/form-data',
    'application/json; charset=latin-1', 'Application/JSON', ';;', '\x00'])


@st.composite
def nested(draw):
    """JSON text of a value nested 1 to 1,500 levels deep in lists and
    objects (written out, since ``json.dumps`` stops near 1,000)."""
    depth = draw(st.one_of(st.integers(min_value=1, max_value=40),
                           st.integers(min_value=400, max_value=1500)))
    text = json.dumps(draw(st.one_of(edges, surrogate_text)))
    for kind in draw(st.lists(st.booleans(), min_size=depth,
                              max_size=depth)):
        text = '{"k": ' + text + '}' if kind else '[' + text + ']'
    return text


# Valid bodies of each POST path, to be mutated field by field.
VALID = {
    '/servers': ('server', {'name': 'vm', 'flavorRef': 'small'},
                 SERVER_FIELDS),
    '/flavors': ('flavor', {'name': 'f', 'vcpus': 1, 'ram': 64},
                 ('name', 'id', 'vcpus', 'ram', 'disk', 'description')),
    '/os-server-groups': ('server_group', {'name': 'g',
                                           'policy': 'affinity'},
                          ('name', 'policy')),
    '/os-allocations': ('allocation', {'resources': {'DISK_GB': 1}},
                        ('resources', 'required_traits', 'forbidden_traits',
                         'near', 'far', 'availability_zone')),
}

# Valid bodies of each PUT path.
VALID_PUT = {
    '/os-quota-sets/project-a': ('quota_set', {'instances': 5},
                                 ('instances', 'cores', 'ram', 'other',
                                  'DISK_GB', 'CUSTOM_X')),
}


@st.composite
def mutated_bodies(draw, path='/servers'):
    """A valid body of ``path`` with one to three fields replaced."""
    key, valid, fields = VALID.get(path) or VALID_PUT[path]
    inner = dict(valid)
    for field in draw(st.lists(st.sampled_from(fields), min_size=1,
                               max_size=3)):
        inner[field] = draw(st.one_of(edges, json_values))
    body = {key: inner}
    if path != '/servers':
        return body
    if draw(st.booleans()):
        body['os:scheduler_hints'] = draw(json_values)
    return body


class _NoConductor:
    def schedule_and_build_instances(self, ctxt, build_requests,
                                     request_specs):
        pass


class FuzzTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=1))
        self.app = self.api.app
        self.app.api.conductor = _NoConductor()
        self.paths = sorted(self.app.api.openapi['paths'])

    def send(self, method, path, body, token,
             media_type='application/json', raw_path=None, raw_query=None):
        """Send a request; assert a non-5xx answer, JSON when an error.

        ``raw_path`` and ``raw_query`` (bytes) replace the path and the
        query string as a server hands them over (PEP 3333: latin-1),
        whatever they are.
        """
        request = webob.Request.blank('/v2.1' + path, method=method)
        if raw_path is not None:
            request.environ['PATH_INFO'] = raw_path.decode('latin-1')
        if raw_query is not None:
            request.environ['QUERY_STRING'] = raw_query.decode('latin-1')
        if token is not None:
            request.headers['X-Auth-Token'] = token
        if body is not None:
            if media_type is not None:
                request.headers['Content-Type'] = media_type
            request.body = body
        response = request.get_response(self.app)
        where = f'{method} {request.environ["PATH_INFO"]!r} {body!r}'
        self.assertLess(response.status_int, 500,
                        f'{where}: {response.text}')
        if response.status_int >= 400 and method != 'HEAD':
            self.assertEqual('application/json', response.content_type,
                             where)
            self.assertEqual([response.status_int], [
                error['code'] for error in response.json.values()])
        self.assertEqual(0, self.app.unexpected)
        return response

    def test_generated_server_bodies_never_get_a_500(self):
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.one_of(mutated_bodies(), json_values), tokens)
        def check(body, token):
            self.send('POST', '/servers',
                      json.dumps(body).encode('utf-8'), token)

        check()

    def test_generated_paths_and_bytes_never_get_a_500(self):
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.sampled_from(self.paths), st.text(max_size=60),
               st.sampled_from(['GET', 'POST', 'DELETE', 'PUT']),
               st.one_of(st.none(), st.binary(max_size=200)), tokens,
               st.dictionaries(st.sampled_from(QUERY_NAMES),
                               st.text(max_size=40), max_size=2))
        def check(path, ident, method, body, token, query):
            quoted = urllib.parse.quote(ident, safe='') or 'x'
            concrete = re.sub(r'\{\w+\}', quoted, path)
            if query:
                concrete += '?' + urllib.parse.urlencode(query)
            self.send(method, concrete, body, token)

        check()

    def test_generated_flavor_and_group_bodies_never_get_a_500(self):
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.sampled_from(['/flavors', '/os-server-groups',
                                '/os-allocations']).flatmap(
            lambda path: st.tuples(st.just(path), mutated_bodies(path))),
            tokens)
        def check(path_and_body, token):
            path, body = path_and_body
            self.send('POST', path, json.dumps(body).encode('utf-8'), token)

        check()

    def test_generated_quota_bodies_never_get_a_500(self):
        path = '/os-quota-sets/project-a'

        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.one_of(mutated_bodies(path), json_values), tokens)
        def check(body, token):
            self.send('PUT', path, json.dumps(body).encode('utf-8'), token)

        check()

    def test_generated_raw_paths_and_queries_never_get_a_500(self):
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.sampled_from(self.paths), st.binary(max_size=40),
               st.binary(max_size=80),
               st.sampled_from(['GET', 'DELETE', 'HEAD', 'OPTIONS']),
               tokens)
        def check(path, ident, query, method, token):
            template = ('/v2.1' + path).encode('utf-8')
            raw = re.sub(rb'\{\w+\}', lambda _m: ident.replace(
                b'/', b'_') or b'x', template)
            self.send(method, path, None, token, raw_path=raw,
                      raw_query=query)

        check()

    def test_generated_deep_and_surrogate_bodies_never_get_a_500(self):
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.sampled_from(sorted(VALID)), nested(), tokens)
        def check(path, value, token):
            key, valid, fields = VALID[path]
            body = json.dumps({key: dict(valid, **{fields[0]: None})})
            body = body.replace('null', value, 1)
            self.send('POST', path, body.encode('utf-8'), token)

        check()

    def test_generated_media_types_never_get_a_500(self):
        @settings(max_examples=EXAMPLES // 4, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.sampled_from(sorted(VALID)), media_types, tokens)
        def check(path, media_type, token):
            key, valid, _fields = VALID[path]
            self.send('POST', path, json.dumps({key: valid}).encode(),
                      token, media_type=media_type)

        check()

    def test_every_edge_value_in_every_field_never_gets_a_500(self):
        for path, (key, valid, fields) in sorted(VALID.items()):
            for field in fields:
                for value in EDGE_VALUES:
                    body = {key: dict(valid, **{field: value})}
                    self.send('POST', path, json.dumps(body).encode('utf-8'),
                              'admin:admin')

    def test_rejected_bodies_write_nothing(self):
        before = [test_servers.count_rows(t) for t in
                  ('build_requests', 'request_specs', 'instance_mappings')]
        self.send('POST', '/servers', b'{"server": {"name": 1}}',
                  'alice:project-a')
        self.send('POST', '/servers', json.dumps({'server': {
            'name': 'vm', 'flavorRef': 'nope', 'max_count': 5}}).encode(),
            'alice:project-a')
        after = [test_servers.count_rows(t) for t in
                 ('build_requests', 'request_specs', 'instance_mappings')]
        self.assertEqual(before, after)
