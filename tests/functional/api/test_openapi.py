"""/openapi.json and the routes agree, both ways."""

import re

from tests import base
from tests.functional.api import fixtures as api_fixtures

METHODS = ('get', 'post', 'put', 'patch', 'delete')
SAMPLE_ID = '11111111-2222-3333-4444-555555555555'


class OpenAPITest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=1))
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        self.document = self.admin.get('/openapi.json', prefix='').json()

    def documented(self):
        return {(method.upper(), path)
                for path, item in self.document['paths'].items()
                for method in item if method in METHODS}

    def test_it_is_served_at_the_root_and_under_the_prefix(self):
        self.assertEqual(self.document, self.admin.get('/openapi.json').json())
        self.assertEqual('/v2.1', self.document['servers'][0]['url'])

    def test_every_route_is_documented(self):
        routes = {(route.method, route.path)
                  for route in self.api.app.api.routes}
        self.assertEqual(set(), routes - self.documented())

    def test_every_documented_operation_is_routed(self):
        for method, path in sorted(self.documented()):
            concrete = re.sub(r'\{\w+\}', SAMPLE_ID, path)
            response = self.admin.request(method, concrete, json={})
            message = response.text
            self.assertNotIn(response.status_code, (405, 500), message)
            if response.status_code == 404:
                self.assertNotIn('No such path', message)

    def test_an_undocumented_method_is_not_routed(self):
        for path in self.document['paths']:
            concrete = re.sub(r'\{\w+\}', SAMPLE_ID, path)
            response = self.admin.request('PATCH', concrete, json={})
            self.assertIn(response.status_code, (404, 405), path)

    def test_the_body_schemas_are_the_validators(self):
        post = self.document['paths']['/servers']['post']
        schema = post['requestBody']['content']['application/json']['schema']
        self.assertEqual(['server'], schema['required'])
        self.assertEqual(['name', 'flavorRef'],
                         schema['properties']['server']['required'])
