"""The traits of a cell's resource providers: written, read, announced."""

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.scheduler.resources import changes
from cellboot.scheduler.resources import provider_traits
from cellboot.scheduler.resources import providers
from tests import base
from tests.functional.scheduler import resources_base as rb


class _ProviderTraitsTests:

    def setUp(self):
        super().setUp()
        self.uuid = self.create_provider(name='host1')

    def traits(self, uuid=None):
        return provider_traits.get_traits(self.ctx, [uuid or self.uuid]).get(
            uuid or self.uuid, [])

    def test_set_add_remove(self):
        self.assertEqual(['CUSTOM_B', 'HW_CPU_X86_AVX2'],
                         provider_traits.set_traits(
                             self.ctx, self.uuid,
                             ['HW_CPU_X86_AVX2', 'CUSTOM_B', 'CUSTOM_B']))
        provider_traits.add_traits(self.ctx, self.uuid, ['CUSTOM_C'])
        provider_traits.remove_traits(self.ctx, self.uuid,
                                      ['CUSTOM_B', 'CUSTOM_ABSENT'])
        self.assertEqual(['CUSTOM_C', 'HW_CPU_X86_AVX2'], self.traits())
        self.assertEqual([], provider_traits.set_traits(self.ctx, self.uuid,
                                                        []))
        self.assertEqual([], self.traits())

    def test_a_bad_name_writes_nothing(self):
        provider_traits.set_traits(self.ctx, self.uuid, ['CUSTOM_KEEP'])
        for bad in (['CUSTOM_OK', 'lower_case'], ['CUSTOM_' + 'A' * 300],
                    [None], [7], 'CUSTOM_A_STRING', {'CUSTOM_A': 1}):
            self.assertRaises(exception.Invalid, provider_traits.set_traits,
                              self.ctx, self.uuid, bad)
        self.assertEqual(['CUSTOM_KEEP'], self.traits())

    def test_too_many_traits_are_refused(self):
        many = [f'CUSTOM_T{i}'
                for i in range(provider_traits.MAX_PER_PROVIDER + 1)]
        exc = self.assertRaises(exception.Invalid, provider_traits.set_traits,
                                self.ctx, self.uuid, many)
        self.assertIn('at most', str(exc))
        self.assertEqual([], self.traits())

    def test_an_unknown_provider(self):
        self.assertRaises(exception.ResourceProviderNotFound,
                          provider_traits.add_traits, self.ctx,
                          uuidutils.generate_uuid(), ['CUSTOM_A'])

    def test_a_report_with_traits_replaces_them_and_none_keeps_them(self):
        providers.update_provider(self.ctx, self.uuid, 'host1',
                                  rb.HOST_INVENTORY, traits=['CUSTOM_A'])
        providers.update_provider(self.ctx, self.uuid, 'host1',
                                  rb.HOST_INVENTORY)
        self.assertEqual(['CUSTOM_A'],
                         providers.get_provider(self.ctx,
                                                self.uuid)['traits'])

    def test_a_report_with_a_bad_trait_writes_nothing(self):
        self.assertRaises(exception.Invalid, providers.update_provider,
                          self.ctx, self.uuid, 'host1',
                          {'VCPU': {'total': 1}}, traits=['not a trait'])
        self.assertEqual(rb.HOST_INVENTORY['VCPU']['total'],
                         providers.get_provider(
                             self.ctx, self.uuid)['inventories']['VCPU'][
                                 'total'])

    def test_a_change_is_announced_and_a_no_op_is_not(self):
        before = changes.tail(self.ctx)
        provider_traits.add_traits(self.ctx, self.uuid, ['CUSTOM_A'])
        middle = changes.tail(self.ctx)
        provider_traits.add_traits(self.ctx, self.uuid, ['CUSTOM_A'])
        providers.update_provider(self.ctx, self.uuid, 'host1',
                                  rb.HOST_INVENTORY, traits=['CUSTOM_A'])
        self.assertEqual((before + 1, middle),
                         (middle, changes.tail(self.ctx)))

    def test_deleting_the_provider_deletes_its_traits(self):
        provider_traits.set_traits(self.ctx, self.uuid, ['CUSTOM_A'])
        providers.delete_provider(self.ctx, self.uuid)
        self.assertEqual({}, provider_traits.get_traits(self.ctx))


class SQLiteProviderTraitsTest(_ProviderTraitsTests, base.SQLiteMixin,
                               rb.ResourcesTestCase):
    pass


class MySQLProviderTraitsTest(_ProviderTraitsTests, base.MySQLMixin,
                              rb.ResourcesTestCase):
    pass


class PostgreSQLProviderTraitsTest(_ProviderTraitsTests,
                                   base.PostgreSQLMixin,
                                   rb.ResourcesTestCase):
    pass
