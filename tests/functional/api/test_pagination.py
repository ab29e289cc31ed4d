"""Every list over HTTP: ``limit``, ``marker`` and the ``*_links``.

Following the "next" links from the first page walks the whole list,
each item exactly once and in the list's order, and the last page has
no link. Bad limits and unknown markers answer 400; another project's
server or group as a marker gets the same answer as an unknown id.
"""

import urllib.parse

from oslo_utils import uuidutils

from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional.api import test_servers

# Every list: its path, its key, who may read it.
LISTS = (('/servers', 'servers', api_fixtures.ALICE_TOKEN),
         ('/servers/detail', 'servers', api_fixtures.ALICE_TOKEN),
         ('/flavors', 'flavors', api_fixtures.ALICE_TOKEN),
         ('/os-server-groups', 'server_groups', api_fixtures.ALICE_TOKEN),
         ('/os-hypervisors/detail', 'hypervisors', api_fixtures.ADMIN_TOKEN),
         ('/os-cells', 'cells', api_fixtures.ADMIN_TOKEN),
         ('/os-zones', 'zones', api_fixtures.ADMIN_TOKEN),
         ('/os-flows', 'flows', api_fixtures.ADMIN_TOKEN))


def ident(item):
    return item.get('id') or item.get('uuid')


class PaginationTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=2,
                                                          hosts_per_cell=2))
        self.cluster = self.api.cluster
        self.clients = {}

    def client(self, token):
        if token not in self.clients:
            self.clients[token] = self.api.client(token)
        return self.clients[token]

    def walk(self, path, key, token=api_fixtures.ALICE_TOKEN, **query):
        """Every item from the first page on, following the links."""
        client = self.client(token)
        prefix = self.api.url + '/v2.1'
        url = path + ('?' + urllib.parse.urlencode(query) if query else '')
        items, pages = [], 0
        while url is not None:
            response = client.get(url)
            self.assertEqual(200, response.status_code, response.text)
            body = response.json()
            pages += 1
            self.assertLessEqual(pages, 50, 'the links never end')
            items += body[key]
            links = body.get(f'{key}_links')
            url = None
            if links:
                (link,) = links
                self.assertEqual('next', link['rel'])
                self.assertTrue(link['href'].startswith(prefix + path + '?'),
                                link['href'])
                url = link['href'][len(prefix):]
                self.assertTrue(body[key], 'a next link after an empty page')
        return items, pages

    def boot_settled(self, count):
        response = self.client(api_fixtures.ALICE_TOKEN).boot(count=count)
        self.assertEqual(202, response.status_code, response.text)
        self.cluster.wait_for_quiet()
        return response.json()

    def hold_builds(self):
        self.api.app.api.conductor = test_servers._NoConductor()

    def test_servers_walk_active_and_building_servers_once_each(self):
        active = [s['id'] for s in self.boot_settled(3)['servers']]
        self.hold_builds()
        building = [s['id'] for s in self.client(
            api_fixtures.ALICE_TOKEN).boot(count=2).json()['servers']]
        for path in ('/servers', '/servers/detail'):
            items, pages = self.walk(path, 'servers', limit=2)
            self.assertEqual(active + building, [s['id'] for s in items])
            self.assertEqual(3, pages)

    def test_a_filtered_walk_gives_only_the_filtered_servers(self):
        first = self.boot_settled(3)
        self.boot_settled(2)
        third = self.boot_settled(2)
        items, _pages = self.walk('/servers/detail', 'servers', limit=2,
                                  reservation_id=first['reservation_id'])
        self.assertEqual([s['id'] for s in first['servers']],
                         [s['id'] for s in items])
        items, _pages = self.walk('/servers', 'servers', limit=1,
                                  reservation_id=third['reservation_id'])
        self.assertEqual([s['id'] for s in third['servers']],
                         [s['id'] for s in items])

    def test_a_deleted_marker_still_leads_to_the_next_page(self):
        ids = [s['id'] for s in self.boot_settled(3)['servers']]
        alice = self.client(api_fixtures.ALICE_TOKEN)
        alice.delete(f'/servers/{ids[1]}')
        body = alice.get(f'/servers?marker={ids[1]}').json()
        self.assertEqual([ids[2]], [s['id'] for s in body['servers']])

    def test_without_limit_a_page_holds_max_limit_items(self):
        self.flags(max_limit=2, group='api')
        self.hold_builds()
        self.client(api_fixtures.ALICE_TOKEN).boot(count=3)
        body = self.client(api_fixtures.ALICE_TOKEN).get('/servers').json()
        self.assertEqual(2, len(body['servers']))
        self.assertIn('limit=2', body['servers_links'][0]['href'])
        body = self.client(api_fixtures.ALICE_TOKEN).get(
            '/servers?limit=500').json()
        self.assertEqual(2, len(body['servers']))

    def test_a_list_that_fits_one_page_has_no_link(self):
        self.boot_settled(2)
        body = self.client(api_fixtures.ALICE_TOKEN).get(
            '/servers?limit=2').json()
        self.assertEqual(2, len(body['servers']))
        self.assertNotIn('servers_links', body)

    def test_flavors_walk_by_name(self):
        admin = self.client(api_fixtures.ADMIN_TOKEN)
        for name in ('f-c', 'f-a', 'f-b'):
            admin.post('/flavors', json={'flavor': {
                'name': name, 'id': name, 'vcpus': 1, 'ram': 64}})
        items, pages = self.walk('/flavors', 'flavors', limit=1)
        self.assertEqual(['f-a', 'f-b', 'f-c', 'small'],
                         [f['name'] for f in items])
        self.assertEqual(4, pages)

    def test_server_groups_walk_the_projects_groups(self):
        alice = self.client(api_fixtures.ALICE_TOKEN)
        groups = [alice.post('/os-server-groups', json={'server_group': {
            'name': f'g{i}', 'policy': 'affinity'}}).json()[
            'server_group']['id'] for i in range(3)]
        self.client(api_fixtures.BOB_TOKEN).post(
            '/os-server-groups', json={'server_group': {
                'name': 'bobs', 'policy': 'affinity'}})
        items, _pages = self.walk('/os-server-groups', 'server_groups',
                                  limit=2)
        self.assertEqual(groups, [g['id'] for g in items])

    def test_hypervisors_cells_and_flows_walk_for_admins(self):
        self.boot_settled(3)
        self.boot_settled(1)
        admin = api_fixtures.ADMIN_TOKEN
        for path, key, expected in (
                ('/os-hypervisors/detail', 'hypervisors', 4),
                ('/os-cells', 'cells', 3),
                ('/os-flows', 'flows', 2)):
            whole = self.client(admin).get(path).json()[key]
            items, pages = self.walk(path, key, token=admin, limit=1)
            self.assertEqual(expected, len(items), path)
            self.assertEqual([ident(i) for i in whole],
                             [ident(i) for i in items], path)
            self.assertEqual(expected, pages, path)

    def test_bad_limits_are_400_on_every_list(self):
        for path, key, token in LISTS:
            for limit in ('-1', '0', 'ten', '2.5', '9' * 40):
                response = self.client(token).get(f'{path}?limit={limit}')
                self.assertEqual(400, response.status_code,
                                 f'{path} {limit}: {response.text}')
                self.assertIn('limit',
                              response.json()['badRequest']['message'])

    def test_unknown_markers_are_400_on_every_list(self):
        for path, key, token in LISTS:
            response = self.client(token).get(
                f'{path}?marker={uuidutils.generate_uuid()}')
            self.assertEqual(400, response.status_code,
                             f'{path}: {response.text}')
            self.assertIn('Marker',
                          response.json()['badRequest']['message'])

    def assertSameAnswer(self, path, theirs):
        unknown = uuidutils.generate_uuid()
        alice = self.client(api_fixtures.ALICE_TOKEN)
        for_theirs = alice.get(f'{path}?marker={theirs}')
        for_unknown = alice.get(f'{path}?marker={unknown}')
        self.assertEqual(400, for_theirs.status_code)
        self.assertEqual(
            for_unknown.json()['badRequest']['message'].replace(unknown, 'X'),
            for_theirs.json()['badRequest']['message'].replace(theirs, 'X'))

    def test_another_projects_server_is_no_marker(self):
        bob = self.client(api_fixtures.BOB_TOKEN)
        theirs = bob.boot().json()['server']['id']
        self.cluster.wait_for_quiet()
        self.assertSameAnswer('/servers', theirs)
        self.assertSameAnswer('/servers/detail', theirs)

    def test_another_projects_group_is_no_marker(self):
        theirs = self.client(api_fixtures.BOB_TOKEN).post(
            '/os-server-groups', json={'server_group': {
                'name': 'bobs', 'policy': 'affinity'}}).json()[
            'server_group']['id']
        self.assertSameAnswer('/os-server-groups', theirs)
