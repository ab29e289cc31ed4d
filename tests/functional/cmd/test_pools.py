"""``pool create | list | show | delete``: shared resource pools."""

from oslo_utils import uuidutils

from cellboot.scheduler.pools import claims as pool_claims
from cellboot.scheduler.pools import records
from tests import base as test_base
from tests.functional.cmd import base


class _PoolCommandTests:

    def setUp(self):
        super().setUp()
        self.map_cell1()
        self.map_cell1(name='cell2')

    def create(self, *extra):
        return self.manage('pool', 'create', 'shared', '--inventory',
                           'DISK_GB=1000', *extra)

    def test_create_list_show_delete(self):
        result = self.create('--reserved', 'DISK_GB=100',
                             '--allocation-ratio', 'DISK_GB=1.5',
                             '--trait', 'CUSTOM_FAST', '--cell', 'cell1',
                             '--cell', 'cell2')
        self.assertSucceeded(result)
        pool = records.get_pool(self.context, 'shared')
        self.assertEqual(pool['uuid'], result.stdout.strip())
        self.assertEqual({'DISK_GB': 1350}, pool['capacity'])
        self.assertEqual(['cell1', 'cell2'], pool['cells'])
        listed = self.manage('pool', 'list')
        self.assertSucceeded(listed)
        self.assertIn('DISK_GB 0/1350', listed.stdout)
        shown = self.manage('pool', 'show', 'shared')
        self.assertSucceeded(shown)
        self.assertIn('CUSTOM_FAST', shown.stdout)
        self.assertSucceeded(self.manage('pool', 'delete', pool['uuid']))
        self.assertEqual([], records.list_pools(self.context))

    def test_bad_input_exits_1_and_writes_nothing(self):
        before = self.api_snapshot()
        for extra, words in (
                (['--cell', 'nowhere'], 'nowhere'),
                (['--zone', 'nowhere'], 'nowhere'),
                ([], 'at least one cell or zone'),
                (['--cell', 'cell1', '--inventory', 'VCPUS=1'], 'VCPUS'),
                (['--cell', 'cell1', '--inventory', 'CUSTOM_X=-1'],
                 'total'),
                (['--cell', 'cell1', '--inventory', f'CUSTOM_X={2 ** 40}'],
                 'at most'),
                (['--cell', 'cell1', '--inventory', 'CUSTOM_X=many'],
                 '--inventory'),
                (['--cell', 'cell1', '--reserved', 'VCPU=1'],
                 'no --inventory'),
                (['--cell', 'cell1', '--trait', 'lower'], 'not a trait')):
            result = self.create(*extra)
            self.assertOneLineError(result, 1, *words.split('|'))
        self.assertEqual(before, self.api_snapshot())

    def test_duplicate_exits_2(self):
        self.assertSucceeded(self.create('--cell', 'cell1'))
        self.assertOneLineError(self.create('--cell', 'cell1'), 2,
                                'shared')

    def test_unknown_pool_exits_1(self):
        for command in ('show', 'delete'):
            self.assertOneLineError(self.manage('pool', command, 'nope'),
                                    1, 'nope')

    def test_delete_in_use_exits_3(self):
        pool = records.create_pool(self.context, 'shared',
                                   {'DISK_GB': {'total': 10}},
                                   cells=['cell1'])
        pool_claims.claim(self.context, uuidutils.generate_uuid(), [
            {'uuid': pool['uuid'], 'resources': {'DISK_GB': 5}}])
        self.assertOneLineError(self.manage('pool', 'delete', 'shared'), 3,
                                'shared')
        self.assertEqual(1, len(records.list_pools(self.context)))


class SQLitePoolCommandTest(_PoolCommandTests, test_base.SQLiteMixin,
                            base.ManageTestCase):
    pass


class MySQLPoolCommandTest(_PoolCommandTests, test_base.MySQLMixin,
                           base.ManageTestCase):
    pass
