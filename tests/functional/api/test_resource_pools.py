"""``/os-resource-pools``: shared pools over HTTP, and hostile input."""

import jsonschema
from oslo_utils import uuidutils

from cellboot.api import admin_view_schemas
from cellboot.scheduler.pools import claims as pool_claims
from tests import base
from tests.functional.api import fixtures as api_fixtures

DISK = {'DISK_GB': {'total': 1000, 'reserved': 100}}


def body(**pool):
    pool.setdefault('name', 'shared')
    pool.setdefault('inventories', DISK)
    pool.setdefault('cells', ['cell1', 'cell2'])
    return {'resource_pool': pool}


class ResourcePoolsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=2,
                                                          hosts_per_cell=1))
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)

    def create(self, **pool):
        response = self.admin.post('/os-resource-pools', json=body(**pool))
        self.assertEqual(200, response.status_code, response.text)
        return response.json()['resource_pool']

    def assertRefused(self, response, code, *words):
        self.assertEqual(code, response.status_code, response.text)
        for word in words:
            self.assertIn(word, response.text)

    def test_create_show_list_delete(self):
        pool = self.create(traits=['CUSTOM_CEPH'])
        jsonschema.validate({'resource_pool': pool},
                            admin_view_schemas.RESOURCE_POOL_ONE)
        self.assertEqual({'DISK_GB': 900}, pool['capacity'])
        self.assertEqual(['cell1', 'cell2'], pool['cells'])
        shown = self.admin.get('/os-resource-pools/shared').json()
        self.assertEqual(pool, shown['resource_pool'])
        listed = self.admin.get('/os-resource-pools').json()
        jsonschema.validate(listed, admin_view_schemas.RESOURCE_POOLS)
        self.assertEqual([pool], listed['resource_pools'])
        response = self.admin.delete(f'/os-resource-pools/{pool["id"]}')
        self.assertEqual(204, response.status_code, response.text)
        self.assertRefused(self.admin.get('/os-resource-pools/shared'), 404)

    def test_pages(self):
        ids = [self.create(name=f'pool-{i}')['id'] for i in range(3)]
        first = self.admin.get('/os-resource-pools?limit=2').json()
        self.assertEqual(ids[:2], [p['id'] for p in first['resource_pools']])
        href = first['resource_pools_links'][0]['href']
        rest = self.admin.get('/os-resource-pools?' + href.split('?')[1])
        self.assertEqual(ids[2:], [p['id'] for p in
                                   rest.json()['resource_pools']])

    def test_non_admin_is_refused(self):
        pool = self.create()
        for call in (lambda: self.alice.get('/os-resource-pools'),
                     lambda: self.alice.get('/os-resource-pools/shared'),
                     lambda: self.alice.post('/os-resource-pools',
                                             json=body(name='mine')),
                     lambda: self.alice.delete(
                         f'/os-resource-pools/{pool["id"]}')):
            self.assertRefused(call(), 403)
        self.assertEqual(1, len(self.admin.get(
            '/os-resource-pools').json()['resource_pools']))

    def test_hostile_bodies_are_400_and_write_nothing(self):
        for pool, words in (
                (body(inventories={'VCPUS': {'total': 1}}), 'VCPUS'),
                (body(inventories={'DISK_GB': {'total': -1}}), ''),
                (body(inventories={'DISK_GB': {'total': 2 ** 40}}), ''),
                (body(inventories={'DISK_GB': {'total': 'many'}}), ''),
                (body(inventories={'DISK_GB': {'total': 10, 'x': 1}}), ''),
                (body(inventories={}), ''),
                (body(cells=['nowhere']), 'nowhere'),
                (body(cells=[], zones=['nowhere']), 'nowhere'),
                (body(cells=[], zones=[]), 'at least one cell or zone'),
                (body(cells='cell1'), ''),
                (body(traits=['lower']), 'not a trait'),
                (body(name=''), ''), (body(name='x' * 256), ''),
                ({'resource_pool': {'name': 'x'}}, ''), ([], ''),
                ({'resource_pool': body()['resource_pool'], 'x': 1}, '')):
            response = self.admin.post('/os-resource-pools', json=pool)
            self.assertRefused(response, 400, *([words] if words else []))
        self.assertEqual([], self.admin.get(
            '/os-resource-pools').json()['resource_pools'])

    def test_duplicate_name_is_409(self):
        self.create()
        self.assertRefused(self.admin.post('/os-resource-pools',
                                           json=body()), 409, 'shared')

    def test_unknown_pool_is_404(self):
        for call in (self.admin.get, self.admin.delete):
            self.assertRefused(call('/os-resource-pools/nope'), 404, 'nope')
        self.assertRefused(self.admin.get(
            f'/os-resource-pools/{uuidutils.generate_uuid()}'), 404)

    def test_delete_in_use_is_409(self):
        pool = self.create()
        pool_claims.claim(self.api.cluster.ctx, uuidutils.generate_uuid(), [
            {'uuid': pool['id'], 'resources': {'DISK_GB': 10}}])
        self.assertRefused(self.admin.delete('/os-resource-pools/shared'),
                           409, 'shared')
        self.assertEqual({'DISK_GB': 10}, self.admin.get(
            '/os-resource-pools/shared').json()['resource_pool']['usages'])
