"""Generic resources and traits, end to end through the REST API.

An administrator creates a custom class and traits, a flavor asking for
them, and gives hosts traits over REST; servers booted one by one land
where the resources and traits are, consume them as
``GET /os-resource-providers`` shows, and the one nothing can take ends
in ERROR with a fault naming what was missing. Only ``cell1-host1``
reports ``CUSTOM_FPGA:2`` (its compute service's inventories, as
``[compute] extra_inventories`` would give them).
"""

import fixtures

from cellboot.compute import registration
from tests import base
from tests.functional.api import fixtures as api_fixtures

FPGA_HOST = 'cell1-host1'
SSD_HOST = 'cell2-host2'
_REAL_INVENTORIES = registration.inventories


def _inventories(node):
    """What the compute service reports: FPGAs on one host only."""
    found = _REAL_INVENTORIES(node)
    if node.host == FPGA_HOST:
        found['CUSTOM_FPGA'] = {'total': 2}
    return found


class _GenericBootTests:

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MockPatch(
            'cellboot.compute.registration.inventories', _inventories))
        self.api = self.useFixture(api_fixtures.APIServer(
            cells=2, hosts_per_cell=2, backend=self.BACKEND))
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.assertEqual(201, self.admin.post('/os-resource-classes', json={
            'name': 'CUSTOM_FPGA'}).status_code)
        self.assertEqual(201, self.admin.request(
            'PUT', '/os-traits/CUSTOM_SSD').status_code)

    def providers(self):
        found = self.admin.get('/os-resource-providers?kind=host').json()[
            'resource_providers']
        return {item['name']: item for item in found}

    def flavor(self, name, **specs):
        response = self.admin.post('/flavors', json={'flavor': {
            'name': name, 'id': name, 'vcpus': 1, 'ram': 256, 'disk': 1,
            'extra_specs': specs}})
        self.assertEqual(200, response.status_code, response.text)

    def boot(self, flavor):
        """Boot one server and wait for it to settle; its admin view."""
        response = self.alice.boot(flavor=flavor)
        self.assertEqual(202, response.status_code, response.text)
        uuid = response.json()['server']['id']
        self.api.cluster.wait_for_quiet()
        server = self.admin.get(f'/servers/{uuid}').json()['server']
        return server

    def set_traits(self, name, traits):
        """PUT a host's traits, then let the cells' schedulers reload as
        their periodic reload would (``[scheduler]
        host_state_refresh_interval``, off in the test deployment), so
        that the API level's cell aggregates show them."""
        uuid = self.providers()[name]['uuid']
        response = self.admin.request(
            'PUT', f'/os-resource-providers/{uuid}/traits',
            json={'traits': traits})
        self.assertEqual(200, response.status_code, response.text)
        for scheduler in self.api.cluster.cell_schedulers.values():
            scheduler.refresh(self.api.cluster.deployment.ctx)

    def test_two_fpgas_take_two_servers_and_the_third_is_named(self):
        self.flavor('fpga', **{'resources:CUSTOM_FPGA': '1'})
        for _ in range(2):
            server = self.boot('fpga')
            self.assertEqual(('ACTIVE', FPGA_HOST),
                             (server['status'],
                              server['OS-EXT-SRV-ATTR:host']))
        fpga = self.providers()[FPGA_HOST]['inventories']['CUSTOM_FPGA']
        self.assertEqual((2, 2), (fpga['used'], fpga['total']))
        third = self.boot('fpga')
        self.assertEqual('ERROR', third['status'])
        # The message is the generic one users read; the details, which
        # administrators read, name the class nothing had room for.
        self.assertIn('CUSTOM_FPGA', third['fault']['details'])

    def test_a_required_trait_lands_only_on_the_host_having_it(self):
        self.set_traits(SSD_HOST, ['CUSTOM_SSD'])
        self.flavor('ssd', **{'trait:CUSTOM_SSD': 'required'})
        for _ in range(3):
            server = self.boot('ssd')
            self.assertEqual(('ACTIVE', SSD_HOST),
                             (server['status'],
                              server['OS-EXT-SRV-ATTR:host']))

    def test_a_forbidden_trait_avoids_the_hosts_having_it(self):
        for name in self.providers():
            if name != SSD_HOST:
                self.set_traits(name, ['CUSTOM_SSD'])
        self.flavor('nossd', **{'trait:CUSTOM_SSD': 'forbidden'})
        for _ in range(2):
            server = self.boot('nossd')
            self.assertEqual(('ACTIVE', SSD_HOST),
                             (server['status'],
                              server['OS-EXT-SRV-ATTR:host']))
        self.set_traits(SSD_HOST, ['CUSTOM_SSD'])
        server = self.boot('nossd')
        self.assertEqual('ERROR', server['status'])
        self.assertIn('CUSTOM_SSD', server['fault']['details'])


class SQLiteGenericBootTest(_GenericBootTests, base.SQLiteMixin,
                            base.TestCase):
    pass


class MySQLGenericBootTest(_GenericBootTests, base.MySQLMixin,
                           base.TestCase):
    pass


class PostgreSQLGenericBootTest(_GenericBootTests, base.PostgreSQLMixin,
                                base.TestCase):
    pass
