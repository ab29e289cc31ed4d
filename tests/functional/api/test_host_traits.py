"""``/os-resource-providers/{uuid}/traits``: an operator's host traits.

What an administrator sets reaches the cell's database and is refused
whole when any part is wrong; nobody else may read or write it.
"""

import fixtures

from cellboot.api import host_traits
from cellboot import context as cb_context
from cellboot.scheduler.resources import provider_traits
from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional.api import test_resource_catalog


class HostTraitsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=2,
                                                          hosts_per_cell=1))
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        hosts = self.admin.get('/os-resource-providers?kind=host').json()[
            'resource_providers']
        self.hosts = {host['name']: host['uuid'] for host in hosts}
        self.uuid = self.hosts['cell2-host1']
        self.path = f'/os-resource-providers/{self.uuid}/traits'
        self.assertEqual(201, self.admin.request(
            'PUT', '/os-traits/CUSTOM_SSD').status_code)

    def put(self, body, client=None):
        return (client or self.admin).request('PUT', self.path, json=body)

    def cell_traits(self):
        """What the cell's database holds, read directly."""
        cell = self.api.cluster.cell_by_name('cell2')
        with cb_context.target_cell(cb_context.get_admin_context(),
                                    cell) as cctxt:
            return provider_traits.get_traits(cctxt).get(self.uuid, [])

    def test_put_replaces_get_shows_delete_clears(self):
        response = self.put({'traits': ['CUSTOM_SSD', 'HW_CPU_X86_AVX2',
                                        'CUSTOM_SSD']})
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual({'resource_provider_uuid': self.uuid,
                          'traits': ['CUSTOM_SSD', 'HW_CPU_X86_AVX2']},
                         response.json())
        self.assertEqual(['CUSTOM_SSD', 'HW_CPU_X86_AVX2'],
                         self.cell_traits())
        self.assertEqual(['CUSTOM_SSD', 'HW_CPU_X86_AVX2'],
                         self.admin.get(self.path).json()['traits'])
        self.assertEqual(['HW_CPU_X86_AVX2'], self.put(
            {'traits': ['HW_CPU_X86_AVX2']}).json()['traits'])
        listed = {host['uuid']: host['traits'] for host in self.admin.get(
            '/os-resource-providers').json()['resource_providers']}
        self.assertEqual(['HW_CPU_X86_AVX2'], listed[self.uuid])
        self.assertEqual([], listed[self.hosts['cell1-host1']])
        self.assertEqual(204, self.admin.delete(self.path).status_code)
        self.assertEqual([], self.cell_traits())

    def test_non_admin_is_403_and_changes_nothing(self):
        self.assertEqual(403, self.alice.get(self.path).status_code)
        self.assertEqual(403, self.put({'traits': ['CUSTOM_SSD']},
                                       self.alice).status_code)
        self.assertEqual(403, self.alice.delete(self.path).status_code)
        self.assertEqual([], self.cell_traits())

    def test_unknown_provider_is_404(self):
        for key in ('00000000-0000-0000-0000-000000000000', 'nope',
                    'x' * 300):
            path = f'/os-resource-providers/{key}/traits'
            self.assertEqual(404, self.admin.get(path).status_code)
            self.assertEqual(404, self.admin.request(
                'PUT', path, json={'traits': []}).status_code)
            self.assertEqual(404, self.admin.delete(path).status_code)

    def test_bad_traits_are_400_and_change_nothing(self):
        self.put({'traits': ['CUSTOM_SSD']})
        for traits in (['CUSTOM_NEVER_CREATED'], ['not a trait'],
                       ['HW_NO_SUCH_STANDARD_TRAIT'], ['CUSTOM_SSD', 1],
                       [None], 'CUSTOM_SSD', {'a': 1}, None, 7,
                       ['CUSTOM_' + 'A' * 300],
                       ['CUSTOM_SSD'] * (host_traits.MAX_TRAITS + 1)):
            response = self.put({'traits': traits})
            self.assertEqual(400, response.status_code, (traits,
                                                         response.text))
        for body in ({}, [], 'x', {'traits': [], 'more': 1}, None):
            self.assertEqual(400, self.put(body).status_code, body)
        response = self.admin.request('PUT', self.path, data=b'{nope',
                                      headers={'Content-Type':
                                               'application/json'})
        self.assertEqual(400, response.status_code)
        self.assertEqual(['CUSTOM_SSD'], self.cell_traits())

    def test_the_message_names_the_missing_custom_trait(self):
        response = self.put({'traits': ['CUSTOM_NEVER_CREATED']})
        self.assertIn('CUSTOM_NEVER_CREATED', response.text)

    def test_a_pool_uuid_is_400(self):
        pool_id = test_resource_catalog._add_pool(
            cb_context.get_admin_context(), 'pool1', 'VGPU')
        pool = [item for item in self.admin.get(
            '/os-resource-providers?kind=pool').json()['resource_providers']
            if item['name'] == 'pool1'][0]
        self.assertTrue(pool_id)
        path = f'/os-resource-providers/{pool["uuid"]}/traits'
        response = self.admin.request('PUT', path,
                                      json={'traits': ['CUSTOM_SSD']})
        self.assertEqual(400, response.status_code)
        self.assertIn('shared pool', response.text)

    @staticmethod
    def down(ctx, cell):
        if ctx.cell_uuid == cell.uuid:
            raise RuntimeError('down')
        return []

    def test_an_unreachable_cell_is_not_a_5xx(self):
        cell = self.api.cluster.cell_by_name('cell2')
        self.useFixture(fixtures.MockPatch(
            'cellboot.api.host_traits._matching',
            side_effect=lambda ctx, key: self.down(ctx, cell)))
        response = self.admin.get(self.path)
        self.assertEqual(404, response.status_code, response.text)
        self.assertIn('cell2', response.text)
        response = self.put({'traits': ['CUSTOM_SSD']})
        self.assertEqual(404, response.status_code, response.text)
