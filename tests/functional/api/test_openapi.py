"""/openapi.json and the routes agree, both ways; the document is whole.

Whole: every operation documents every status it can answer, each error
with the error schema, each success body with a schema that says more
than "an object", and the links that schemathesis's stateful phase
follows name operations that exist. ``test_schemathesis`` then checks
that the API answers as documented.
"""

import re

import jsonschema

from cellboot.api import wsgi
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
            self.assertEqual(405, response.status_code, path)
            self.assertNotIn('PATCH', response.headers['Allow'])

    def operations(self):
        for path, item in sorted(self.document['paths'].items()):
            for method, operation in sorted(item.items()):
                yield method.upper(), path, operation

    def test_every_error_response_has_the_error_schema(self):
        for method, path, operation in self.operations():
            for code, response in operation['responses'].items():
                if int(code) < 400:
                    continue
                schema = response['content']['application/json']['schema']
                self.assertEqual({'$ref': '#/components/schemas/Error'},
                                 schema, f'{method} {path} {code}')

    def test_every_success_body_has_a_schema_of_its_own(self):
        for method, path, operation in self.operations():
            successes = [response for code, response in
                         operation['responses'].items() if int(code) < 300]
            # One success with a body at most; others (a PUT that found
            # what it would create: 204) have none.
            bodies = [response['content'] for response in successes
                      if 'content' in response]
            self.assertLessEqual(len(bodies), 1, f'{method} {path}')
            self.assertTrue(successes, f'{method} {path}')
            if not bodies:
                continue
            content = bodies[0]
            schema = content['application/json']['schema']
            self.assertNotEqual({'type': 'object'}, schema,
                                f'{method} {path}')
            self.assertTrue(schema.get('required') or schema.get('$ref'),
                            f'{method} {path}')

    def test_every_operation_documents_what_any_request_may_get(self):
        for method, path, operation in self.operations():
            codes = set(operation['responses'])
            self.assertLessEqual({'405', '413'}, codes, f'{method} {path}')
            if operation['security']:
                self.assertIn('401', codes, f'{method} {path}')
            if 'requestBody' in operation:
                self.assertLessEqual({'400', '415'}, codes)
            if '{' in path:
                self.assertIn('404', codes, f'{method} {path}')
            # Every operation that reads a database: one may be down.
            if operation['security']:
                self.assertIn('503', codes, f'{method} {path}')
                self.assertIn('Retry-After',
                              operation['responses']['503']['headers'])

    def test_statuses_particular_to_an_operation_are_documented(self):
        paths = self.document['paths']
        self.assertIn('409', paths['/flavors']['post']['responses'])
        trait = paths['/os-traits/{name}']
        self.assertLessEqual({'201', '204'}, set(trait['put']['responses']))
        for path in ('/os-resource-classes/{name}', '/os-traits/{name}'):
            self.assertIn('409', paths[path]['delete']['responses'])
        for method in ('get', 'delete'):
            self.assertIn('503',
                          paths['/servers/{server_id}'][method]['responses'])
        self.assertIn('Allow', paths['/servers']['get']['responses']['405'][
            'headers'])

    def test_every_schema_is_a_valid_json_schema(self):
        for name, schema in self.document['components']['schemas'].items():
            jsonschema.Draft202012Validator.check_schema(schema)
        for method, path, operation in self.operations():
            for response in operation['responses'].values():
                for media in response.get('content', {}).values():
                    jsonschema.Draft202012Validator.check_schema(
                        media['schema'])
            body = operation.get('requestBody')
            if body is not None:
                jsonschema.Draft202012Validator.check_schema(
                    body['content']['application/json']['schema'])

    def test_links_name_operations_that_exist(self):
        ids = {operation['operationId']
               for _method, _path, operation in self.operations()}
        links = [link for _method, _path, operation in self.operations()
                 for response in operation['responses'].values()
                 for link in response.get('links', {}).values()]
        self.assertGreaterEqual(len(links), 5)
        for link in links:
            self.assertIn(link['operationId'], ids)

    def test_the_largest_count_is_the_configured_one(self):
        self.flags(max_count=7, group='api')
        app = wsgi.make_app(self.api.cluster.scheduler)
        schema = app.api.openapi['paths']['/servers']['post'][
            'requestBody']['content']['application/json']['schema']
        self.assertEqual(7, schema['properties']['server']['properties'][
            'max_count']['maximum'])

    def test_the_body_schemas_are_the_validators(self):
        post = self.document['paths']['/servers']['post']
        schema = post['requestBody']['content']['application/json']['schema']
        self.assertEqual(['server'], schema['required'])
        self.assertEqual(['name', 'flavorRef'],
                         schema['properties']['server']['required'])
