"""``/servers`` over HTTP: boot, list, show and delete at every stage."""

import time

import sqlalchemy as sa

from cellboot.db.api import connection as api_connection
from cellboot.db.api import models as api_models
from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional import invariants

HUGE = {'name': 'huge', 'vcpus': 1024, 'ram': 512, 'disk': 1, 'id': 'huge'}


def count_rows(table):
    engine = api_connection.get_engine()
    with engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(
            api_models.Base.metadata.tables[table])).scalar()


class ServersTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer())
        self.cluster = self.api.cluster
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)

    def boot_and_settle(self, count=None, **extra):
        response = self.alice.boot(count=count, **extra)
        self.assertEqual(202, response.status_code, response.text)
        self.cluster.wait_for_quiet()
        body = response.json()
        return [s['id'] for s in body.get('servers', [body['server']])]

    def unlimit(self, *resources):
        """Lift alice's project's quota of ``resources``."""
        response = self.admin.request(
            'PUT', '/os-quota-sets/project-a',
            json={'quota_set': dict.fromkeys(resources, -1)})
        self.assertEqual(200, response.status_code, response.text)

    def assertInvariants(self):
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_boot_answers_202_with_the_server_id(self):
        response = self.alice.boot()
        self.assertEqual(202, response.status_code)
        self.assertEqual(36, len(response.json()['server']['id']))
        self.cluster.wait_for_quiet()

    def test_a_booted_server_becomes_active_in_a_cell(self):
        (uuid,) = self.boot_and_settle()
        server = self.alice.get(f'/servers/{uuid}').json()['server']
        self.assertEqual('ACTIVE', server['status'])
        self.assertInvariants()

    def test_a_server_is_build_while_only_a_build_request(self):
        self.api.app.api.conductor = _NoConductor()
        response = self.alice.post('/servers', json={
            'server': {'name': 'vm', 'flavorRef': 'small'}})
        uuid = response.json()['server']['id']
        server = self.alice.get(f'/servers/{uuid}').json()['server']
        self.assertEqual('BUILD', server['status'])
        self.alice.delete(f'/servers/{uuid}')

    def test_multi_create_returns_every_id_and_a_reservation_id(self):
        response = self.alice.boot(count=3)
        body = response.json()
        self.assertEqual(3, len(body['servers']))
        self.assertTrue(body['reservation_id'].startswith('r-'))
        self.cluster.wait_for_quiet()
        listed = self.alice.get('/servers/detail').json()['servers']
        self.assertEqual({s['id'] for s in body['servers']},
                         {s['id'] for s in listed})
        self.assertEqual({body['reservation_id']},
                         {s['reservation_id'] for s in listed})
        self.assertInvariants()

    def test_listing_filters_by_reservation_id(self):
        first = self.alice.boot(count=2).json()['reservation_id']
        self.alice.boot()
        self.cluster.wait_for_quiet()
        listed = self.alice.get(
            f'/servers?reservation_id={first}').json()['servers']
        self.assertEqual(2, len(listed))

    def test_list_shows_id_name_and_links(self):
        (uuid,) = self.boot_and_settle(server={'name': 'web-1'})
        (server,) = self.alice.get('/servers').json()['servers']
        self.assertEqual((uuid, 'web-1'), (server['id'], server['name']))
        self.assertIn(f'/v2.1/servers/{uuid}', server['links'][0]['href'])

    def test_detail_lists_building_and_active_servers_together(self):
        (active,) = self.boot_and_settle()
        self.api.app.api.conductor = _NoConductor()
        pending = self.alice.boot().json()['server']['id']
        statuses = {s['id']: s['status'] for s in
                    self.alice.get('/servers/detail').json()['servers']}
        self.assertEqual({active: 'ACTIVE', pending: 'BUILD'}, statuses)
        self.alice.delete(f'/servers/{pending}')
        self.assertInvariants()

    def test_a_cell_that_does_not_answer_lists_its_servers_unknown(self):
        # Single boots until both cells have one: the API level keeps a
        # request in one cell when it fits, and ties between cells are
        # broken at random.
        uuids, cells = [], {}
        while len(cells) < 2 and len(uuids) < 12:
            (uuid,) = self.boot_and_settle()
            uuids.append(uuid)
            cells[self.cluster.find(uuid)[0].name] = uuid
        broken = self.cluster.cell_by_name('cell1')
        broken.update(self.cluster.ctx,
                      database_connection='sqlite:////nonexistent/dir/x.db')
        statuses = {s['id']: s['status'] for s in
                    self.alice.get('/servers/detail').json()['servers']}
        self.assertEqual(len(uuids), len(statuses))
        self.assertEqual('UNKNOWN', statuses[cells['cell1']])
        self.assertEqual('ACTIVE', statuses[cells['cell2']])

    def test_an_admin_sees_the_host_and_cell_of_a_server(self):
        (uuid,) = self.boot_and_settle()
        server = self.admin.get(f'/servers/{uuid}').json()['server']
        cell, instance = self.cluster.find(uuid)
        self.assertEqual((instance.host, cell.name),
                         (server['OS-EXT-SRV-ATTR:host'],
                          server['cellboot:cell']))

    def test_a_user_does_not_see_the_host(self):
        (uuid,) = self.boot_and_settle()
        server = self.alice.get(f'/servers/{uuid}').json()['server']
        self.assertNotIn('OS-EXT-SRV-ATTR:host', server)

    def test_an_unschedulable_server_is_error_with_its_fault(self):
        self.admin.post('/flavors', json={'flavor': HUGE})
        # The huge flavor is over the default quota of 20 cores.
        self.unlimit('cores')
        (uuid,) = self.boot_and_settle(flavor='huge')
        server = self.alice.get(f'/servers/{uuid}').json()['server']
        self.assertEqual('ERROR', server['status'])
        self.assertIn('No valid host was found.', server['fault']['message'])

    def test_deleting_an_active_server_answers_204_then_404(self):
        (uuid,) = self.boot_and_settle()
        self.assertEqual(
            204, self.alice.delete(f"/servers/{uuid}").status_code)
        self.assertEqual(404, self.alice.get(f'/servers/{uuid}').status_code)
        self.assertInvariants()

    def test_deleting_an_active_server_releases_its_allocations(self):
        (uuid,) = self.boot_and_settle()
        self.alice.delete(f'/servers/{uuid}')
        self.assertEqual({}, self.cluster.allocations(uuid))

    def test_a_deleted_server_leaves_the_listing(self):
        (uuid,) = self.boot_and_settle()
        self.alice.delete(f'/servers/{uuid}')
        self.assertEqual([], self.alice.get('/servers').json()['servers'])

    def test_deleting_a_server_in_cell0_answers_204(self):
        self.admin.post('/flavors', json={'flavor': HUGE})
        # The huge flavor is over the default quota of 20 cores.
        self.unlimit('cores')
        (uuid,) = self.boot_and_settle(flavor='huge')
        self.assertEqual(
            204, self.alice.delete(f"/servers/{uuid}").status_code)
        self.assertEqual(404, self.alice.get(f'/servers/{uuid}').status_code)
        self.assertInvariants()

    def test_deleting_a_build_request_removes_it_and_its_mapping(self):
        self.api.app.api.conductor = _NoConductor()
        uuid = self.alice.boot().json()['server']['id']
        self.assertEqual(
            204, self.alice.delete(f"/servers/{uuid}").status_code)
        self.assertEqual((0, 0), (count_rows('build_requests'),
                                  count_rows('instance_mappings')))
        self.assertInvariants()

    def test_deleting_twice_answers_404(self):
        (uuid,) = self.boot_and_settle()
        self.alice.delete(f'/servers/{uuid}')
        self.assertEqual(
            404, self.alice.delete(f"/servers/{uuid}").status_code)

    def test_delete_right_after_boot_while_the_flow_runs(self):
        # Up to 12 servers at once, over the default quota of 10.
        self.unlimit('instances')
        uuids = []
        for _ in range(5):
            body = self.alice.boot(count=4).json()
            uuids += [s['id'] for s in body['servers']]
            for server in body['servers'][::2]:
                response = self.alice.delete(f'/servers/{server["id"]}')
                self.assertIn(response.status_code, (204, 404))
        self.cluster.wait_for_quiet()
        listed = {s['id'] for s in
                  self.alice.get('/servers/detail').json()['servers']}
        self.assertEqual(10, len(listed))
        self.assertInvariants()

    def test_delete_while_the_compute_host_is_spawning(self):
        # Long enough that the first servers still spawn once the last
        # is mapped, on a loaded two-core machine (0.5 s was not).
        self.flags(spawn_time=3, group='fake_driver')
        body = self.alice.boot(count=4).json()
        uuids = [s['id'] for s in body['servers']]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            cells = [self.admin.get(f'/servers/{uuid}').json()['server'][
                'cellboot:cell'] for uuid in uuids]
            if None not in cells:
                break
            time.sleep(0.02)
        for uuid in uuids[:2]:
            server = self.admin.get(f'/servers/{uuid}').json()['server']
            self.assertEqual('BUILD', server['status'])
            self.assertIsNotNone(server['cellboot:cell'])
            self.assertEqual(
                204, self.alice.delete(f'/servers/{uuid}').status_code)
        self.cluster.wait_for_quiet()
        statuses = {s['id']: s['status'] for s in
                    self.alice.get('/servers/detail').json()['servers']}
        self.assertEqual({uuids[2]: 'ACTIVE', uuids[3]: 'ACTIVE'}, statuses)
        for uuid in uuids[:2]:
            self.assertEqual({}, self.cluster.allocations(uuid))
        self.assertInvariants()

    def test_a_failed_cast_still_accepts_the_request(self):
        self.api.app.api.conductor = _BrokenConductor()
        response = self.alice.boot()
        self.assertEqual(202, response.status_code)
        self.assertEqual(1, count_rows('build_requests'))
        self.alice.delete(f'/servers/{response.json()["server"]["id"]}')

    def test_a_server_group_hint_adds_the_servers_to_the_group(self):
        group = self.alice.post('/os-server-groups', json={'server_group': {
            'name': 'spread', 'policy': 'anti-affinity'}}).json()
        group_id = group['server_group']['id']
        uuids = self.boot_and_settle(
            count=2, **{'os:scheduler_hints': {'group': group_id}})
        members = self.alice.get(f'/os-server-groups/{group_id}').json()
        self.assertEqual(set(uuids),
                         set(members['server_group']['members']))
        hosts = {self.cluster.find(uuid)[1].host for uuid in uuids}
        self.assertEqual(2, len(hosts))
        self.assertInvariants()


class _NoConductor:
    """A conductor client that casts nothing: builds stay requests."""

    def schedule_and_build_instances(self, ctxt, build_requests,
                                     request_specs):
        pass


class _BrokenConductor:
    """A conductor client whose transport is down."""

    def schedule_and_build_instances(self, ctxt, build_requests,
                                     request_specs):
        raise ConnectionError('the message bus is down')
