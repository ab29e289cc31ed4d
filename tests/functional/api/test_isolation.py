"""Projects are isolated; admin paths refuse other users."""

from tests import base
from tests.functional.api import fixtures as api_fixtures

ADMIN_PATHS = ('/os-hypervisors/detail', '/os-cells', '/os-flows',
               '/os-flows/11111111-2222-3333-4444-555555555555',
               '/os-zones', '/os-zones/region1')


class IsolationTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=1))
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.bob = self.api.client(api_fixtures.BOB_TOKEN)
        self.uuid = self.alice.boot().json()['server']['id']
        self.api.cluster.wait_for_quiet()

    def test_another_project_does_not_list_the_server(self):
        self.assertEqual([], self.bob.get('/servers/detail').json()['servers'])

    def test_another_project_gets_404_for_the_server(self):
        self.assertEqual(404,
                         self.bob.get(f'/servers/{self.uuid}').status_code)

    def test_another_project_cannot_delete_the_server(self):
        self.assertEqual(404,
                         self.bob.delete(f'/servers/{self.uuid}').status_code)
        self.assertEqual(
            'ACTIVE',
            self.alice.get(f'/servers/{self.uuid}').json()['server']['status'])

    def test_another_user_of_the_same_project_sees_the_server(self):
        carol = self.api.client('carol:project-a')
        self.assertEqual(200, carol.get(f'/servers/{self.uuid}').status_code)

    def test_another_project_does_not_see_the_server_groups(self):
        group = self.alice.post('/os-server-groups', json={'server_group': {
            'name': 'g', 'policy': 'affinity'}}).json()['server_group']
        self.assertEqual(
            404, self.bob.get(f'/os-server-groups/{group["id"]}').status_code)
        self.assertEqual(
            [], self.bob.get('/os-server-groups').json()['server_groups'])

    def test_another_projects_group_cannot_be_used_at_boot(self):
        group = self.alice.post('/os-server-groups', json={'server_group': {
            'name': 'g', 'policy': 'affinity'}}).json()['server_group']
        response = self.bob.boot(**{'os:scheduler_hints': {
            'group': group['id']}})
        self.assertEqual(400, response.status_code)

    def test_admin_paths_answer_403_to_a_user(self):
        for path in ADMIN_PATHS:
            response = self.alice.get(path)
            self.assertEqual(403, response.status_code, path)
            self.assertIn('forbidden', response.json())

    def test_creating_a_flavor_answers_403_to_a_user(self):
        response = self.alice.post('/flavors', json={'flavor': {
            'name': 'big', 'vcpus': 8, 'ram': 1024}})
        self.assertEqual(403, response.status_code)

    def test_admin_paths_answer_401_without_a_token(self):
        anonymous = self.api.client(None)
        for path in ADMIN_PATHS + ('/servers', '/flavors'):
            self.assertEqual(401, anonymous.get(path).status_code, path)
