"""Scheduler hints through the API: target_cell by policy, no peeking."""

from cellboot.objects import build_request
from cellboot.objects import instance_mapping
from tests import base
from tests.functional.api import fixtures as api_fixtures


class HintsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=2,
                                                          hosts_per_cell=1))
        self.cluster = self.api.cluster
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.bob = self.api.client(api_fixtures.BOB_TOKEN)
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)

    def boot(self, client, hints):
        response = client.boot(**{'os:scheduler_hints': hints})
        self.assertEqual(202, response.status_code, response.text)
        self.cluster.wait_for_quiet()
        return response.json()['server']['id']

    def test_target_cell_answers_403_to_a_user_and_writes_nothing(self):
        response = self.alice.boot(**{'os:scheduler_hints': {
            'target_cell': 'cell2'}})
        self.assertEqual(403, response.status_code)
        self.assertIn('cellboot:servers:create:target_cell',
                      response.json()['forbidden']['message'])
        ctx = self.cluster.ctx
        self.assertEqual(
            ([], []),
            (build_request.BuildRequest.get_by_project(ctx, 'project-a'),
             instance_mapping.InstanceMapping.get_by_project(ctx,
                                                             'project-a')))

    def test_target_cell_is_honoured_for_an_admin(self):
        for cell in ('cell2', 'cell1', 'cell2'):
            uuid = self.boot(self.admin, {'target_cell': cell})
            where, instance = self.cluster.find(uuid)
            self.assertEqual((cell, 'active'),
                             (where.name, instance.vm_state))

    def test_same_host_with_another_projects_server_is_as_unknown(self):
        theirs = self.boot(self.bob, {})
        unknown = '11111111-2222-3333-4444-555555555555'
        shown = []
        for uuid in (theirs, unknown):
            mine = self.boot(self.alice, {'same_host': [uuid]})
            server = self.alice.get(f'/servers/{mine}').json()['server']
            shown.append((server['status'], server['fault']['message']))
        self.assertEqual(shown[1], shown[0])
        self.assertEqual('ERROR', shown[0][0])
