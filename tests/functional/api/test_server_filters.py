"""The server lists' filters, sort and scope, over HTTP.

Two projects' servers spread over two cells, one of them failed (cell0,
ERROR), one still a build request (BUILD): every filter answers exactly
the servers that match, across cells and build requests alike; a bad
value, an unknown filter or a sort key off the list answers 400 in
Nova's shape; a non-administrator asking for other projects or for a
host is answered 403 and never sees another project's servers.
"""

import datetime
import urllib.parse

import fixtures

from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional.api import test_servers

HUGE = {'name': 'huge', 'vcpus': 1024, 'ram': 512, 'disk': 1, 'id': 'huge'}


def start_two_cells(test):
    """An API on two cells of two hosts, clients for alice, bob and an
    administrator, and the ``huge`` flavor no host can build."""
    # The huge flavor must reach the scheduler, not the quota check.
    test.flags(cores=-1, ram=-1, group='quota')
    test.api = test.useFixture(api_fixtures.APIServer(cells=2,
                                                      hosts_per_cell=2))
    test.cluster = test.api.cluster
    test.alice = test.api.client(api_fixtures.ALICE_TOKEN)
    test.bob = test.api.client(api_fixtures.BOB_TOKEN)
    test.admin = test.api.client(api_fixtures.ADMIN_TOKEN)
    test.assertEqual(200, test.admin.post(
        '/flavors', json={'flavor': HUGE}).status_code)


class ServerFiltersTest(base.TestCase):

    def setUp(self):
        super().setUp()
        start_two_cells(self)
        self.webs = [self.boot(self.alice, f'web-{n}') for n in range(3)]
        self.failed = self.boot(self.alice, 'web-failed', flavor='huge')
        self.db = self.boot(self.bob, 'db-1')
        self.cluster.wait_for_quiet()
        self.api.app.api.conductor = test_servers._NoConductor()
        self.pending = self.boot(self.alice, 'pending-1')

    def boot(self, client, name, **extra):
        response = client.boot(name=name, **extra)
        self.assertEqual(202, response.status_code, response.text)
        return response.json()['server']['id']

    def ids(self, client, path='/servers/detail', **query):
        query = urllib.parse.urlencode(query, doseq=True)
        response = client.get(f'{path}?{query}')
        self.assertEqual(200, response.status_code, response.text)
        return [server['id'] for server in response.json()['servers']]

    def refused(self, client, query, status=400, path='/servers/detail'):
        before = self.ids(self.admin, all_tenants=1)
        response = client.get(f'{path}?{query}')
        self.assertEqual(status, response.status_code, response.text)
        key = {400: 'badRequest', 403: 'forbidden'}[status]
        body = response.json()
        self.assertEqual(status, body[key]['code'])
        self.assertNotIn('Traceback', response.text)
        self.assertEqual(before, self.ids(self.admin, all_tenants=1))
        return body[key]['message']

    def test_status_filters_across_cells_and_build_requests(self):
        self.assertEqual(self.webs, self.ids(self.alice, status='ACTIVE'))
        self.assertEqual([self.failed], self.ids(self.alice, status='ERROR'))
        self.assertEqual([self.pending], self.ids(self.alice, status='BUILD'))
        self.assertEqual([self.failed, self.pending], self.ids(
            self.alice, path='/servers', status=['error', 'BUILD']))

    def test_name_is_a_regular_expression_searched_in_the_name(self):
        self.assertEqual(self.webs, self.ids(self.alice, name=r'^web-\d$'))
        self.assertEqual([self.failed], self.ids(self.alice, name='fail'))
        self.assertEqual([], self.ids(self.alice, name='db'))

    def test_flavor_image_and_changes_since(self):
        self.assertEqual([self.failed], self.ids(self.alice, flavor='huge'))
        self.assertEqual(self.webs + [self.pending],
                         self.ids(self.alice, flavor='small'))
        everything = self.webs + [self.failed, self.pending]
        self.assertEqual(everything, self.ids(self.alice, image='cirros'))
        self.assertEqual([], self.ids(self.alice, image='other'))
        past = (datetime.datetime.utcnow()
                - datetime.timedelta(hours=1)).strftime('%Y-%m-%dT%H:%M:%SZ')
        # Merged from the cells (server_sort): in the order the cells
        # created the rows, which concurrent boots need not keep.
        self.assertEqual(sorted(everything), sorted(
            self.ids(self.alice, **{'changes-since': past})))
        self.assertEqual([], self.ids(self.alice, **{
            'changes-since': '2999-01-01T00:00:00Z'}))

    def walk(self, url, client=None):
        """Every server id from ``url`` on, following the next links."""
        listed, prefix = [], self.api.url + '/v2.1'
        while url:
            response = (client or self.alice).get(url)
            self.assertEqual(200, response.status_code, response.text)
            body = response.json()
            listed += [server['id'] for server in body['servers']]
            links = body.get('servers_links')
            url = links[0]['href'][len(prefix):] if links else None
        return listed

    def test_sort_dir_desc_walks_newest_first_across_pages(self):
        everything = self.webs + [self.failed, self.pending]
        self.assertEqual(everything[::-1], self.walk(
            '/servers?sort_key=created_at&sort_dir=desc&limit=2'))

    def test_filtered_walks_read_in_small_batches_give_each_match_once(self):
        # Batches smaller than the list: a page is made of several reads.
        self.useFixture(fixtures.MockPatch(
            'cellboot.api.server_records.FILTERED_BATCH', 1))
        for limit in (1, 2):
            self.assertEqual(self.webs, self.walk(
                f'/servers?status=ACTIVE&limit={limit}'))
            self.assertEqual(self.webs[::-1], self.walk(
                f'/servers/detail?name=web-%5Cd&sort_dir=desc&limit={limit}'))
            self.assertEqual([self.failed, self.db], self.walk(
                f'/servers?all_tenants=1&name=fail%7Cdb&limit={limit}',
                self.admin))

    def test_a_filtered_page_follows_its_marker_across_cells(self):
        first = self.alice.get('/servers?status=ACTIVE&limit=2').json()
        self.assertEqual(self.webs[:2],
                         [server['id'] for server in first['servers']])
        href = first['servers_links'][0]['href']
        self.assertIn('status=ACTIVE', href)
        rest = self.ids(self.alice, path='/servers', status='ACTIVE',
                        marker=self.webs[1])
        self.assertEqual(self.webs[2:], rest)

    def test_an_admin_lists_every_project_or_one(self):
        everything = self.webs + [self.failed, self.db, self.pending]
        self.assertEqual(everything, self.ids(self.admin, all_tenants=1))
        self.assertEqual([self.db], self.ids(self.admin, all_tenants='true',
                                             project_id='project-b'))
        self.assertEqual([self.failed], self.ids(
            self.admin, all_tenants=1, status='ERROR'))
        # Without all_tenants, project_id is ignored, as in Nova.
        self.assertEqual([], self.ids(self.admin, project_id='project-b'))

    def test_an_admin_filters_by_host(self):
        detail = self.admin.get('/servers/detail?all_tenants=1').json()
        host = next(server['OS-EXT-SRV-ATTR:host']
                    for server in detail['servers']
                    if server['id'] == self.webs[0])
        expected = [server['id'] for server in detail['servers']
                    if server.get('OS-EXT-SRV-ATTR:host') == host]
        self.assertIn(self.webs[0], expected)
        self.assertEqual(expected, self.ids(self.admin, all_tenants=1,
                                            host=host))
        self.assertEqual([], self.ids(self.admin, host='no-such-host'))

    def test_a_user_may_not_widen_the_list(self):
        for query in ('all_tenants=1', 'all_tenants=1&project_id=project-b',
                      'host=cell1-host1'):
            self.refused(self.bob, query, 403)
        # project_id alone is ignored: still only bob's own.
        self.assertEqual([self.db],
                         self.ids(self.bob, project_id='project-a'))
        self.assertEqual([self.db], self.ids(self.bob, all_tenants=0))

    def test_bad_values_answer_400_and_change_nothing(self):
        cases = {
            'status=SHUTOFFX': "'SHUTOFFX' is not a status",
            'status=': 'is not a status',
            'flavor=': 'Invalid query parameter flavor',
            'image=' + 'x' * 256: 'Invalid query parameter image',
            'changes-since=yesterday': 'changes-since must be',
            'changes-since=2026-13-45T99:00:00Z': 'changes-since must be',
            'all_tenants=maybe': 'all_tenants',
            'name=%5B': 'not a valid regular expression',
            'name=' + 'a' * 256: '1 to 255',
            'name=%28a%2B%29%2B%24': 'could take too long',
            'name=%28%28a%2A%29%29%2A': 'could take too long',
            'name=%28a%7Caa%29%7B2%2C%7D': 'could take too long',
            'sort_key=launched_at': 'sort_key',
            'sort_key=': 'sort_key',
            'sort_key=created_at&sort_key=created_at': 'once',
            'sort_dir=sideways': 'sort_dir',
            'reservation_id=': 'reservation_id',
            'host=': 'host',
            'project_id=' + 'p' * 256: 'project_id',
            'frobnicate=1': "Unknown filter 'frobnicate'",
            'deleted=true': "Unknown filter 'deleted'",
        }
        for query, message in cases.items():
            for path in ('/servers', '/servers/detail'):
                self.assertIn(message, self.refused(self.alice, query,
                                                    path=path), query)

    def test_a_user_cannot_see_another_projects_server_by_marker(self):
        message = self.refused(self.alice, f'marker={self.db}')
        self.assertIn('could not be found', message)
