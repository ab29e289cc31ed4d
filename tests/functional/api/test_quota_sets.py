"""Quotas over HTTP: boots at, under and over quota; ``/os-quota-sets``.

The cluster's flavor ``small`` is 1 VCPU and 512 MiB. Boots that are to
stay build requests use a conductor that casts nothing: a BUILD server
counts as much as an ACTIVE one.
"""

import sqlalchemy as sa

from cellboot.db.api import connection as api_connection
from cellboot.db.api import models as api_models
from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional.api import test_servers

TABLES = ('build_requests', 'request_specs', 'instance_mappings',
          'server_group_members', 'quotas')


def quota_rows():
    engine = api_connection.get_engine()
    with engine.connect() as conn:
        return sorted(tuple(row) for row in conn.execute(sa.select(
            api_models.Quota.__table__.c.project_id,
            api_models.Quota.__table__.c.resource,
            api_models.Quota.__table__.c.hard_limit)))


class _QuotaAPITest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=2))
        self.cluster = self.api.cluster
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.bob = self.api.client(api_fixtures.BOB_TOKEN)
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)

    def hold_builds(self):
        self.api.app.api.conductor = test_servers._NoConductor()

    def set_quota(self, project='project-a', **limits):
        response = self.admin.request('PUT', f'/os-quota-sets/{project}',
                                      json={'quota_set': limits})
        self.assertEqual(200, response.status_code, response.text)
        return response.json()['quota_set']

    def rows(self):
        return [test_servers.count_rows(table) for table in TABLES]

    def boot(self, client=None, count=None, min_count=None, max_count=None,
             flavor='small'):
        server = {}
        if min_count is not None:
            server['min_count'] = min_count
        if max_count is not None:
            server['max_count'] = max_count
        return (client or self.alice).boot(count=count, flavor=flavor,
                                           server=server)

    def assertForbidden(self, response, message=None):
        self.assertEqual(403, response.status_code, response.text)
        body = response.json()
        self.assertEqual(['forbidden'], list(body))
        self.assertEqual(403, body['forbidden']['code'])
        if message is not None:
            self.assertEqual(message, body['forbidden']['message'])

    def assertBadRequest(self, response, fragment=None):
        self.assertEqual(400, response.status_code, response.text)
        body = response.json()
        self.assertEqual(['badRequest'], list(body))
        if fragment is not None:
            self.assertIn(fragment, body['badRequest']['message'])


class BootQuotaTest(_QuotaAPITest):

    def test_boots_up_to_the_quota_are_accepted(self):
        self.hold_builds()
        self.set_quota(instances=3)
        self.assertEqual(202, self.boot(count=2).status_code)
        self.assertEqual(202, self.boot().status_code)

    def test_one_server_over_the_quota_is_403_in_novas_words(self):
        self.hold_builds()
        self.set_quota(instances=2)
        self.boot(count=2)
        before = self.rows()
        self.assertForbidden(self.boot(), 'Quota exceeded for instances: '
                             'Requested 1, but already used 2 of 2 '
                             'instances')
        self.assertEqual(before, self.rows())

    def test_a_multi_create_over_quota_is_refused_whole(self):
        self.hold_builds()
        self.set_quota(instances=10)
        self.boot(count=8)
        before = self.rows()
        self.assertForbidden(self.boot(count=5), 'Quota exceeded for '
                             'instances: Requested 5, but already used 8 '
                             'of 10 instances')
        self.assertEqual(before, self.rows())

    def test_a_multi_create_gets_what_fits_between_min_and_max(self):
        self.hold_builds()
        self.set_quota(instances=5)
        self.boot(count=2)
        body = self.boot(min_count=2, max_count=6).json()
        self.assertEqual(3, len(body['servers']))
        self.assertEqual(5, test_servers.count_rows('instance_mappings'))
        self.assertForbidden(self.boot(min_count=1, max_count=4))

    def test_cores_and_ram_are_counted_from_the_flavors(self):
        self.hold_builds()
        self.admin.post('/flavors', json={'flavor': {
            'name': 'big', 'id': 'big', 'vcpus': 4, 'ram': 4096}})
        self.set_quota(cores=10, ram=-1)
        self.boot(count=2, flavor='big')
        self.assertForbidden(self.boot(flavor='big'), 'Quota exceeded for '
                             'cores: Requested 4, but already used 8 of 10 '
                             'cores')
        self.assertEqual(202, self.boot(count=2).status_code)
        self.set_quota(cores=-1, ram=9000)
        self.assertForbidden(self.boot(flavor='big'), 'Quota exceeded for '
                             'ram: Requested 4096, but already used 9216 of '
                             '9000 ram')

    def test_the_defaults_apply_to_projects_without_limits(self):
        self.hold_builds()
        self.flags(instances=1, group='quota')
        self.assertEqual(202, self.boot().status_code)
        self.assertForbidden(self.boot())
        self.assertEqual(202, self.boot(client=self.bob).status_code)

    def test_other_projects_servers_do_not_count(self):
        self.hold_builds()
        self.set_quota(instances=2)
        self.set_quota(project='project-b', instances=5)
        self.boot(client=self.bob, count=5)
        self.assertEqual(202, self.boot(count=2).status_code)

    def test_deleted_build_requests_free_their_quota(self):
        self.hold_builds()
        self.set_quota(instances=2)
        ids = [s['id'] for s in self.boot(count=2).json()['servers']]
        self.assertForbidden(self.boot())
        self.assertEqual(204, self.alice.delete(
            f'/servers/{ids[0]}').status_code)
        self.assertEqual(202, self.boot().status_code)

    def test_deleted_active_servers_free_their_quota(self):
        self.set_quota(instances=2)
        ids = [s['id'] for s in self.boot(count=2).json()['servers']]
        self.cluster.wait_for_quiet()
        self.assertForbidden(self.boot())
        self.assertEqual(204, self.alice.delete(
            f'/servers/{ids[1]}').status_code)
        self.assertEqual(202, self.boot().status_code)
        self.cluster.wait_for_quiet()

    def test_error_servers_count_until_deleted(self):
        self.admin.post('/flavors', json={'flavor': {
            'name': 'huge', 'id': 'huge', 'vcpus': 1, 'ram': 10 ** 6}})
        self.set_quota(instances=1, ram=-1)
        (server_id,) = [self.boot(flavor='huge').json()['server']['id']]
        self.cluster.wait_for_quiet()
        self.assertEqual('ERROR', self.alice.get(
            f'/servers/{server_id}').json()['server']['status'])
        self.assertForbidden(self.boot())
        self.alice.delete(f'/servers/{server_id}')
        self.assertEqual(202, self.boot().status_code)
        self.cluster.wait_for_quiet()


class QuotaSetsTest(_QuotaAPITest):

    def test_a_user_reads_the_defaults_of_their_project(self):
        response = self.alice.get('/os-quota-sets/project-a')
        self.assertEqual(200, response.status_code)
        self.assertEqual({'quota_set': {'id': 'project-a', 'instances': 10,
                                        'cores': 20, 'ram': 51200}},
                         response.json())

    def test_detail_shows_limits_and_usage(self):
        self.hold_builds()
        self.set_quota(cores=-1)
        self.boot(count=3)
        quota_set = self.alice.get(
            '/os-quota-sets/project-a/detail').json()['quota_set']
        self.assertEqual({
            'id': 'project-a',
            'instances': {'limit': 10, 'in_use': 3, 'reserved': 0},
            'cores': {'limit': -1, 'in_use': 3, 'reserved': 0},
            'ram': {'limit': 51200, 'in_use': 1536, 'reserved': 0}},
            quota_set)

    def test_a_user_cannot_read_another_projects_quota(self):
        for path in ('/os-quota-sets/project-b',
                     '/os-quota-sets/project-b/detail'):
            self.assertForbidden(self.alice.get(path))

    def test_an_admin_reads_and_sets_any_projects_quota(self):
        self.assertEqual({'id': 'project-b', 'instances': 3, 'cores': 20,
                          'ram': -1},
                         self.set_quota(project='project-b', instances=3,
                                        ram=-1))
        self.assertEqual(3, self.admin.get(
            '/os-quota-sets/project-b').json()['quota_set']['instances'])
        self.assertEqual(3, self.bob.get(
            '/os-quota-sets/project-b').json()['quota_set']['instances'])

    def test_a_user_cannot_change_any_quota_not_even_their_own(self):
        for project in ('project-a', 'project-b'):
            response = self.alice.request(
                'PUT', f'/os-quota-sets/{project}',
                json={'quota_set': {'instances': 1000}})
            self.assertForbidden(response)
            self.assertForbidden(self.alice.request(
                'DELETE', f'/os-quota-sets/{project}'))
        self.assertEqual([], quota_rows())

    def test_hostile_bodies_are_400_and_change_nothing(self):
        self.set_quota(instances=4)
        before = quota_rows()
        for body in ({'quota_set': {'instances': '5'}},
                     {'quota_set': {'instances': 5.5}},
                     {'quota_set': {'cores': -2}},
                     {'quota_set': {'ram': 2 ** 31}},
                     {'quota_set': {'ram': 10 ** 30}},
                     {'quota_set': {'instances': True}},
                     {'quota_set': {'instances': None}},
                     {'quota_set': {'instances': 1, 'floating_ips': 1}},
                     {'quota_set': {}},
                     {'quota_set': [1]},
                     {'quota_set': {'instances': 1}, 'force': True},
                     {'instances': 1},
                     [], None, 'x'):
            response = self.admin.request(
                'PUT', '/os-quota-sets/project-a', json=body)
            self.assertBadRequest(response)
            self.assertEqual(before, quota_rows(), body)

    def test_a_body_that_is_not_json_is_400(self):
        self.assertBadRequest(self.admin.request(
            'PUT', '/os-quota-sets/project-a', data=b'{"quota_set": ',
            headers={'Content-Type': 'application/json'}))

    def test_a_project_id_too_long_is_400(self):
        project = 'p' * 256
        self.assertBadRequest(self.admin.get(f'/os-quota-sets/{project}'),
                              'project id')
        self.assertBadRequest(self.admin.request(
            'PUT', f'/os-quota-sets/{project}',
            json={'quota_set': {'instances': 1}}))
        self.assertEqual([], quota_rows())

    def test_delete_gives_the_defaults_back(self):
        self.set_quota(instances=1, cores=1)
        response = self.admin.request('DELETE', '/os-quota-sets/project-a')
        self.assertEqual(202, response.status_code)
        self.assertEqual(b'', response.content)
        self.assertEqual(10, self.alice.get(
            '/os-quota-sets/project-a').json()['quota_set']['instances'])
        self.assertEqual([], quota_rows())

    def test_quota_paths_need_a_token(self):
        anonymous = self.api.client(None)
        self.assertEqual(401, anonymous.get(
            '/os-quota-sets/project-a').status_code)
