"""``/os-resource-classes``, ``/os-traits`` and flavor extra specs over HTTP.

The catalog of custom names, what a flavor's extra specs may say, and
that a boot carries them to the scheduler in its request spec.
"""

from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models
from cellboot.objects import request_spec
from cellboot.scheduler.resources import classes
from tests.functional.api import fixtures as api_fixtures


@api_db.writer
def _add_pool(context, name, rc):
    """A shared pool of 10 ``rc`` serving cell1, as rows."""
    providers = models.ResourceProvider.__table__
    result = context.session.execute(sa.insert(providers).values(
        uuid=uuidutils.generate_uuid(), name=name, generation=0,
        is_pool=True))
    pool_id = result.inserted_primary_key[0]
    context.session.execute(sa.insert(models.Inventory.__table__).values(
        resource_provider_id=pool_id, resource_class=rc, total=10,
        reserved=0, min_unit=1, max_unit=10, step_size=1,
        allocation_ratio=1.0))
    cells = models.CellMapping.__table__
    cell_id = context.session.execute(sa.select(cells.c.id).where(
        cells.c.name == 'cell1')).scalar()
    context.session.execute(sa.insert(
        models.ResourcePoolScope.__table__).values(
            resource_provider_id=pool_id, cell_id=cell_id))
    return pool_id


class CatalogTest(api_fixtures.OneHostAPITest):

    def names(self, path, **query):
        """Every item of a paged listing, following its next links."""
        found, url = [], path + '?limit=500'
        key = path.strip('/').split('-', 1)[-1].replace('-', '_')
        while url:
            response = self.admin.get(url)
            self.assertEqual(200, response.status_code, response.text)
            body = response.json()
            found.extend(body[key])
            links = body.get(f'{key}_links')
            url = links[0]['href'].split('/v2.1', 1)[1] if links else None
        return {item['name']: item['custom'] for item in found}

    # -- resource classes --------------------------------------------------

    def test_classes_are_standard_and_created_ones(self):
        response = self.admin.post('/os-resource-classes',
                                   json={'name': 'CUSTOM_FPGA'})
        self.assertEqual(201, response.status_code, response.text)
        self.assertEqual({'name': 'CUSTOM_FPGA', 'custom': True},
                         response.json()['resource_class'])
        listed = self.names('/os-resource-classes')
        self.assertTrue(listed['CUSTOM_FPGA'])
        self.assertEqual(set(classes.STANDARD) | {'CUSTOM_FPGA'}, set(listed))
        self.assertFalse(listed['VCPU'])
        self.assertEqual(
            {'name': 'VGPU', 'custom': False},
            self.admin.get('/os-resource-classes/VGPU').json()[
                'resource_class'])
        self.assertEqual(404, self.admin.get(
            '/os-resource-classes/CUSTOM_NOPE').status_code)

    def test_only_well_formed_new_custom_classes_are_created(self):
        for name in ('VCPU', 'custom_x', 'CUSTOM_', 'FPGA_X', 'CUSTOM_a',
                     'CUSTOM_' + 'X' * 250):
            response = self.admin.post('/os-resource-classes',
                                       json={'name': name})
            self.assertEqual(400, response.status_code, name)
        for body in ({}, {'name': 7}, {'name': None}, ['CUSTOM_X'],
                     {'name': 'CUSTOM_X', 'more': 1}, {'name': 'x' * 300}):
            response = self.admin.post('/os-resource-classes', json=body)
            self.assertEqual(400, response.status_code, body)
        self.assertEqual(201, self.admin.post(
            '/os-resource-classes', json={'name': 'CUSTOM_X'}).status_code)
        self.assertEqual(409, self.admin.post(
            '/os-resource-classes', json={'name': 'CUSTOM_X'}).status_code)
        self.assertEqual({'CUSTOM_X'}, {
            name for name, custom in self.names(
                '/os-resource-classes').items() if custom})

    def test_users_may_not_read_or_change_the_catalog(self):
        for method, path in (('GET', '/os-resource-classes'),
                             ('GET', '/os-resource-classes/VCPU'),
                             ('POST', '/os-resource-classes'),
                             ('DELETE', '/os-resource-classes/CUSTOM_X'),
                             ('GET', '/os-traits'),
                             ('GET', '/os-traits/CUSTOM_X'),
                             ('PUT', '/os-traits/CUSTOM_X'),
                             ('DELETE', '/os-traits/CUSTOM_X'),
                             ('GET', '/os-resource-providers')):
            response = self.alice.request(method, path,
                                          json={'name': 'CUSTOM_X'})
            self.assertEqual(403, response.status_code, f'{method} {path}')
        self.assertEqual([], self.admin_customs())

    def admin_customs(self):
        return [name for name, custom in self.names(
            '/os-resource-classes').items() if custom] + [
            name for name, custom in self.names('/os-traits').items()
            if custom]

    def test_a_class_in_use_is_not_deleted(self):
        self.admin.post('/os-resource-classes', json={'name': 'CUSTOM_FPGA'})
        self.create_flavor('fpga', {'resources:CUSTOM_FPGA': '1'})
        response = self.admin.delete('/os-resource-classes/CUSTOM_FPGA')
        self.assertEqual(409, response.status_code, response.text)
        self.assertIn('fpga', response.text)
        self.assertEqual(204, self.admin.delete(
            '/flavors/fpga/os-extra_specs/resources:CUSTOM_FPGA'
        ).status_code)
        self.assertEqual(204, self.admin.delete(
            '/os-resource-classes/CUSTOM_FPGA').status_code)
        self.assertEqual(404, self.admin.delete(
            '/os-resource-classes/CUSTOM_FPGA').status_code)
        self.assertEqual(400, self.admin.delete(
            '/os-resource-classes/VCPU').status_code)

    def test_a_class_a_pool_holds_is_not_deleted(self):
        self.admin.post('/os-resource-classes', json={'name': 'CUSTOM_IP'})
        pool_id = self.add_pool('ips', 'CUSTOM_IP')
        response = self.admin.delete('/os-resource-classes/CUSTOM_IP')
        self.assertEqual(409, response.status_code, response.text)
        self.assertIn('ips', response.text)
        pools = [item for item in self.admin.get(
            '/os-resource-providers?kind=pool').json()['resource_providers']]
        self.assertEqual([('ips', 'pool', 10, 0)], [
            (item['name'], item['kind'],
             item['inventories']['CUSTOM_IP']['total'],
             item['inventories']['CUSTOM_IP']['used']) for item in pools])
        self.assertEqual({'cells': ['cell1'], 'zones': []},
                         pools[0]['serves'])
        self.assertIsNotNone(pool_id)

    def add_pool(self, name, rc):
        return _add_pool(self.api.cluster.ctx, name, rc)

    # -- traits ------------------------------------------------------------

    def test_traits_are_put_listed_filtered_and_deleted(self):
        response = self.admin.request('PUT', '/os-traits/CUSTOM_SSD')
        self.assertEqual(201, response.status_code, response.text)
        self.assertEqual(204, self.admin.request(
            'PUT', '/os-traits/CUSTOM_SSD').status_code)
        listed = self.names('/os-traits')
        self.assertTrue(listed['CUSTOM_SSD'])
        self.assertFalse(listed['HW_CPU_X86_AVX2'])
        response = self.admin.get('/os-traits?name=startswith:CUSTOM_')
        self.assertEqual([{'name': 'CUSTOM_SSD', 'custom': True}],
                         response.json()['traits'])
        self.assertEqual(400, self.admin.get(
            '/os-traits?name=in:CUSTOM_SSD').status_code)
        self.assertEqual(200, self.admin.get(
            '/os-traits/HW_CPU_X86_AVX2').status_code)
        self.create_flavor('ssd', {'trait:CUSTOM_SSD': 'required'})
        self.assertEqual(409, self.admin.delete(
            '/os-traits/CUSTOM_SSD').status_code)
        self.admin.delete('/flavors/ssd/os-extra_specs/trait:CUSTOM_SSD')
        self.assertEqual(204, self.admin.delete(
            '/os-traits/CUSTOM_SSD').status_code)
        self.assertEqual(404, self.admin.get(
            '/os-traits/CUSTOM_SSD').status_code)

    def test_standard_or_malformed_traits_are_refused(self):
        for name in ('HW_CPU_X86_AVX2', 'custom_ssd', 'CUSTOM_',
                     'CUSTOM_' + 'A' * 300, 'CUSTOM_\u00e9'):
            response = self.admin.request('PUT', f'/os-traits/{name}')
            self.assertIn(response.status_code, (400, 404), name)
        self.assertEqual(400, self.admin.delete(
            '/os-traits/HW_CPU_X86_AVX2').status_code)
        self.assertEqual([], self.admin_customs())

    # -- flavor extra specs ------------------------------------------------

    def create_flavor(self, name, specs, expect=200):
        response = self.admin.post('/flavors', json={'flavor': {
            'name': name, 'id': name, 'vcpus': 1, 'ram': 64, 'disk': 0,
            'extra_specs': specs}})
        self.assertEqual(expect, response.status_code, response.text)
        return response

    def test_a_flavor_carries_its_extra_specs_into_the_request_spec(self):
        self.admin.post('/os-resource-classes', json={'name': 'CUSTOM_FPGA'})
        self.admin.request('PUT', '/os-traits/CUSTOM_SSD')
        specs = {'resources:CUSTOM_FPGA': '1', 'resources:VCPU': '2',
                 'trait:CUSTOM_SSD': 'required',
                 'trait:HW_CPU_X86_AVX2': 'forbidden',
                 'hw:cpu_policy': 'dedicated'}
        created = self.create_flavor('fpga', specs).json()['flavor']
        self.assertEqual(specs, created['extra_specs'])
        self.assertEqual(specs, self.alice.get('/flavors/fpga').json()[
            'flavor']['extra_specs'])
        listed = {item['id']: item['extra_specs'] for item in
                  self.alice.get('/flavors').json()['flavors']}
        self.assertEqual(specs, listed['fpga'])
        self.assertEqual({}, listed['small'])
        response = self.alice.boot(flavor='fpga')
        self.assertEqual(202, response.status_code, response.text)
        uuid = response.json()['server']['id']
        spec = request_spec.RequestSpec.get_by_instance_uuid(
            self.api.cluster.ctx, uuid)
        self.assertEqual(specs, spec.spec['flavor']['extra_specs'])

    def test_bad_extra_specs_are_refused_naming_the_key(self):
        self.admin.request('PUT', '/os-traits/CUSTOM_SSD')
        for key, value in (('resources:CUSTOM_NOPE', '1'),
                           ('resources:NOT_A_CLASS', '1'),
                           ('resources:VCPU', '-1'),
                           ('resources:VCPU', 'one'),
                           ('resources:VCPU', '1.5'),
                           ('resources:VCPU', '9' * 20),
                           ('trait:CUSTOM_SSD', 'preferred'),
                           ('trait:CUSTOM_NOPE', 'required'),
                           ('trait:lower', 'required')):
            response = self.create_flavor('bad', {key: value}, expect=400)
            self.assertIn(key, response.text)
        for specs in ({'k': 1}, {'k': None}, {'k': ['v']}, ['k'],
                      {'k' * 256: 'v'}, {'k': 'v' * 256}, {'': 'v'},
                      {f'k{i}': 'v' for i in range(101)}, {'k': 'a\x00b'}):
            self.create_flavor('bad', specs, expect=400)
        self.assertEqual(404, self.alice.get('/flavors/bad').status_code)

    def test_extra_specs_are_set_shown_and_removed(self):
        self.create_flavor('f', {'a': '1'})
        base_path = '/flavors/f/os-extra_specs'
        response = self.admin.post(base_path, json={'extra_specs': {
            'b': '2', 'resources:VGPU': '1'}})
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual({'a': '1', 'b': '2', 'resources:VGPU': '1'},
                         self.alice.get(base_path).json()['extra_specs'])
        self.assertEqual({'b': '2'},
                         self.alice.get(base_path + '/b').json())
        response = self.admin.request('PUT', base_path + '/b',
                                      json={'b': '3'})
        self.assertEqual((200, {'b': '3'}),
                         (response.status_code, response.json()))
        for body in ({'c': '3'}, {'b': '3', 'c': '4'}, {'b': 3}, {}):
            self.assertEqual(400, self.admin.request(
                'PUT', base_path + '/b', json=body).status_code, body)
        self.assertEqual(400, self.admin.post(base_path, json={
            'extra_specs': {'resources:VGPU': 'x'}}).status_code)
        self.assertEqual(204, self.admin.delete(base_path + '/a').status_code)
        self.assertEqual(404, self.admin.delete(base_path + '/a').status_code)
        self.assertEqual(404, self.alice.get(base_path + '/a').status_code)
        self.assertEqual({'b': '3', 'resources:VGPU': '1'},
                         self.alice.get(base_path).json()['extra_specs'])

    def test_extra_specs_of_an_unknown_flavor_or_by_a_user(self):
        self.create_flavor('f', {'a': '1'})
        for method, path in (('GET', '/flavors/nope/os-extra_specs'),
                             ('GET', '/flavors/nope/os-extra_specs/a'),
                             ('DELETE', '/flavors/nope/os-extra_specs/a')):
            self.assertEqual(404, self.admin.request(method, path)
                             .status_code, path)
        self.assertEqual(404, self.admin.post(
            '/flavors/nope/os-extra_specs',
            json={'extra_specs': {'a': '1'}}).status_code)
        for method, path, body in (
                ('POST', '/flavors/f/os-extra_specs',
                 {'extra_specs': {'a': '2'}}),
                ('PUT', '/flavors/f/os-extra_specs/a', {'a': '2'}),
                ('DELETE', '/flavors/f/os-extra_specs/a', None)):
            self.assertEqual(403, self.alice.request(
                method, path, json=body).status_code, f'{method} {path}')
        self.assertEqual({'a': '1'}, self.alice.get(
            '/flavors/f/os-extra_specs').json()['extra_specs'])
        # At most 100 keys in all, counting those already set.
        response = self.admin.post('/flavors/f/os-extra_specs', json={
            'extra_specs': {f'k{i}': 'v' for i in range(100)}})
        self.assertEqual(400, response.status_code, response.text)

    # -- providers ---------------------------------------------------------

    def test_providers_list_the_hosts_with_their_cell(self):
        response = self.admin.get('/os-resource-providers?kind=host')
        self.assertEqual(200, response.status_code, response.text)
        hosts = response.json()['resource_providers']
        self.assertEqual(1, len(hosts))
        host = hosts[0]
        self.assertEqual(('host', 'cell1'), (host['kind'], host['cell']))
        self.assertGreater(host['inventories']['VCPU']['total'], 0)
        self.assertEqual([], response.json()['unreachable'])
        for query in ('kind=disk', 'cell=nope', 'limit=0', 'kind=' + 'x' * 99):
            self.assertEqual(400, self.admin.get(
                f'/os-resource-providers?{query}').status_code, query)
        self.assertEqual(hosts, self.admin.get(
            '/os-resource-providers?cell=cell1&kind=host').json()[
                'resource_providers'])
