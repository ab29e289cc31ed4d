"""``cellboot-manage quota show | update | delete``."""

from oslo_utils import uuidutils

from cellboot.objects import instance_mapping
from cellboot.objects import quota as quota_obj
from tests import base as test_base
from tests.functional.cmd import base
from tests.functional.cmd import test_flavor


class _QuotaTests:

    def test_show_prints_the_defaults_and_the_usage(self):
        for vcpus in (1, 2):
            instance_mapping.InstanceMapping.create(
                self.context, uuidutils.generate_uuid(), 'p1', vcpus=vcpus,
                memory_mb=512)
        result = self.manage('quota', 'show', 'p1')
        self.assertSucceeded(result)
        self.assertEqual([['instances', '10', '2', 'default'],
                          ['cores', '20', '3', 'default'],
                          ['ram', '51200', '1024', 'default']],
                         test_flavor.table_rows(result.stdout))

    def test_show_reads_the_defaults_of_the_configuration_file(self):
        config = self.write_config('[quota]\ninstances = 3\n',
                                   name='quota.conf')
        result = self.manage('quota', 'show', 'p1', config_file=config)
        self.assertSucceeded(result)
        self.assertEqual(['instances', '3', '0', 'default'],
                         test_flavor.table_rows(result.stdout)[0])

    def test_update_sets_some_limits_and_prints_them_all(self):
        result = self.manage('quota', 'update', 'p1', '--instances', '4',
                             '--ram', '-1')
        self.assertSucceeded(result)
        self.assertEqual({'instances': 4, 'ram': -1},
                         quota_obj.get_limits(self.context, 'p1'))
        self.assertEqual([['instances', '4', '0', 'project'],
                          ['cores', '20', '0', 'default'],
                          ['ram', 'unlimited', '0', 'project']],
                         test_flavor.table_rows(result.stdout))

    def test_update_again_changes_only_what_it_names(self):
        self.manage('quota', 'update', 'p1', '--instances', '4', '--cores',
                    '8')
        self.manage('quota', 'update', 'p1', '--cores', '16')
        self.assertEqual({'instances': 4, 'cores': 16},
                         quota_obj.get_limits(self.context, 'p1'))

    def test_delete_gives_the_defaults_back(self):
        self.manage('quota', 'update', 'p1', '--instances', '4')
        result = self.manage('quota', 'delete', 'p1')
        self.assertSucceeded(result)
        self.assertEqual({}, quota_obj.get_limits(self.context, 'p1'))
        self.assertEqual(['instances', '10', '0', 'default'],
                         test_flavor.table_rows(result.stdout)[0])

    def test_bad_limits_exit_1_in_one_line_and_write_nothing(self):
        for args, fragment in (
                (('--cores', '-2'), 'cores'),
                (('--ram', str(2 ** 31)), 'ram'),
                ((), 'at least one'),
                (('--instances', '2'), 'project id')):
            project = 'p' * 256 if fragment == 'project id' else 'p1'
            result = self.manage('quota', 'update', project, *args)
            self.assertOneLineError(result, 1, fragment)
        self.assertEqual({}, quota_obj.get_limits(self.context, 'p1'))

    def test_class_limits_for_allocation_requests(self):
        result = self.manage('quota', 'update', 'p1', '--class',
                             'DISK_GB=500', '--class', 'VGPU=-1')
        self.assertSucceeded(result)
        self.assertEqual({'DISK_GB': 500, 'VGPU': -1},
                         quota_obj.get_limits(self.context, 'p1'))
        self.assertEqual([['DISK_GB', '500', '0', 'project'],
                          ['VGPU', 'unlimited', '0', 'project']],
                         test_flavor.table_rows(result.stdout)[3:])

    def test_bad_class_limits_exit_1_and_write_nothing(self):
        for value, fragment in (('DISK_GB', 'CLASS=N'),
                                ('DISK_GB=lots', 'CLASS=N'),
                                ('disk=5', 'unknown quota'),
                                ('CUSTOM_NOPE=5', 'no such resource class'),
                                ('DISK_GB=-2', 'DISK_GB')):
            result = self.manage('quota', 'update', 'p1', '--class', value)
            self.assertOneLineError(result, 1, fragment)
        self.assertEqual({}, quota_obj.get_limits(self.context, 'p1'))

    def test_a_limit_that_is_not_a_number_is_a_usage_error(self):
        for value in ('many', '1.5', ''):
            result = self.manage('quota', 'update', 'p1', '--instances',
                                 value)
            self.assertOneLineError(result, 2, '--instances')
        self.assertEqual({}, quota_obj.get_limits(self.context, 'p1'))


class SQLiteQuotaTest(_QuotaTests, test_base.SQLiteMixin,
                      base.ManageTestCase):
    pass


class MySQLQuotaTest(_QuotaTests, test_base.MySQLMixin, base.ManageTestCase):
    pass
