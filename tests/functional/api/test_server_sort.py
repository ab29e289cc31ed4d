"""The server lists sorted by each key, merged across two cells.

Alice's servers spread over two cells, one failed (cell0, ERROR), one
still a build request; names repeat, and differ in case and beyond
ASCII, so ties and the byte order are both walked. For each sort key
and direction, following the next links with small pages lists every
server exactly once, in ``(value, uuid)`` order; the values are read
from the databases, not from the API under test.
"""

import datetime
import time
import urllib.parse

import fixtures

from cellboot.api import server_sort
from cellboot.objects import build_request
from tests import base
from tests.functional.api import test_server_filters
from tests.functional.api import test_servers

NAMES = ('web', 'db', 'Web', 'web', '\u00e9t\u00e9', 'a-b', 'ab')


class ServerSortTest(base.TestCase):

    def setUp(self):
        super().setUp()
        test_server_filters.start_two_cells(self)
        self.servers = [self.boot(self.alice, name) for name in NAMES]
        self.servers.append(self.boot(self.alice, 'failed', flavor='huge'))
        self.theirs = self.boot(self.bob, 'db')
        self.cluster.wait_for_quiet()
        self.api.app.api.conductor = test_servers._NoConductor()
        self.servers.append(self.boot(self.alice, 'pending'))

    def boot(self, client, name, **extra):
        response = client.boot(name=name, **extra)
        self.assertEqual(202, response.status_code, response.text)
        return response.json()['server']['id']

    def value(self, key, uuid):
        """The sort value of a server, from its cell or build request."""
        try:
            _cell, inst = self.cluster.find(uuid)
        except Exception:
            req = build_request.BuildRequest.get_by_instance_uuid(
                self.cluster.ctx, uuid)
            return {'created_at': req.created_at,
                    'updated_at': req.created_at,
                    'display_name': req.instance['display_name'],
                    'uuid': uuid, 'host': '',
                    'vm_state': 'building'}[key]
        if key == 'updated_at':
            return inst.updated_at or inst.created_at
        return getattr(inst, key) or ''

    def expected(self, key, descending, servers=None):
        servers = servers or self.servers
        if key == 'created_at':
            # The order the API took them in (its mappings), which the
            # servers were booted in, one after another.
            return servers[::-1] if descending else list(servers)
        return sorted(servers,
                      key=lambda uuid: (self.value(key, uuid), uuid),
                      reverse=descending)

    walk = test_server_filters.ServerFiltersTest.walk

    def test_each_key_walks_every_server_once_in_order_both_ways(self):
        for key in server_sort.SORT_KEYS:
            for direction in ('asc', 'desc'):
                expected = self.expected(key, direction == 'desc')
                for path, limit in (('/servers', 2), ('/servers/detail', 3)):
                    listed = self.walk(f'{path}?sort_key={key}&sort_dir='
                                       f'{direction}&limit={limit}')
                    self.assertEqual(expected, listed, (key, direction))

    def test_an_admin_walks_every_project_sorted(self):
        everything = self.servers + [self.theirs]
        self.assertEqual(
            self.expected('display_name', False, everything),
            self.walk('/servers?all_tenants=1&sort_key=display_name&limit=2',
                      self.admin))

    def test_a_filtered_sorted_walk_reads_each_cell_in_small_batches(self):
        self.useFixture(fixtures.MockPatch(
            'cellboot.api.server_sort.FILTERED_BATCH', 1))
        webs = [uuid for uuid in self.servers
                if self.value('display_name', uuid) in ('web', 'Web')]
        for limit in (1, 2):
            self.assertEqual(
                self.expected('host', True, webs),
                self.walk(f'/servers?name=%5E%5BwW%5Deb&sort_key=host&'
                          f'sort_dir=desc&limit={limit}'))

    def test_a_deleted_marker_keeps_its_place(self):
        order = self.expected('display_name', False)
        marker = order[2]
        self.assertEqual(204, self.alice.delete(
            f'/servers/{marker}').status_code)
        self.assertEqual(order[3:], self.walk(
            f'/servers?sort_key=display_name&marker={marker}'))

    def test_changes_since_lists_deleted_servers_as_deleted(self):
        gone = self.servers[0]
        self.assertEqual(204, self.alice.delete(f'/servers/{gone}')
                         .status_code)
        past = (datetime.datetime.utcnow() - datetime.timedelta(hours=1)
                ).strftime('%Y-%m-%dT%H:%M:%SZ')
        body = self.alice.get('/servers/detail?' + urllib.parse.urlencode(
            {'changes-since': past})).json()
        statuses = {s['id']: s['status'] for s in body['servers']}
        self.assertEqual(set(self.servers), set(statuses))
        self.assertEqual('DELETED', statuses[gone])
        listed = [s['id'] for s in self.alice.get('/servers').json()[
            'servers']]
        self.assertNotIn(gone, listed)

    def test_changes_since_after_the_boots_lists_only_the_deleted(self):
        # Deleting is a change: the deleted server alone changed since.
        time.sleep(1.1)
        since = datetime.datetime.utcnow().strftime('%Y-%m-%dT%H:%M:%SZ')
        gone = self.servers[1]
        self.assertEqual(204, self.alice.delete(f'/servers/{gone}')
                         .status_code)
        for key in ('display_name', 'created_at'):
            body = self.alice.get('/servers/detail?' + urllib.parse.urlencode(
                {'changes-since': since, 'sort_key': key})).json()
            self.assertEqual([(gone, 'DELETED')], [
                (s['id'], s['status']) for s in body['servers']])

    def test_hostile_sorts_and_markers_answer_400(self):
        unknown = '00000000-0000-0000-0000-000000000000'
        cases = {
            'sort_key=password': "'password' is not one of",
            'sort_key=display_name&sort_key=host': 'once',
            'sort_key=host&sort_dir=up': 'sort_dir',
            'sort_key=%00%E2%80%AE': 'sort_key',
            'sort_key=' + 'k' * 300: 'sort_key',
            f'sort_key=host&marker={self.theirs}': 'could not be found',
            f'sort_key=uuid&marker={unknown}': 'could not be found',
            'sort_key=vm_state&marker=%27%3B--': 'could not be found',
        }
        for query, message in cases.items():
            for path in ('/servers', '/servers/detail'):
                response = self.alice.get(f'{path}?{query}')
                self.assertEqual(400, response.status_code, query)
                text = response.json()['badRequest']['message']
                self.assertIn(message, text, query)
                self.assertNotIn('Traceback', response.text)
        # Another project's marker is answered as an unknown one.
        theirs = self.alice.get(
            f'/servers?sort_key=host&marker={self.theirs}').json()
        unknowns = self.alice.get(
            f'/servers?sort_key=host&marker={unknown}').json()
        self.assertEqual(
            unknowns['badRequest']['message'].replace(unknown, 'X'),
            theirs['badRequest']['message'].replace(self.theirs, 'X'))
