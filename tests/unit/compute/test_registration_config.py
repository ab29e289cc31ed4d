"""A compute host's extra inventories and traits, from its configuration."""

import types

from cellboot.compute import registration
from cellboot import exception
from tests import base

NODE = types.SimpleNamespace(vcpus=8, memory_mb=4096, local_gb=0,
                             cpu_allocation_ratio=1.0,
                             ram_allocation_ratio=1.0,
                             disk_allocation_ratio=1.0)


class ExtraInventoriesTest(base.TestCase):

    def _refused(self, entries, *words):
        self.flags(extra_inventories=entries, group='compute')
        exc = self.assertRaises(exception.ConfigurationError,
                                registration.check_configuration)
        for word in ['[compute] extra_inventories', *words]:
            self.assertIn(word, str(exc))

    def test_none_by_default(self):
        self.assertEqual({'VCPU', 'MEMORY_MB'},
                         set(registration.inventories(NODE)))

    def test_classes_are_reported_with_the_nodes_own(self):
        self.flags(extra_inventories=['CUSTOM_FPGA:2', 'VGPU:4'],
                   group='compute')
        inventories = registration.inventories(NODE)
        self.assertEqual(({'total': 2}, {'total': 4}, 8),
                         (inventories['CUSTOM_FPGA'], inventories['VGPU'],
                          inventories['VCPU']['total']))

    def test_an_entry_without_a_total(self):
        self._refused(['CUSTOM_FPGA'], 'CLASS:TOTAL')

    def test_a_bad_class(self):
        self._refused(['custom_fpga:2'], 'is not a resource class')

    def test_a_total_that_is_no_whole_number(self):
        for total in ('x', '-1', '0', '1.5', '9' * 20):
            self._refused([f'CUSTOM_FPGA:{total}'], 'whole number')

    def test_a_class_the_driver_reports(self):
        self._refused(['VCPU:4'], 'from the driver')

    def test_a_class_given_twice(self):
        self._refused(['VGPU:1', 'VGPU:2'], 'twice')


class TraitsOptionTest(base.TestCase):

    def test_sorted_without_duplicates(self):
        self.flags(traits=['CUSTOM_SSD', 'HW_CPU_X86_AVX2', 'CUSTOM_SSD'],
                   group='compute')
        self.assertEqual(['CUSTOM_SSD', 'HW_CPU_X86_AVX2'],
                         registration.configured_traits())

    def test_unset_or_empty_leaves_the_traits_alone(self):
        self.assertIsNone(registration.configured_traits())
        self.flags(traits=[], group='compute')
        self.assertIsNone(registration.configured_traits())

    def test_a_bad_name_stops_the_service(self):
        self.flags(traits=['CUSTOM_SSD', 'ssd'], group='compute')
        exc = self.assertRaises(exception.ConfigurationError,
                                registration.check_configuration)
        self.assertIn('[compute] traits', str(exc))
        self.assertIn('ssd is not a trait', str(exc))
