"""Bad input over HTTP: nova-shaped errors, the right code, nothing written."""

from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional.api import test_servers

TABLES = ('build_requests', 'request_specs', 'instance_mappings')


class ErrorsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=1))
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)

    def rows(self):
        return [test_servers.count_rows(table) for table in TABLES]

    def assertRejected(self, code, response, key):
        self.assertEqual(code, response.status_code, response.text)
        body = response.json()
        self.assertEqual([key], list(body))
        self.assertEqual(code, body[key]['code'])
        self.assertTrue(body[key]['message'])
        self.assertEqual([0, 0, 0], self.rows())

    def post_server(self, server, **extra):
        return self.alice.post('/servers',
                               json=dict({'server': server}, **extra))

    def test_a_body_that_is_not_json_is_400(self):
        self.assertRejected(400, self.alice.post(
            '/servers', data=b'{"server": ', headers={
                'Content-Type': 'application/json'}), 'badRequest')

    def test_a_body_that_is_not_utf8_is_400(self):
        self.assertRejected(400, self.alice.post(
            '/servers', data=b'\xff\xfe', headers={
                'Content-Type': 'application/json'}), 'badRequest')

    def test_a_missing_server_key_is_400(self):
        self.assertRejected(400, self.alice.post('/servers', json={}),
                            'badRequest')

    def test_a_missing_flavor_is_400(self):
        self.assertRejected(400, self.post_server({'name': 'vm'}),
                            'badRequest')

    def test_an_unknown_field_is_400(self):
        self.assertRejected(400, self.post_server(
            {'name': 'vm', 'flavorRef': 'small', 'colour': 'red'}),
            'badRequest')

    def test_an_unknown_flavor_is_400_naming_it(self):
        response = self.post_server({'name': 'vm', 'flavorRef': 'nope'})
        self.assertRejected(400, response, 'badRequest')
        self.assertIn('nope', response.json()['badRequest']['message'])

    def test_min_count_over_max_count_is_400(self):
        self.assertRejected(400, self.post_server(
            {'name': 'vm', 'flavorRef': 'small', 'min_count': 3,
             'max_count': 2}), 'badRequest')

    def test_a_zero_count_is_400(self):
        self.assertRejected(400, self.post_server(
            {'name': 'vm', 'flavorRef': 'small', 'max_count': 0}),
            'badRequest')

    def test_a_count_with_a_fraction_is_400(self):
        self.assertRejected(400, self.post_server(
            {'name': 'vm', 'flavorRef': 'small', 'max_count': 2.5}),
            'badRequest')

    def test_a_count_over_the_limit_is_400(self):
        self.assertRejected(400, self.post_server(
            {'name': 'vm', 'flavorRef': 'small', 'max_count': 10 ** 6}),
            'badRequest')

    def test_an_over_long_name_is_400(self):
        self.assertRejected(400, self.post_server(
            {'name': 'x' * 256, 'flavorRef': 'small'}), 'badRequest')

    def test_a_blank_name_is_400(self):
        self.assertRejected(400, self.post_server(
            {'name': '  ', 'flavorRef': 'small'}), 'badRequest')

    def test_a_non_string_metadata_value_is_400(self):
        self.assertRejected(400, self.post_server(
            {'name': 'vm', 'flavorRef': 'small', 'metadata': {'a': 1}}),
            'badRequest')

    def test_an_unknown_server_group_is_400(self):
        self.assertRejected(400, self.post_server(
            {'name': 'vm', 'flavorRef': 'small'},
            **{'os:scheduler_hints': {
                'group': '11111111-2222-3333-4444-555555555555'}}),
            'badRequest')

    def test_an_oversized_body_is_413(self):
        self.assertRejected(413, self.alice.post(
            '/servers', data=b'{"x": "' + b'a' * 200000 + b'"}'),
            'overLimit')

    def test_an_oversized_chunked_body_is_413(self):
        def chunks():
            for _ in range(200):
                yield b'a' * 1024
        self.assertRejected(413, self.alice.post('/servers', data=chunks()),
                            'overLimit')

    def test_an_unknown_server_is_404(self):
        self.assertRejected(404, self.alice.get(
            '/servers/11111111-2222-3333-4444-555555555555'), 'itemNotFound')

    def test_deleting_an_unknown_server_is_404(self):
        self.assertRejected(404, self.alice.delete('/servers/nope'),
                            'itemNotFound')

    def test_an_unknown_path_is_404(self):
        self.assertRejected(404, self.alice.get('/nowhere'), 'itemNotFound')

    def test_a_path_outside_the_prefix_is_404(self):
        self.assertRejected(404, self.alice.get('/servers', prefix=''),
                            'itemNotFound')

    def test_a_wrong_method_is_405(self):
        self.assertRejected(405, self.alice.request('PUT', '/servers'),
                            'badMethod')

    def test_no_token_is_401(self):
        self.assertRejected(401, self.api.client(None).get('/servers'),
                            'unauthorized')

    def test_a_token_without_a_project_is_401(self):
        self.assertRejected(401, self.api.client('alice').get('/servers'),
                            'unauthorized')

    def test_a_flavor_name_taken_is_409(self):
        admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        response = admin.post('/flavors', json={'flavor': {
            'name': 'small', 'vcpus': 1, 'ram': 1}})
        self.assertRejected(409, response, 'conflictingRequest')

    def test_a_bad_flow_state_filter_is_400(self):
        admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        self.assertRejected(400, admin.get('/os-flows?state=NAPPING'),
                            'badRequest')

    def test_no_error_reached_the_catch_all(self):
        self.post_server({'name': 'vm', 'flavorRef': 'nope'})
        self.alice.get('/servers/nope')
        self.assertEqual(0, self.api.app.unexpected)
