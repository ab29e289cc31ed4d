"""Every body the API answers is valid against the schema it documents.

schemathesis checks the bodies it happens to reach; this reaches each
representation on purpose, in each state that changes its keys: a
server while only a build request, ACTIVE, in ERROR with its fault, in
a cell that does not answer (UNKNOWN), seen by its owner and by an
administrator; a multi-create's answer; flavors, server groups,
hypervisors, cells, flows with their atoms; errors. Each is validated
against the response schema of its operation in the served
``/openapi.json``, references resolved.
"""

import re

import jsonschema

from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional.api import test_servers

HUGE = {'name': 'huge', 'id': 'huge', 'vcpus': 4096, 'ram': 64}


class ViewSchemasTest(base.TestCase):

    def setUp(self):
        super().setUp()
        # A flavor too big for any host must reach the scheduler (ERROR
        # with a fault), not the quota check.
        self.flags(cores=-1, ram=-1, group='quota')
        self.api = self.useFixture(api_fixtures.APIServer(cells=2,
                                                          hosts_per_cell=1))
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        self.document = self.alice.get('/openapi.json').json()
        self.checked = set()

    def assertDocumented(self, method, template, response):
        """``response`` is valid against what ``method template`` says
        its status answers."""
        operation = self.document['paths'][template][method.lower()]
        described = operation['responses'][str(response.status_code)]
        content = described.get('content')
        if content is None:
            self.assertEqual(b'', response.content)
            return
        schema = dict(content['application/json']['schema'],
                      components=self.document['components'])
        jsonschema.Draft202012Validator(schema).validate(response.json())
        self.checked.add((method, template, response.status_code))

    def get(self, client, template, path=None, code=200):
        response = client.get(path or template)
        self.assertEqual(code, response.status_code, response.text)
        self.assertDocumented('GET', template, response)
        return response.json()

    def boot(self, **server):
        response = self.alice.post('/servers', json={'server': dict(
            {'name': 'vm', 'flavorRef': 'small', 'imageRef': 'cirros',
             'metadata': {'role': 'web'}}, **server)})
        self.assertEqual(202, response.status_code, response.text)
        self.assertDocumented('POST', '/servers', response)
        return response.json()

    def test_servers_in_every_state_for_owner_and_admin(self):
        self.admin.post('/flavors', json={'flavor': HUGE})
        active = self.boot()['server']['id']
        several = [server['id'] for server in
                   self.boot(min_count=2, max_count=2)['servers']]
        failed = self.boot(flavorRef='huge')['server']['id']
        self.api.cluster.wait_for_quiet()
        self.api.app.api.conductor = test_servers._NoConductor()
        building = self.boot(imageRef='')['server']['id']
        for client in (self.alice, self.admin):
            for uuid in [active, failed, building] + several:
                self.get(client, '/servers/{server_id}',
                         f'/servers/{uuid}')
            self.get(client, '/servers')
        listed = self.get(self.alice, '/servers/detail')['servers']
        statuses = {server['id']: server['status'] for server in listed}
        self.assertEqual(('ACTIVE', 'ERROR', 'BUILD'), (
            statuses[active], statuses[failed], statuses[building]))
        fault = self.admin.get(f'/servers/{failed}').json()['server'][
            'fault']
        self.assertIn('details', fault)

    def test_a_server_of_a_cell_that_does_not_answer(self):
        uuids = [server['id'] for server in
                 self.boot(min_count=2, max_count=2)['servers']]
        self.api.cluster.wait_for_quiet()
        broken = self.api.cluster.find(uuids[0])[0]
        broken.update(self.api.cluster.ctx,
                      database_connection='sqlite:////nonexistent/dir/x.db')
        listed = self.get(self.alice, '/servers/detail')['servers']
        self.assertIn('UNKNOWN', {server['status'] for server in listed})
        response = self.alice.get(f'/servers/{uuids[0]}')
        self.assertEqual(503, response.status_code, response.text)
        self.assertDocumented('GET', '/servers/{server_id}', response)

    def test_flavors_groups_and_the_version_document(self):
        created = self.admin.post('/flavors', json={'flavor': dict(
            HUGE, description='big')})
        self.assertDocumented('POST', '/flavors', created)
        again = self.admin.post('/flavors', json={'flavor': HUGE})
        self.assertEqual(409, again.status_code)
        self.assertDocumented('POST', '/flavors', again)
        self.get(self.alice, '/flavors')
        self.get(self.alice, '/flavors/{flavor_id}', '/flavors/huge')
        group = self.alice.post('/os-server-groups', json={'server_group': {
            'name': 'g', 'policy': 'affinity'}})
        self.assertDocumented('POST', '/os-server-groups', group)
        group_id = group.json()['server_group']['id']
        self.boot(min_count=2, max_count=2)
        self.alice.post('/servers', json={
            'server': {'name': 'member', 'flavorRef': 'small'},
            'os:scheduler_hints': {'group': group_id}})
        self.get(self.alice, '/os-server-groups')
        members = self.get(self.alice, '/os-server-groups/{group_id}',
                           f'/os-server-groups/{group_id}')
        self.assertEqual(1, len(members['server_group']['members']))
        self.get(self.alice, '/')
        self.api.cluster.wait_for_quiet()

    def test_the_admin_views(self):
        uuid = self.boot()['server']['id']
        self.api.cluster.wait_for_quiet()
        self.get(self.admin, '/os-hypervisors/detail')
        self.get(self.admin, '/os-cells')
        self.get(self.admin, '/os-zones')
        flows = self.get(self.admin, '/os-flows',
                         f'/os-flows?instance_uuid={uuid}')['flows']
        self.assertEqual(1, len(flows))
        flow = self.get(self.admin, '/os-flows/{flow_id}',
                        f'/os-flows/{flows[0]["uuid"]}')['flow']
        self.assertTrue(flow['atoms'])
        self.get(self.admin, '/os-flows', '/os-flows?state=success')

    def test_the_catalog_extra_specs_and_provider_views(self):
        def call(method, template, path, code, body=None):
            response = self.admin.request(method, path, json=body)
            self.assertEqual(code, response.status_code, response.text)
            self.assertDocumented(method, template, response)
            return response

        classes = '/os-resource-classes'
        call('POST', classes, classes, 201, {'name': 'CUSTOM_FPGA'})
        call('POST', classes, classes, 409, {'name': 'CUSTOM_FPGA'})
        self.get(self.admin, classes, classes + '?limit=3')
        self.get(self.admin, classes + '/{name}', classes + '/CUSTOM_FPGA')
        trait = '/os-traits/{name}'
        call('PUT', trait, '/os-traits/CUSTOM_SSD', 201)
        call('PUT', trait, '/os-traits/CUSTOM_SSD', 204)
        self.get(self.admin, '/os-traits', '/os-traits?limit=3')
        self.get(self.admin, trait, '/os-traits/CUSTOM_SSD')
        created = self.admin.post('/flavors', json={'flavor': dict(
            HUGE, extra_specs={'resources:CUSTOM_FPGA': '1'})})
        self.assertDocumented('POST', '/flavors', created)
        specs = '/flavors/{flavor_id}/os-extra_specs'
        spec = specs + '/{key}'
        call('POST', specs, '/flavors/huge/os-extra_specs', 200,
             {'extra_specs': {'trait:CUSTOM_SSD': 'required'}})
        self.get(self.alice, specs, '/flavors/huge/os-extra_specs')
        self.get(self.alice, spec,
                 '/flavors/huge/os-extra_specs/trait:CUSTOM_SSD')
        call('PUT', spec, '/flavors/huge/os-extra_specs/x', 200, {'x': 'y'})
        call('DELETE', classes + '/{name}', classes + '/CUSTOM_FPGA', 409)
        call('DELETE', spec, '/flavors/huge/os-extra_specs/x', 204)
        self.get(self.admin, '/os-resource-providers')

    def test_errors(self):
        for client, method, path, template in (
                (self.alice, 'GET', '/servers/nope', '/servers/{server_id}'),
                (self.alice, 'GET', '/os-cells', '/os-cells'),
                (self.api.client(None), 'GET', '/servers', '/servers'),
                (self.alice, 'POST', '/servers', '/servers'),
                (self.alice, 'PUT', '/servers', '/servers')):
            response = client.request(method, path, json={})
            self.assertGreaterEqual(response.status_code, 400)
            documented_method = (method if method != 'PUT' else 'GET')
            self.assertDocumented(documented_method, template, response)
            if response.status_code == 405:
                self.assertTrue(re.match(r'^[A-Z, ]+$',
                                         response.headers['Allow']))
