"""``cell_v2 map_cell0 | create_cell | list_cells | delete_cell``."""

import os

import sqlalchemy as sa

from cellboot import context as cb_context
from cellboot.objects import cell_mapping
from cellboot.objects import host_mapping
from cellboot.objects import instance_mapping
from cellboot.scheduler import aggregate
from tests import base as test_base
from tests.functional.cmd import base

CellMapping = cell_mapping.CellMapping


def expected_cell0_url(api_url):
    url = sa.engine.make_url(api_url)
    if url.get_backend_name() == 'sqlite':
        root, ext = os.path.splitext(url.database)
        return url.set(database=f'{root}_cell0{ext}').render_as_string(
            hide_password=False)
    return url.set(database=url.database + '_cell0').render_as_string(
        hide_password=False)


class _MapCell0Tests:

    def test_map_cell0_uses_the_given_database(self):
        result = self.manage('cell_v2', 'map_cell0', '--database_connection',
                             self.cell0_url)
        self.assertSucceeded(result)
        cell0 = CellMapping.get_by_uuid(self.context, cell_mapping.CELL0_UUID)
        self.assertEqual(self.cell0_url, cell0.database_connection)
        self.assertEqual('cell0', cell0.name)

    def test_map_cell0_defaults_to_the_api_database_suffixed_cell0(self):
        expected = expected_cell0_url(self.api_url)
        if self.BACKEND != 'sqlite':
            # A server database must exist before it can be mapped.
            self._database('cell', name=sa.engine.make_url(expected).database)
        result = self.manage('cell_v2', 'map_cell0')
        self.assertSucceeded(result)
        cell0 = CellMapping.get_by_uuid(self.context, cell_mapping.CELL0_UUID)
        self.assertEqual(expected, cell0.database_connection)

    def test_map_cell0_twice_keeps_the_first_mapping(self):
        self.manage('cell_v2', 'map_cell0', '--database_connection',
                    self.cell0_url)
        result = self.manage('cell_v2', 'map_cell0', '--database_connection',
                             self.cell1_url)
        self.assertSucceeded(result)
        self.assertIn('already mapped', result.stdout)
        cells = CellMapping.get_all(self.context)
        self.assertEqual([self.cell0_url],
                         [cell.database_connection for cell in cells])


class _CreateCellTests:

    def test_create_cell_prints_the_uuid_of_the_new_cell(self):
        result = self.manage('cell_v2', 'create_cell', '--name', 'cell1',
                             '--database_connection', self.cell1_url,
                             '--transport-url', base.RABBIT_URL)
        self.assertSucceeded(result)
        cell = CellMapping.get_by_name(self.context, 'cell1')
        self.assertEqual(cell.uuid, result.stdout.strip())
        self.assertEqual(self.cell1_url, cell.database_connection)
        self.assertEqual(base.RABBIT_URL, cell.transport_url)
        self.assertFalse(cell.disabled)

    def test_create_cell_defaults_to_the_local_database_connection(self):
        result = self.manage('cell_v2', 'create_cell', '--name', 'cell1',
                             '--transport-url', base.RABBIT_URL)
        self.assertSucceeded(result)
        cell = CellMapping.get_by_name(self.context, 'cell1')
        self.assertEqual(self.cell1_url, cell.database_connection)

    def test_create_cell_has_no_default_transport_url(self):
        config = self.write_config(name='rabbit.conf', extra=f"""
            [DEFAULT]
            transport_url = {base.RABBIT_URL}
            """)
        result = self.manage('cell_v2', 'create_cell', '--name', 'cell1',
                             config_file=config)
        self.assertOneLineError(result, 1, '--transport-url',
                                '--allow-shared-transport')
        self.assertEqual([], CellMapping.get_all(self.context))

    def test_allow_shared_transport_defaults_to_the_api_transport(self):
        config = self.write_config(name='rabbit.conf', extra=f"""
            [DEFAULT]
            transport_url = {base.RABBIT_URL}
            """)
        result = self.manage('cell_v2', 'create_cell', '--name', 'cell1',
                             '--allow-shared-transport', config_file=config)
        self.assertSucceeded(result)
        self.assertEqual(base.RABBIT_URL, CellMapping.get_by_name(
            self.context, 'cell1').transport_url)

    def test_create_cell_disabled(self):
        self.manage('cell_v2', 'create_cell', '--name', 'cell1',
                    '--transport-url', base.RABBIT_URL, '--disabled')
        self.assertTrue(CellMapping.get_by_name(self.context,
                                                'cell1').disabled)

    def test_create_cell_verbose_prints_the_mapping_masked(self):
        result = self.manage('cell_v2', 'create_cell', '--name', 'cell1',
                             '--transport-url', base.RABBIT_URL, '--verbose')
        self.assertSucceeded(result)
        self.assertIn('cell1', result.stdout)
        self.assertIn('rabbit://guest:***@127.0.0.1:5672/', result.stdout)


class _ListCellsTests:

    DB_SECRET = 'dbS3cret'
    MQ_SECRETS = ('mqS3cretOne', 'mqS3cretTwo')

    def map_cell_with_passwords(self):
        return self.map_cell1(
            name='cell2',
            url=f'mysql+pymysql://cb:{self.DB_SECRET}@db.example/cell2',
            transport_url=(f'rabbit://cb:{self.MQ_SECRETS[0]}@mq1:5672,'
                           f'cb:{self.MQ_SECRETS[1]}@mq2:5672/'))

    def test_list_cells_shows_every_cell_cell0_first(self):
        self.map_cell1()
        self.map_cell0()
        result = self.manage('cell_v2', 'list_cells')
        self.assertSucceeded(result)
        names = [line.split('|')[1].strip()
                 for line in result.stdout.splitlines()
                 if line.startswith('|')]
        self.assertEqual(['Name', 'cell0', 'cell1'], names)

    def test_list_cells_masks_every_password(self):
        self.map_cell_with_passwords()
        result = self.manage('cell_v2', 'list_cells')
        self.assertSucceeded(result)
        for secret in (self.DB_SECRET,) + self.MQ_SECRETS:
            self.assertNotIn(secret, result.stdout)
        self.assertIn('mysql+pymysql://cb:***@db.example/cell2',
                      result.stdout)
        self.assertIn('rabbit://cb:***@mq1:5672,cb:***@mq2:5672/',
                      result.stdout)

    def test_list_cells_verbose_counts_hosts_and_instances(self):
        cell = self.map_cell1()
        host_mapping.HostMapping.create(self.context, 'compute1', cell.uuid)
        result = self.manage('cell_v2', 'list_cells', '--verbose')
        self.assertSucceeded(result)
        header, row = [line for line in result.stdout.splitlines()
                       if line.startswith('|')]
        self.assertIn('Hosts', header)
        # Hosts, instances; then the aggregate: no scheduler of cell1 ran.
        self.assertEqual(['1', '0', 'no scheduler', '', '', ''],
                         [value.strip() for value in row.split('|')[-7:-1]])

    def test_list_cells_verbose_shows_the_cells_aggregate(self):
        cell = self.map_cell1()
        with cb_context.target_cell(self.context, cell) as cctxt:
            aggregate.publish(cctxt, 'scheduler-1', {
                'hosts': 2, 'up_hosts': 1, 'zones': ['nova'],
                'computed_at': 1.0, 'resources': {'VCPU': {
                    'capacity': 16.0, 'free': 12.0, 'max_free': 8.0}}})
        result = self.manage('cell_v2', 'list_cells', '--verbose')
        self.assertSucceeded(result)
        _header, row = [line for line in result.stdout.splitlines()
                        if line.startswith('|')]
        up, free, other, traits = [value.strip()
                                   for value in row.split('|')[-5:-1]]
        self.assertEqual((True, 'VCPU 12 (one host 8)', '', ''),
                         (up.startswith('1 of 2, '), free, other, traits))

    def test_list_cells_verbose_shows_other_classes_and_traits(self):
        cell = self.map_cell1()
        with cb_context.target_cell(self.context, cell) as cctxt:
            aggregate.publish(cctxt, 'scheduler-1', {
                'hosts': 2, 'up_hosts': 2, 'zones': ['nova'],
                'computed_at': 1.0, 'resources': {
                    'VCPU': {'capacity': 16.0, 'free': 12.0,
                             'max_free': 8.0},
                    'CUSTOM_FPGA': {'capacity': 2.0, 'free': 1.0,
                                    'max_free': 1.0},
                    'VGPU': {'capacity': 4.0, 'free': 4.0,
                             'max_free': 4.0}},
                'traits': {'CUSTOM_SSD': 1, 'HW_CPU_X86_AVX2': 2,
                           'HW_CPU_X86_SSE': 2, 'CUSTOM_RACK_A': 1}})
        result = self.manage('cell_v2', 'list_cells', '--verbose')
        self.assertSucceeded(result)
        header, row = [line for line in result.stdout.splitlines()
                       if line.startswith('|')]
        self.assertIn('Other (free)', header)
        free, other, traits = [value.strip()
                               for value in row.split('|')[-4:-1]]
        self.assertEqual(
            ('VCPU 12 (one host 8)',
             'CUSTOM_FPGA 1 (one host 1), VGPU 4 (one host 4)',
             'HW_CPU_X86_AVX2 2, HW_CPU_X86_SSE 2, CUSTOM_RACK_A 1, '
             '+1 more'), (free, other, traits))


class _DeleteCellTests:

    def test_delete_cell_removes_an_empty_cell(self):
        cell = self.map_cell1()
        result = self.manage('cell_v2', 'delete_cell', '--cell_uuid',
                             cell.uuid)
        self.assertSucceeded(result)
        self.assertEqual([], CellMapping.get_all(self.context))

    def test_delete_cell_refuses_while_hosts_are_mapped(self):
        cell = self.map_cell1()
        host_mapping.HostMapping.create(self.context, 'compute1', cell.uuid)
        before = self.api_snapshot()
        result = self.manage('cell_v2', 'delete_cell', '--cell_uuid',
                             cell.uuid)
        self.assertOneLineError(result, 3, '1 mapped host')
        self.assertEqual(before, self.api_snapshot())

    def test_delete_cell_refuses_while_instances_are_mapped(self):
        cell = self.map_cell1()
        instance_mapping.InstanceMapping.create(
            self.context, 'a8f5dc56-3f0e-4a6e-9c1e-2f6b8f0c1d11', 'project',
            cell_uuid=cell.uuid)
        before = self.api_snapshot()
        result = self.manage('cell_v2', 'delete_cell', '--cell_uuid',
                             cell.uuid)
        self.assertOneLineError(result, 4, '1 mapped instance')
        self.assertEqual(before, self.api_snapshot())

    def test_delete_cell_force_removes_its_host_and_instance_mappings(self):
        cell = self.map_cell1()
        other = self.map_cell1(name='cell2', url=self.cell0_url)
        host_mapping.HostMapping.create(self.context, 'compute1', cell.uuid)
        host_mapping.HostMapping.create(self.context, 'compute2', other.uuid)
        instance_mapping.InstanceMapping.create(
            self.context, 'a8f5dc56-3f0e-4a6e-9c1e-2f6b8f0c1d11', 'project',
            cell_uuid=cell.uuid)
        result = self.manage('cell_v2', 'delete_cell', '--cell_uuid',
                             cell.uuid, '--force')
        self.assertSucceeded(result)
        self.assertEqual(['cell2'], [cell.name for cell in
                                     CellMapping.get_all(self.context)])
        self.assertEqual(['compute2'], [mapping.host for mapping in
                                        host_mapping.HostMapping.get_all(
                                            self.context)])
        self.assertEqual(0, instance_mapping.InstanceMapping.count_by_cell(
            self.context, cell.uuid))

    def test_delete_cell_accepts_the_cell_name(self):
        self.map_cell1()
        result = self.manage('cell_v2', 'delete_cell', '--cell_uuid',
                             'cell1')
        self.assertSucceeded(result)
        self.assertEqual([], CellMapping.get_all(self.context))

    def test_delete_cell_refuses_cell0_without_force(self):
        self.map_cell0()
        result = self.manage('cell_v2', 'delete_cell', '--cell_uuid',
                             cell_mapping.CELL0_UUID)
        self.assertOneLineError(result, 5, 'cell0')
        self.assertEqual(1, len(CellMapping.get_all(self.context)))

    def test_delete_cell_deletes_cell0_with_force(self):
        self.map_cell0()
        result = self.manage('cell_v2', 'delete_cell', '--cell_uuid',
                             cell_mapping.CELL0_UUID, '--force')
        self.assertSucceeded(result)
        self.assertEqual([], CellMapping.get_all(self.context))


class _CellMappingTests(_MapCell0Tests, _CreateCellTests, _ListCellsTests,
                        _DeleteCellTests):
    pass


class SQLiteCellMappingTest(_CellMappingTests, test_base.SQLiteMixin,
                            base.ManageTestCase):
    pass


class MySQLCellMappingTest(_CellMappingTests, test_base.MySQLMixin,
                           base.ManageTestCase):
    pass
