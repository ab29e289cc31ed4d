"""``cellboot-manage provider trait show|add|remove|set``."""

from oslo_utils import uuidutils

from cellboot.scheduler.resources import provider_traits
from cellboot.scheduler.resources import providers
from tests import base as test_base
from tests.functional.cmd import base


class _ProviderTraitTests:

    def setUp(self):
        super().setUp()
        self.map_cell1()
        self.uuid = uuidutils.generate_uuid()
        providers.update_provider(self.context, self.uuid, 'host1', {
            'VCPU': {'total': 8, 'max_unit': 8}})
        self.assertSucceeded(self.manage('trait', 'create', 'CUSTOM_SSD'))

    def traits(self):
        return provider_traits.get_traits(self.context).get(self.uuid, [])

    def test_add_remove_set_by_name_or_uuid(self):
        result = self.manage('provider', 'trait', 'add', 'host1',
                             'CUSTOM_SSD', 'HW_CPU_X86_AVX2')
        self.assertSucceeded(result)
        self.assertIn('CUSTOM_SSD, HW_CPU_X86_AVX2', result.stdout)
        self.assertEqual(['CUSTOM_SSD', 'HW_CPU_X86_AVX2'], self.traits())
        self.assertSucceeded(self.manage('provider', 'trait', 'remove',
                                         self.uuid, 'CUSTOM_SSD',
                                         'HW_CPU_X86_SSE'))
        self.assertEqual(['HW_CPU_X86_AVX2'], self.traits())
        self.assertSucceeded(self.manage('provider', 'trait', 'set', 'host1',
                                         'CUSTOM_SSD'))
        self.assertEqual(['CUSTOM_SSD'], self.traits())
        result = self.manage('provider', 'trait', 'show', 'host1')
        self.assertSucceeded(result)
        self.assertIn('CUSTOM_SSD', result.stdout)
        self.assertIn('cell1', result.stdout)
        self.assertSucceeded(self.manage('provider', 'trait', 'set',
                                         'host1'))
        self.assertEqual([], self.traits())

    def test_bad_input_exits_1_and_changes_nothing(self):
        self.assertSucceeded(self.manage('provider', 'trait', 'set', 'host1',
                                         'CUSTOM_SSD'))
        for args, fragment in (
                (['add', 'host1', 'CUSTOM_NEVER_CREATED'],
                 'CUSTOM_NEVER_CREATED'),
                (['add', 'host1', 'ssd'], 'ssd'),
                (['set', 'host1', 'HW_NO_SUCH_TRAIT'], 'HW_NO_SUCH_TRAIT'),
                (['add', 'nohost', 'CUSTOM_SSD'], 'nohost'),
                (['show', uuidutils.generate_uuid()], 'could not be found'),
                (['add', 'host1', 'CUSTOM_' + 'X' * 300], 'CUSTOM_')):
            self.assertOneLineError(self.manage('provider', 'trait', *args),
                                    1, fragment)
        self.assertEqual(2, self.manage('provider', 'trait', 'add',
                                        'host1').code)
        self.assertEqual(2, self.manage('provider', 'trait', 'flip', 'host1',
                                        'CUSTOM_SSD').code)
        self.assertEqual(['CUSTOM_SSD'], self.traits())


class SQLiteProviderTraitTest(_ProviderTraitTests, test_base.SQLiteMixin,
                              base.ManageTestCase):
    pass


class PostgreSQLProviderTraitTest(_ProviderTraitTests,
                                  test_base.PostgreSQLMixin,
                                  base.ManageTestCase):
    pass
