"""Flavor against a real API database, on every backend."""

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.objects import flavor
from cellboot.objects import flavor_extra_specs
from cellboot.objects import resource_catalog
from tests import base
from tests.functional.objects import spec_base

Flavor = flavor.Flavor


class _FlavorTests(spec_base.ObjectTests):

    def test_create_fills_in_the_defaults(self):
        small = Flavor.create(self.ctx, 'm1.small', 1, 512)
        self.assertTrue(uuidutils.is_uuid_like(small.flavorid))
        self.assertEqual((1, 512, 0, True, False, None),
                         (small.vcpus, small.memory_mb, small.root_gb,
                          small.is_public, small.disabled, small.description))

    def test_create_keeps_the_given_values(self):
        big = Flavor.create(self.ctx, 'big', 8, 16384, root_gb=80,
                            flavorid='42', is_public=False,
                            description='for databases')
        self.assertEqual(big.to_dict(),
                         Flavor.get_by_flavor_id(self.ctx, '42').to_dict())
        self.assertEqual((80, False, 'for databases'),
                         (big.root_gb, big.is_public, big.description))

    def test_extra_specs_are_written_with_the_flavor_and_read_back(self):
        specs = {'resources:VGPU': '1', 'trait:HW_CPU_X86_AVX2': 'required',
                 'note': ''}
        created = Flavor.create(self.ctx, 'gpu', 1, 512, flavorid='gpu',
                                extra_specs=specs)
        Flavor.create(self.ctx, 'plain', 1, 512, flavorid='plain')
        self.assertEqual(specs, created.extra_specs)
        self.assertEqual(specs, Flavor.get_by_name(self.ctx,
                                                   'gpu').extra_specs)
        self.assertEqual({'gpu': specs, 'plain': {}},
                         {item.flavorid: item.extra_specs
                          for item in Flavor.get_page(self.ctx, 10)})
        flavor_extra_specs.update(self.ctx, created.id, {
            'note': 'x', 'more': 'y'})
        self.assertEqual(dict(specs, note='x', more='y'),
                         Flavor.get_by_flavor_id(self.ctx, 'gpu').extra_specs)
        flavor_extra_specs.delete(self.ctx, created.id, 'more')
        self.assertRaises(exception.FlavorExtraSpecNotFound,
                          flavor_extra_specs.delete, self.ctx, created.id,
                          'more')
        created.destroy(self.ctx)
        self.assertEqual({}, flavor_extra_specs.get(self.ctx, created.id))

    def test_a_failed_create_writes_no_extra_spec(self):
        Flavor.create(self.ctx, 'taken', 1, 512, flavorid='t')
        self.assertRaises(exception.FlavorExists, Flavor.create, self.ctx,
                          'taken', 1, 512, extra_specs={'a': 'b'})
        self.assertEqual({'t': {}}, {item.flavorid: item.extra_specs
                                     for item in Flavor.get_all(self.ctx)})

    def test_the_catalog_refuses_names_in_use_or_unknown(self):
        classes = resource_catalog.CLASSES
        classes.create(self.ctx, 'CUSTOM_A')
        classes.create(self.ctx, 'CUSTOM_B')
        self.assertRaises(exception.CatalogNameExists, classes.create,
                          self.ctx, 'CUSTOM_A')
        self.assertEqual(['CUSTOM_C'], classes.missing(
            self.ctx, ['CUSTOM_A', 'CUSTOM_C']))
        Flavor.create(self.ctx, 'uses-a', 1, 512, extra_specs={
            'resources:CUSTOM_A': '1'})
        exc = self.assertRaises(exception.CatalogNameInUse, classes.destroy,
                                self.ctx, 'CUSTOM_A')
        self.assertIn('1 flavor (uses-a)', str(exc))
        classes.destroy(self.ctx, 'CUSTOM_B')
        self.assertRaises(exception.CatalogNameNotFound, classes.destroy,
                          self.ctx, 'CUSTOM_B')
        self.assertEqual(['CUSTOM_A'], classes.names(self.ctx))
        self.assertEqual([], resource_catalog.TRAITS.names(self.ctx))

    def test_create_with_a_taken_name_raises_exists_naming_it(self):
        Flavor.create(self.ctx, 'm1.small', 1, 512)
        exc = self.assertRaises(exception.FlavorExists, Flavor.create,
                                self.ctx, 'm1.small', 2, 1024)
        self.assertEqual('A flavor with name m1.small already exists.',
                         str(exc))

    def test_create_with_a_taken_flavorid_raises_exists_naming_it(self):
        Flavor.create(self.ctx, 'a', 1, 512, flavorid='1')
        exc = self.assertRaises(exception.FlavorExists, Flavor.create,
                                self.ctx, 'b', 1, 512, flavorid='1')
        self.assertEqual('A flavor with flavorid 1 already exists.',
                         str(exc))

    def test_create_with_zero_vcpus_raises_invalid(self):
        exc = self.assertRaises(exception.Invalid, Flavor.create, self.ctx,
                                'f', 0, 512)
        self.assertIn('vcpus', str(exc))

    def test_create_with_negative_memory_raises_invalid(self):
        exc = self.assertRaises(exception.Invalid, Flavor.create, self.ctx,
                                'f', 1, -1)
        self.assertIn('memory_mb', str(exc))

    def test_create_with_negative_disk_raises_invalid(self):
        exc = self.assertRaises(exception.Invalid, Flavor.create, self.ctx,
                                'f', 1, 512, root_gb=-1)
        self.assertIn('root_gb', str(exc))

    def test_create_with_a_non_integer_size_raises_invalid(self):
        self.assertRaises(exception.Invalid, Flavor.create, self.ctx, 'f',
                          '1.5', 512)

    def test_create_with_a_size_too_big_for_the_column_raises_invalid(self):
        self.assertRaises(exception.Invalid, Flavor.create, self.ctx, 'f',
                          1, 2 ** 31)

    def test_create_with_an_empty_name_raises_invalid(self):
        self.assertRaises(exception.Invalid, Flavor.create, self.ctx, ' ',
                          1, 512)

    def test_create_with_a_256_character_name_raises_invalid(self):
        self.assertRaises(exception.Invalid, Flavor.create, self.ctx,
                          'x' * 256, 1, 512)

    def test_invalid_input_writes_nothing(self):
        self.assertRaises(exception.Invalid, Flavor.create, self.ctx, 'f',
                          0, 512)
        self.assertEqual([], Flavor.get_all(self.ctx))

    def test_get_by_name_returns_the_flavor(self):
        small = Flavor.create(self.ctx, 'm1.small', 1, 512)
        self.assertEqual(small.flavorid,
                         Flavor.get_by_name(self.ctx, 'm1.small').flavorid)

    def test_get_by_name_of_unknown_raises_not_found(self):
        exc = self.assertRaises(exception.FlavorNotFound, Flavor.get_by_name,
                                self.ctx, 'nope')
        self.assertIn('nope', str(exc))

    def test_get_by_flavor_id_of_unknown_raises_not_found(self):
        self.assertRaises(exception.FlavorNotFound, Flavor.get_by_flavor_id,
                          self.ctx, 'nope')

    def test_get_all_lists_flavors_by_name(self):
        for name in ('m1.large', 'm1.small', 'm1.medium'):
            Flavor.create(self.ctx, name, 1, 512)
        self.assertEqual(['m1.large', 'm1.medium', 'm1.small'],
                         [f.name for f in Flavor.get_all(self.ctx)])

    def test_destroy_deletes_the_flavor(self):
        small = Flavor.create(self.ctx, 'm1.small', 1, 512)
        small.destroy(self.ctx)
        self.assertRaises(exception.FlavorNotFound, Flavor.get_by_name,
                          self.ctx, 'm1.small')

    def test_destroy_twice_raises_not_found(self):
        small = Flavor.create(self.ctx, 'm1.small', 1, 512)
        small.destroy(self.ctx)
        self.assertRaises(exception.FlavorNotFound, small.destroy, self.ctx)


class SQLiteFlavorTest(_FlavorTests, base.SQLiteMixin,
                       spec_base.ObjectTestCase):
    pass


class MySQLFlavorTest(_FlavorTests, base.MySQLMixin,
                      spec_base.ObjectTestCase):
    pass


class PostgreSQLFlavorTest(_FlavorTests, base.PostgreSQLMixin,
                           spec_base.ObjectTestCase):
    pass
