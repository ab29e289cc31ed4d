"""``cellboot-manage resource_class | trait | provider``."""

from oslo_utils import uuidutils

from cellboot.objects import flavor as flavor_obj
from cellboot.scheduler.resources import providers
from tests import base as test_base
from tests.functional.cmd import base
from tests.functional.cmd.test_flavor import table_rows


class _CatalogTests:

    def names(self, group, *more):
        result = self.manage(group, 'list', *more)
        self.assertSucceeded(result)
        return {row[0]: row[1] for row in table_rows(result.stdout)}

    def test_custom_classes_are_created_listed_and_deleted(self):
        result = self.manage('resource_class', 'create', 'CUSTOM_FPGA')
        self.assertSucceeded(result)
        listed = self.names('resource_class')
        self.assertEqual(('standard', 'custom'),
                         (listed['VCPU'], listed['CUSTOM_FPGA']))
        self.assertEqual({'CUSTOM_FPGA': 'custom'},
                         self.names('resource_class', '--custom-only'))
        self.assertOneLineError(self.manage(
            'resource_class', 'create', 'CUSTOM_FPGA'), 2, 'CUSTOM_FPGA')
        self.assertSucceeded(self.manage('resource_class', 'delete',
                                         'CUSTOM_FPGA'))
        self.assertEqual({}, self.names('resource_class', '--custom-only'))

    def test_bad_names_exit_1_and_write_nothing(self):
        before = self.api_snapshot()
        for group in ('resource_class', 'trait'):
            for name, fragment in (('VCPU' if group == 'resource_class'
                                    else 'HW_CPU_X86_AVX2', 'standard'),
                                   ('custom_x', 'not a custom'),
                                   ('CUSTOM_' + 'X' * 300, 'not a custom')):
                self.assertOneLineError(
                    self.manage(group, 'create', name), 1, fragment)
            self.assertOneLineError(
                self.manage(group, 'delete', 'CUSTOM_NONE'), 1, 'CUSTOM_NONE')
        self.assertOneLineError(self.manage(
            'trait', 'delete', 'HW_CPU_X86_AVX2'), 1, 'standard')
        self.assertEqual(before, self.api_snapshot())

    def test_a_name_a_flavor_uses_is_not_deleted(self):
        self.manage('resource_class', 'create', 'CUSTOM_FPGA')
        self.manage('trait', 'create', 'CUSTOM_SSD')
        flavor_obj.Flavor.create(self.context, 'fpga', 1, 512, extra_specs={
            'resources:CUSTOM_FPGA': '2', 'trait:CUSTOM_SSD': 'forbidden'})
        before = self.api_snapshot()
        self.assertOneLineError(self.manage(
            'resource_class', 'delete', 'CUSTOM_FPGA'), 3, 'fpga')
        self.assertOneLineError(self.manage(
            'trait', 'delete', 'CUSTOM_SSD'), 3, 'fpga')
        self.assertEqual(before, self.api_snapshot())

    def test_provider_list_shows_the_cells_hosts(self):
        self.map_cell1()
        uuid = uuidutils.generate_uuid()
        providers.update_provider(self.context, uuid, 'host1', {
            'VCPU': {'total': 8, 'max_unit': 8}}, availability_zone='az9')
        result = self.manage('provider', 'list')
        self.assertSucceeded(result)
        self.assertEqual([['host', 'host1', uuid, 'cell1', 'az9',
                           'VCPU 0/8', '']], table_rows(result.stdout))
        result = self.manage('provider', 'list', '--kind', 'pool')
        self.assertEqual([], table_rows(result.stdout))
        self.assertOneLineError(self.manage(
            'provider', 'list', '--cell', 'nope'), 1, 'nope')
        result = self.manage('provider', 'list', '--kind', 'disk')
        self.assertEqual(2, result.code)


class SQLiteCatalogTest(_CatalogTests, test_base.SQLiteMixin,
                        base.ManageTestCase):
    pass


class PostgreSQLCatalogTest(_CatalogTests, test_base.PostgreSQLMixin,
                            base.ManageTestCase):
    pass
