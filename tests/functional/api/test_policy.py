"""A policy file changes who may do what on a running API."""

import os

import webob

from cellboot.api import errors
from cellboot.api import wsgi
from cellboot.conf import api as api_conf
from cellboot.objects import build_request
from cellboot.objects import instance_mapping
from tests import base
from tests.functional.api import fixtures as api_fixtures


class PolicyFileTest(api_fixtures.OneHostAPITest):
    """Rules overridden in ``[oslo_policy] policy_file`` while it serves."""

    def setUp(self):
        super().setUp()
        self.writes = 0

    def write_policy(self, text):
        path = self.conf_fixture.policy_file
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
        # oslo.policy reloads on a new modification time; make each
        # write's time distinct whatever the file system's resolution.
        self.writes += 1
        stamp = os.stat(path).st_mtime + self.writes
        os.utime(path, (stamp, stamp))

    def test_an_override_lets_a_user_list_hypervisors(self):
        self.assertEqual(403,
                         self.alice.get('/os-hypervisors/detail').status_code)
        self.write_policy('"os_compute_api:os-hypervisors:list-detail": '
                          '"project_id:project-a"\n')
        response = self.alice.get('/os-hypervisors/detail')
        self.assertEqual(200, response.status_code)
        self.assertEqual(1, len(response.json()['hypervisors']))
        bob = self.api.client(api_fixtures.BOB_TOKEN)
        self.assertEqual(403, bob.get('/os-hypervisors/detail').status_code)

    def test_an_override_forbids_a_user_to_create_servers(self):
        self.write_policy('"os_compute_api:servers:create": '
                          '"rule:admin_api"\n')
        response = self.alice.boot()
        self.assertEqual(403, response.status_code)
        self.assertEqual(
            'Policy does not allow os_compute_api:servers:create to be '
            'performed.', response.json()['forbidden']['message'])
        ctx = self.api.cluster.ctx
        self.assertEqual(
            [], build_request.BuildRequest.get_by_project(ctx, 'project-a'))
        self.assertEqual([], instance_mapping.InstanceMapping.get_by_project(
            ctx, 'project-a'))
        self.assertEqual(202, self.admin.boot().status_code)

    def test_an_override_can_forbid_a_delete_the_owner_still_sees(self):
        uuid = self.alice.boot().json()['server']['id']
        self.api.cluster.wait_for_quiet()
        self.write_policy('"os_compute_api:servers:delete": '
                          '"rule:context_is_admin"\n')
        response = self.alice.delete(f'/servers/{uuid}')
        self.assertEqual(403, response.status_code)
        self.assertEqual(200, self.alice.get(f'/servers/{uuid}').status_code)
        self.assertEqual(204, self.admin.delete(f'/servers/{uuid}')
                         .status_code)

    def test_an_override_can_show_hosts_to_a_project(self):
        uuid = self.alice.boot().json()['server']['id']
        self.api.cluster.wait_for_quiet()
        server = self.alice.get(f'/servers/{uuid}').json()['server']
        self.assertNotIn('OS-EXT-SRV-ATTR:host', server)
        self.write_policy('"os_compute_api:os-extended-server-attributes": '
                          '"project_id:%(project_id)s"\n')
        server = self.alice.get(f'/servers/{uuid}').json()['server']
        self.assertIsNotNone(server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual('cell1', server['cellboot:cell'])

    def test_overrides_of_the_instance_action_rules(self):
        uuid = self.alice.boot().json()['server']['id']
        self.api.cluster.wait_for_quiet()
        actions = f'/servers/{uuid}/os-instance-actions'
        (listed,) = self.alice.get(actions).json()['instanceActions']
        shown = f'{actions}/{listed["request_id"]}'
        (event,) = self.alice.get(shown).json()['instanceAction']['events']
        self.assertNotIn('host', event)
        self.write_policy(
            '"os_compute_api:os-instance-actions:events:details": '
            '"project_id:%(project_id)s"\n'
            '"os_compute_api:os-instance-actions:list": '
            '"rule:context_is_admin"\n')
        (event,) = self.alice.get(shown).json()['instanceAction']['events']
        self.assertEqual('cell1-host1', event['host'])
        response = self.alice.get(actions)
        self.assertEqual(403, response.status_code)
        self.assertIn('os_compute_api:os-instance-actions:list',
                      response.json()['forbidden']['message'])
        self.assertEqual(200, self.admin.get(actions).status_code)

    def test_a_policy_file_that_does_not_parse_refuses_everything(self):
        self.write_policy('"os_compute_api:servers:index": [unclosed\n')
        for client in (self.alice, self.admin):
            response = client.get('/servers')
            self.assertEqual(403, response.status_code, response.text)
        self.assertEqual(403, self.alice.boot().status_code)
        self.assertEqual([], build_request.BuildRequest.get_by_project(
            self.api.cluster.ctx, 'project-a'))
        self.write_policy('{}\n')
        self.assertEqual(200, self.alice.get('/servers').status_code)

    def test_a_broken_rule_refuses_rather_than_allows(self):
        self.write_policy('"os_compute_api:servers:index": "no_such_check:x"'
                          '\n')
        self.assertEqual(403, self.alice.get('/servers').status_code)


class KeystoneScopeTest(base.TestCase):
    """keystone mode: a project's admin role is not a cloud admin's."""

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=1))
        # What keystonemiddleware hands on, without a keystone to ask.
        self.app = errors.FaultWrapper(wsgi.API(
            self.api.cluster.scheduler,
            conductor=self.api.cluster.conductor_api,
            strategy=api_conf.KEYSTONE))

    def get(self, path, roles, project_id='p1', system_scope=None):
        headers = {'X-Identity-Status': 'Confirmed', 'X-User-Id': 'u1',
                   'X-Roles': ','.join(roles)}
        if project_id:
            headers['X-Project-Id'] = project_id
        if system_scope:
            headers['OpenStack-System-Scope'] = system_scope
        return webob.Request.blank('/v2.1' + path, headers=headers) \
            .get_response(self.app)

    def test_a_project_scoped_admin_role_gets_403_on_admin_paths(self):
        for path in ('/os-cells', '/os-hypervisors/detail', '/os-flows',
                     '/os-zones'):
            response = self.get(path, ['admin', 'member', 'reader'])
            self.assertEqual(403, response.status_code, path)
            self.assertIn('forbidden', response.json)

    def test_a_system_scoped_admin_reads_admin_paths(self):
        response = self.get('/os-cells', ['admin', 'member', 'reader'],
                            project_id=None, system_scope='all')
        self.assertEqual(200, response.status_code)
        self.assertIn('cell1', [c['name'] for c in response.json['cells']])

    def test_a_system_scoped_token_cannot_own_a_server(self):
        request = webob.Request.blank(
            '/v2.1/servers', method='POST', headers={
                'X-Identity-Status': 'Confirmed', 'X-User-Id': 'u1',
                'X-Roles': 'admin', 'OpenStack-System-Scope': 'all',
                'Content-Type': 'application/json'},
            body=b'{"server": {"name": "vm", "flavorRef": "small"}}')
        response = request.get_response(self.app)
        self.assertEqual(403, response.status_code)
        self.assertEqual([], build_request.BuildRequest.get_all(
            self.api.cluster.ctx))

    def test_a_project_scoped_admin_role_cannot_list_every_project(self):
        for query in ('all_tenants=1', 'host=cell1-host1'):
            response = self.get(f'/servers/detail?{query}',
                                ['admin', 'member', 'reader'])
            self.assertEqual(403, response.status_code, query)
            self.assertIn('forbidden', response.json)

    def test_a_system_scoped_token_lists_servers_with_all_tenants(self):
        admin = ['admin', 'member', 'reader']
        response = self.get('/servers', admin, project_id=None,
                            system_scope='all')
        self.assertEqual(400, response.status_code)
        self.assertIn('all_tenants=1',
                      response.json['badRequest']['message'])
        response = self.get('/servers?all_tenants=1', admin,
                            project_id=None, system_scope='all')
        self.assertEqual(200, response.status_code)
        self.assertEqual([], response.json['servers'])
