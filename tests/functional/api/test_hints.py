"""Scheduler hints through the API: target_cell by policy, no peeking,
zone to a zone's cells."""

from cellboot import context as cb_context
from cellboot.objects import build_request
from cellboot.objects import cell_mapping
from cellboot.objects import instance_mapping
from cellboot.objects import zone
from tests import base
from tests.functional.api import fixtures as api_fixtures


class _HintsBase(base.TestCase):
    """Two cells of one host each behind the API, and its users."""

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


class HintsTest(_HintsBase):

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


class ZoneHintTest(_HintsBase):
    """The ``zone`` hint confines a boot to the cells below a zone."""

    def setUp(self):
        super().setUp()
        ctx = cb_context.get_admin_context()
        zone.Zone.create(ctx, 'east')
        cell2 = cell_mapping.CellMapping.get_by_name(ctx, 'cell2')
        cell2.update(ctx, zone_uuid=zone.Zone.get(ctx, 'east').uuid)
        # The API level reads the zone tree with the cell mappings.
        self.cluster.scheduler.refresh(ctx)

    def test_a_boot_naming_a_zone_lands_in_its_cell(self):
        landed = []
        for _ in range(2):
            uuid = self.boot(self.alice, {'zone': 'east'})
            where, instance = self.cluster.find(uuid)
            landed.append((where.name, instance.vm_state))
        self.assertEqual([('cell2', 'active')] * 2, landed)

    def test_a_zone_with_no_cell_ends_in_error_naming_it(self):
        # The user reads NoValidHost; an admin reads why.
        uuid = self.boot(self.alice, {'zone': 'west'})
        server = self.admin.get(f'/servers/{uuid}').json()['server']
        self.assertEqual('ERROR', server['status'])
        self.assertIn("'west'", server['fault']['details'] or '')

    def test_a_zone_hint_that_is_no_name_is_refused_and_writes_nothing(self):
        for bad in ('', ['east'], 7, 'x' * 256):
            response = self.alice.boot(**{'os:scheduler_hints': {
                'zone': bad}})
            self.assertEqual(400, response.status_code, bad)
        self.assertEqual(
            [], build_request.BuildRequest.get_by_project(
                self.cluster.ctx, 'project-a'))
