"""``/os-allocations``: requests that are not servers, on every backend.

Two cells of one host each; every host reports CUSTOM_FPGA (which no
pool has); two DISK_GB pools serve both cells, one of them with
CUSTOM_SSD. A storage request asking CUSTOM_SSD lands on that pool, an
FPGA request on a host; VCPU is refused; quotas per class hold; a
delete releases; another project sees nothing; a row left ``placing``
by a killed process is settled by the sweep, and the sweep of
forgotten pool shares leaves allocation requests' shares alone.
"""

import threading

import fixtures
import jsonschema
from oslo_utils import uuidutils

from cellboot.api import view_schemas
from cellboot.conductor import pool_orphans
from cellboot.conductor import unfinished_deletes
from cellboot.conductor import unplaced_allocations
from cellboot.objects import resource_catalog
from cellboot.scheduler import allocation_records as rows
from cellboot.scheduler.pools import claims as pool_claims
from cellboot.scheduler.pools import records
from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional import invariants

SSD = {'resources': {'DISK_GB': 100}, 'required_traits': ['CUSTOM_SSD']}
FPGA = {'resources': {'CUSTOM_FPGA': 1}}


class _AllocationTests:

    def setUp(self):
        super().setUp()
        self.flags(extra_inventories=['CUSTOM_FPGA:2'], group='compute')
        self.api = self.useFixture(api_fixtures.APIServer(
            cells=2, hosts_per_cell=1, backend=self.BACKEND))
        self.cluster = self.api.cluster
        self.ctx = self.cluster.ctx
        resource_catalog.CLASSES.create(self.ctx, 'CUSTOM_FPGA')
        resource_catalog.TRAITS.create(self.ctx, 'CUSTOM_SSD')
        self.ssd = records.create_pool(
            self.ctx, 'ssd', {'DISK_GB': {'total': 1000}},
            traits=['CUSTOM_SSD'], cells=['cell1', 'cell2'])
        self.plain = records.create_pool(
            self.ctx, 'plain', {'DISK_GB': {'total': 5000}},
            cells=['cell1', 'cell2'])
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.bob = self.api.client(api_fixtures.BOB_TOKEN)

    def post(self, client, allocation, status=201):
        response = client.post('/os-allocations',
                               json={'allocation': allocation})
        self.assertEqual(status, response.status_code, response.text)
        return response.json()

    def used(self, name):
        return records.get_pool(self.ctx, name)['usages']['DISK_GB']

    def assertClean(self):
        self.assertEqual([], invariants.check_invariants(self.ctx))

    def test_storage_lands_on_the_pool_with_the_trait(self):
        body = self.post(self.alice, SSD)
        jsonschema.validate(body, view_schemas.ALLOCATION_ONE)
        allocation = body['allocation']
        self.assertEqual(
            ({'uuid': self.ssd['uuid'], 'name': 'ssd', 'kind': 'pool'},
             None, 'placed', 'project-a', {'DISK_GB': 100}),
            (allocation['provider'], allocation['cell'],
             allocation['status'], allocation['project_id'],
             allocation['resources']))
        self.assertEqual((100, 0), (self.used('ssd'), self.used('plain')))
        self.assertClean()
        shown = self.alice.get(f"/os-allocations/{allocation['id']}")
        self.assertEqual(allocation, shown.json()['allocation'])
        response = self.alice.delete(f"/os-allocations/{allocation['id']}")
        self.assertEqual(204, response.status_code, response.text)
        self.assertEqual(0, self.used('ssd'))
        self.assertEqual(404, self.alice.get(
            f"/os-allocations/{allocation['id']}").status_code)
        self.assertEqual(404, self.alice.delete(
            f"/os-allocations/{allocation['id']}").status_code)
        self.assertClean()

    def test_a_class_only_hosts_have_lands_on_a_host(self):
        allocation = self.post(self.alice, FPGA)['allocation']
        self.assertEqual('host', allocation['provider']['kind'])
        self.assertIn(allocation['cell'], ('cell1', 'cell2'))
        self.assertEqual(
            {allocation['provider']['uuid']: {'CUSTOM_FPGA': 1}},
            self.cluster.allocations(allocation['id']))
        self.assertClean()
        self.alice.delete(f"/os-allocations/{allocation['id']}")
        self.assertEqual({}, self.cluster.allocations(allocation['id']))
        self.assertClean()

    def test_no_provider_with_room_is_refused_and_writes_nothing(self):
        body = self.post(self.alice, {'resources': {'CUSTOM_FPGA': 3}}, 400)
        self.assertIn('CUSTOM_FPGA', str(body))
        self.assertEqual([], self.alice.get(
            '/os-allocations').json()['allocations'])
        self.assertClean()

    def test_a_server_s_classes_are_refused(self):
        for classes in ({'VCPU': 1}, {'MEMORY_MB': 512, 'DISK_GB': 1},
                        {'PCPU': 2}):
            body = self.post(self.alice, {'resources': classes}, 400)
            self.assertIn('POST /servers', str(body))
        self.assertEqual([], self.alice.get(
            '/os-allocations').json()['allocations'])

    def test_hostile_bodies_are_400_and_write_nothing(self):
        for allocation in (
                {}, {'resources': {}}, {'resources': []},
                {'resources': {'DISK_GB': 0}},
                {'resources': {'DISK_GB': 2 ** 31}},
                {'resources': {'DISK_GB': '1'}},
                {'resources': {'DISK_GB': True}},
                {'resources': {'disk': 1}},
                {'resources': {'CUSTOM_NOPE': 1}},
                {'resources': {f'CUSTOM_C{i}': 1 for i in range(60)}},
                dict(SSD, required_traits=['CUSTOM_NOPE']),
                dict(SSD, required_traits='CUSTOM_SSD'),
                dict(SSD, forbidden_traits=['CUSTOM_SSD']),
                dict(SSD, near='not-a-uuid'),
                dict(SSD, far=[1]),
                dict(SSD, availability_zone=''),
                dict(SSD, availability_zone='z' * 300),
                dict(SSD, provider='x')):
            self.post(self.alice, allocation, 400)
        response = self.alice.post('/os-allocations', json=[1])
        self.assertEqual(400, response.status_code)
        self.assertEqual(0, self.used('ssd'))
        self.assertEqual([], self.admin.get(
            '/os-allocations?all_tenants=1').json()['allocations'])

    def test_near_and_far_are_stored(self):
        first = self.post(self.alice, SSD)['allocation']['id']
        elsewhere = uuidutils.generate_uuid()  # unknown: avoids nothing
        allocation = self.post(self.alice, dict(SSD, near=first,
                                                far=elsewhere))
        self.assertEqual(([first], [elsewhere]),
                         (allocation['allocation']['near'],
                          allocation['allocation']['far']))

    def test_near_and_far_place_next_to_or_away_from_another(self):
        # One host of 2 FPGAs per cell.
        first = self.post(self.alice, FPGA)['allocation']
        near = self.post(self.alice, dict(FPGA, near=first['id']))
        self.assertEqual((first['cell'], first['provider']['uuid']),
                         (near['allocation']['cell'],
                          near['allocation']['provider']['uuid']))
        far = self.post(self.alice, dict(FPGA, far=first['id']))
        self.assertNotEqual(first['cell'], far['allocation']['cell'])
        # Near again: its cell is full, and near allows no other.
        self.post(self.alice, dict(FPGA, near=first['id']), 400)
        # Another project's allocation is unknown: near it, nothing.
        self.post(self.bob, dict(FPGA, near=first['id']), 400)
        # The pools serve both cells: a storage request near a host
        # allocation takes a pool serving its cell.
        storage = {'resources': {'DISK_GB': 10}, 'near': first['id']}
        self.assertEqual('pool', self.post(self.alice, storage)[
            'allocation']['provider']['kind'])
        self.assertClean()

    def test_an_availability_zone_no_cell_is_in_finds_nothing(self):
        self.post(self.alice, dict(SSD, availability_zone='elsewhere'), 400)
        self.post(self.alice, dict(FPGA, availability_zone='elsewhere'),
                  400)
        self.assertEqual('ssd', self.post(self.alice, dict(
            SSD, availability_zone='nova'))['allocation']['provider']['name'])
        self.assertEqual(1, len(self.admin.get(
            '/os-allocations?all_tenants=1').json()['allocations']))

    def test_over_quota_is_403_and_writes_nothing(self):
        response = self.admin.request(
            'PUT', '/os-quota-sets/project-a',
            json={'quota_set': {'DISK_GB': 150, 'CUSTOM_FPGA': 0}})
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual(150, response.json()['quota_set']['DISK_GB'])
        shown = self.alice.get('/os-quota-sets/project-a').json()
        jsonschema.validate(shown, view_schemas.QUOTA_SET_ONE)
        self.assertEqual(0, shown['quota_set']['CUSTOM_FPGA'])
        self.post(self.alice, SSD)
        body = self.post(self.alice, SSD, 403)
        self.assertIn('DISK_GB', str(body))
        self.post(self.alice, FPGA, 403)
        self.assertEqual((100, 1), (self.used('ssd'), len(self.alice.get(
            '/os-allocations').json()['allocations'])))
        # Another project is not limited by project-a's quota.
        self.post(self.bob, SSD)
        for bad in ({'CUSTOM_NOPE': 1}, {'disk': 1}, {'DISK_GB': -2}):
            response = self.admin.request('PUT', '/os-quota-sets/project-a',
                                          json={'quota_set': bad})
            self.assertEqual(400, response.status_code, response.text)
        self.assertClean()

    def test_racing_requests_never_both_pass_the_quota(self):
        self.admin.request('PUT', '/os-quota-sets/project-a',
                           json={'quota_set': {'DISK_GB': 150}})
        statuses = []

        def post():
            statuses.append(self.alice.post(
                '/os-allocations',
                json={'allocation': SSD}).status_code)

        threads = [threading.Thread(target=post) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual([201, 403, 403, 403], sorted(statuses))
        self.assertEqual(100, self.used('ssd'))
        self.assertClean()

    def test_another_project_can_neither_see_nor_delete_it(self):
        allocation = self.post(self.alice, SSD)['allocation']
        path = f"/os-allocations/{allocation['id']}"
        self.assertEqual((404, 404), (self.bob.get(path).status_code,
                                      self.bob.delete(path).status_code))
        self.assertEqual([], self.bob.get(
            '/os-allocations').json()['allocations'])
        self.assertEqual(403, self.bob.get(
            '/os-allocations?all_tenants=1').status_code)
        self.assertEqual(400, self.bob.get(
            '/os-allocations?all_tenants=maybe').status_code)
        listed = self.admin.get('/os-allocations?all_tenants=1').json()
        jsonschema.validate(listed, view_schemas.ALLOCATIONS)
        self.assertEqual([allocation['id']],
                         [item['id'] for item in listed['allocations']])
        self.assertEqual(100, self.used('ssd'))
        self.assertEqual(200, self.alice.get(path).status_code)

    def test_pages(self):
        made = [self.post(self.alice, SSD)['allocation']['id']
                for _ in range(3)]
        first = self.alice.get('/os-allocations?limit=2').json()
        self.assertEqual(made[:2], [a['id'] for a in first['allocations']])
        second = self.alice.get(
            f'/os-allocations?limit=2&marker={made[1]}').json()
        self.assertEqual(made[2:], [a['id'] for a in second['allocations']])
        self.assertEqual(400, self.bob.get(
            f'/os-allocations?marker={made[1]}').status_code)

    def test_a_placing_row_left_by_a_killed_process_is_settled(self):
        uuid = uuidutils.generate_uuid()
        request = {'resources': {'DISK_GB': 100}, 'required_traits': [],
                   'forbidden_traits': [], 'near': [], 'far': [],
                   'availability_zone': None}
        rows.insert_placing(self.ctx, uuid, 'project-a', 'alice', request)
        pool_claims.claim(self.ctx, uuid, [
            {'uuid': self.plain['uuid'], 'resources': {'DISK_GB': 100}}])
        sweep = unplaced_allocations.UnplacedAllocations(
            self.cluster.super_conductor)
        self.assertEqual({'settled': 0}, sweep.sweep_once(self.ctx))
        sweep.grace = -60
        self.assertEqual({'settled': 1}, sweep.sweep_once(self.ctx))
        self.assertEqual((0, {}), (self.used('plain'),
                                   pool_claims.holdings(self.ctx, uuid)))
        self.assertEqual([], rows.page(self.ctx, None, 10))
        self.assertEqual({'settled': 0}, sweep.sweep_once(self.ctx))
        self.assertClean()

    def test_the_sweep_of_host_claims_leaves_allocations_alone(self):
        allocation = self.post(self.alice, FPGA)['allocation']
        self.useFixture(fixtures.MockPatchObject(unfinished_deletes,
                                                 'ORPHAN_GRACE', -60))
        sweep = unfinished_deletes.UnfinishedDeletes(
            self.cluster.super_conductor)
        self.assertEqual(0, sweep.sweep_once(self.ctx)['released'])
        self.assertEqual(
            {allocation['provider']['uuid']: {'CUSTOM_FPGA': 1}},
            self.cluster.allocations(allocation['id']))
        # Its row gone, the host claim is an orphan like any other.
        rows.delete(self.ctx, allocation['id'])
        self.assertEqual(1, sweep.sweep_once(self.ctx)['released'])
        self.assertEqual({}, self.cluster.allocations(allocation['id']))

    def test_the_pool_orphan_sweep_leaves_allocations_alone(self):
        allocation = self.post(self.alice, SSD)['allocation']
        self.useFixture(fixtures.MockPatchObject(pool_orphans,
                                                 'ORPHAN_GRACE', -60))
        sweep = pool_orphans.PoolOrphans(self.cluster.super_conductor)
        self.assertEqual({'released': 0}, sweep.sweep_once(self.ctx))
        self.assertEqual(100, self.used('ssd'))
        # Its row gone (a failed delete's leftover), the share is found.
        rows.delete(self.ctx, allocation['id'])
        self.assertIn('pool allocations', ' '.join(
            invariants.check_invariants(self.ctx)))
        self.assertEqual({'released': 1}, sweep.sweep_once(self.ctx))
        self.assertEqual(0, self.used('ssd'))


class SQLiteAllocationTest(_AllocationTests, base.SQLiteMixin,
                           base.TestCase):
    pass


class MySQLAllocationTest(_AllocationTests, base.MySQLMixin, base.TestCase):
    pass


class PostgreSQLAllocationTest(_AllocationTests, base.PostgreSQLMixin,
                               base.TestCase):
    pass
