"""Flavors, server groups and the admin paths over HTTP."""

import datetime

import fixtures
from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from tests import base
from tests.functional.api import fixtures as api_fixtures


class ResourcesTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=2,
                                                          hosts_per_cell=2))
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)

    def test_flavors_are_listed(self):
        flavors = self.alice.get('/flavors').json()['flavors']
        self.assertEqual(['small'], [f['id'] for f in flavors])

    def test_a_flavor_is_shown(self):
        flavor = self.alice.get('/flavors/small').json()['flavor']
        self.assertEqual((1, 512, 10), (flavor['vcpus'], flavor['ram'],
                                        flavor['disk']))

    def test_an_unknown_flavor_is_404(self):
        self.assertEqual(404, self.alice.get('/flavors/nope').status_code)

    def test_an_admin_creates_a_flavor_that_boots(self):
        response = self.admin.post('/flavors', json={'flavor': {
            'name': 'medium', 'id': 'medium', 'vcpus': 2, 'ram': 1024,
            'disk': 20}})
        self.assertEqual(200, response.status_code, response.text)
        boot = self.alice.boot(flavor='medium')
        self.assertEqual(202, boot.status_code)
        self.api.cluster.wait_for_quiet()

    def test_a_server_group_is_created_listed_and_shown(self):
        group = self.alice.post('/os-server-groups', json={'server_group': {
            'name': 'db', 'policy': 'affinity'}}).json()['server_group']
        listed = self.alice.get('/os-server-groups').json()['server_groups']
        shown = self.alice.get(f'/os-server-groups/{group["id"]}').json()
        self.assertEqual([group['id']], [g['id'] for g in listed])
        self.assertEqual(('db', 'affinity', []),
                         (shown['server_group']['name'],
                          shown['server_group']['policy'],
                          shown['server_group']['members']))

    def test_an_unknown_policy_is_400(self):
        response = self.alice.post('/os-server-groups', json={
            'server_group': {'name': 'db', 'policy': 'soft-affinity'}})
        self.assertEqual(400, response.status_code)

    def test_a_server_group_is_deleted(self):
        group = self.alice.post('/os-server-groups', json={'server_group': {
            'name': 'db', 'policy': 'affinity'}}).json()['server_group']
        path = f'/os-server-groups/{group["id"]}'
        self.assertEqual(204, self.alice.delete(path).status_code)
        self.assertEqual(404, self.alice.get(path).status_code)

    def test_affinity_puts_a_groups_servers_on_one_host(self):
        group = self.alice.post('/os-server-groups', json={'server_group': {
            'name': 'db', 'policy': 'affinity'}}).json()['server_group']
        body = self.alice.boot(count=3, **{'os:scheduler_hints': {
            'group': group['id']}}).json()
        self.api.cluster.wait_for_quiet()
        hosts = {self.api.cluster.find(s['id'])[1].host
                 for s in body['servers']}
        self.assertEqual(1, len(hosts))

    def test_hypervisors_list_every_host_with_its_cell_and_usage(self):
        self.alice.boot()
        self.api.cluster.wait_for_quiet()
        hosts = self.admin.get('/os-hypervisors/detail').json()['hypervisors']
        self.assertEqual({'cell1', 'cell2'}, {h['cell'] for h in hosts})
        self.assertEqual(4, len(hosts))
        self.assertEqual(1, sum(h['vcpus_used'] for h in hosts))
        # Capacity is what can be scheduled: total x allocation ratio.
        self.assertEqual({8 * 16}, {h['vcpus'] for h in hosts})

    def test_cells_are_listed_with_cell0(self):
        cells = self.admin.get('/os-cells').json()['cells']
        self.assertEqual(['cell0', 'cell1', 'cell2'],
                         sorted(c['name'] for c in cells))

    def test_each_cell_shows_the_aggregate_its_scheduler_published(self):
        self.alice.boot()
        self.api.cluster.wait_for_quiet()
        for scheduler in self.api.cluster.cell_schedulers.values():
            scheduler.publisher.publish_now()
        cells = {c['name']: c
                 for c in self.admin.get('/os-cells').json()['cells']}
        self.assertNotIn('aggregate', cells['cell0'])
        shown = {name: (cells[name]['state'],
                        cells[name]['aggregate']['up_hosts'],
                        cells[name]['aggregate']['resources']['VCPU'])
                 for name in ('cell1', 'cell2')}
        used = sum(2 * 8 * 16 - figures['free']
                   for _state, _up, figures in shown.values())
        self.assertEqual(({'up'}, {2}, 1),
                         ({state for state, _up, _v in shown.values()},
                          {up for _s, up, _v in shown.values()}, used))

    def test_a_cell_publishing_nonsense_is_shown_without_figures(self):
        cell = self.api.cluster.cell_by_name('cell2')
        rows = cell_models.SchedulerAggregate.__table__
        with cell_connection.get_engine(
                cell.database_connection).begin() as conn:
            conn.execute(sa.update(rows).values(
                aggregate='{"hosts": -1, "resources": "lots"}',
                published_at=timeutils.utcnow() + datetime.timedelta(
                    hours=1)))
        response = self.admin.get('/os-cells')
        self.assertEqual(200, response.status_code, response.text)
        shown = {c['name']: c for c in response.json()['cells']}
        self.assertEqual((None, 'no scheduler'),
                         (shown['cell2']['aggregate'],
                          shown['cell2']['state']))

    def test_hypervisors_name_a_cell_whose_scheduler_does_not_answer(self):
        cell = self.api.cluster.cell_by_name('cell2')
        scheduler = self.api.cluster.cell_schedulers['cell2']
        self.useFixture(fixtures.MockPatchObject(
            scheduler, 'host_states',
            side_effect=db_exc.DBConnectionError('cell2 is down')))
        body = self.admin.get('/os-hypervisors/detail').json()
        self.assertEqual((['cell2'], {'cell1'}),
                         (body['unreachable'],
                          {h['cell'] for h in body['hypervisors']}))
        self.assertNotIn(cell.uuid, {h['cell_uuid']
                                     for h in body['hypervisors']})

    def test_a_servers_flow_is_found_and_shown_with_its_atoms(self):
        uuid = self.alice.boot().json()['server']['id']
        self.api.cluster.wait_for_quiet()
        (flow,) = self.admin.get(
            f'/os-flows?instance_uuid={uuid}').json()['flows']
        self.assertEqual('SUCCESS', flow['state'])
        detail = self.admin.get(f'/os-flows/{flow["uuid"]}').json()['flow']
        names = [atom['name'] for atom in detail['atoms']]
        self.assertEqual(['schedule', 'claim-pool', 'map-host-to-cell',
                          'create-in-cell',
                          'map-instance', 'delete-build-request',
                          'cast-to-compute'], names)
        self.assertEqual({'SUCCESS'},
                         {atom['state'] for atom in detail['atoms']})

    def test_flows_are_filtered_by_state(self):
        self.alice.boot()
        self.api.cluster.wait_for_quiet()
        self.assertEqual(
            [], self.admin.get('/os-flows?state=RUNNING').json()['flows'])
        self.assertEqual(
            1, len(self.admin.get('/os-flows?state=success').json()['flows']))
        response = self.admin.get('/os-flows?state=RUNNIN')
        self.assertEqual(400, response.status_code)
        self.assertIn("'RUNNIN' is not a flow state", response.text)

    def test_an_unknown_flow_is_404(self):
        self.assertEqual(404, self.admin.get('/os-flows/nope').status_code)
