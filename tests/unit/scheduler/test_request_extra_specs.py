"""A flavor's extra specs: resource classes and traits, hostile input."""

from cellboot import exception
from cellboot.scheduler.filters import traits
from cellboot.scheduler import request as request_mod
from cellboot.scheduler.resources import inventory
from tests import base as test_base
from tests.unit.scheduler import fakes


def _parsed(extra_specs, **flavor):
    return fakes.request(extra_specs=extra_specs, **flavor)


class ExtraSpecsTest(test_base.TestCase):

    def _refused(self, extra_specs, *words):
        exc = self.assertRaises(exception.Invalid, _parsed, extra_specs)
        for word in words:
            self.assertIn(word, str(exc))
        return str(exc)

    def test_without_extra_specs_the_flavor_fields_are_all(self):
        request = fakes.request(vcpus=2, memory_mb=1024, root_gb=0)
        self.assertEqual(
            ({'VCPU': 2, 'MEMORY_MB': 1024}, frozenset(), frozenset()),
            (request.resources, request.required_traits,
             request.forbidden_traits))

    def test_a_class_is_added_and_one_overridden(self):
        request = _parsed({'resources:CUSTOM_FPGA': '2',
                           'resources:VCPU': '4', 'hw:cpu_policy': 'x'})
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 512, 'DISK_GB': 10,
                          'CUSTOM_FPGA': 2}, request.resources)

    def test_zero_drops_a_class(self):
        request = _parsed({'resources:DISK_GB': '0'})
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 512}, request.resources)

    def test_dropping_every_class_asks_for_nothing(self):
        self._refused({'resources:VCPU': '0', 'resources:MEMORY_MB': '0',
                       'resources:DISK_GB': '0'}, 'no resources')

    def test_traits_required_and_forbidden(self):
        request = _parsed({'trait:HW_CPU_X86_AVX2': 'required',
                           'trait:CUSTOM_SLOW': 'forbidden'})
        self.assertEqual(
            (frozenset({'HW_CPU_X86_AVX2'}), frozenset({'CUSTOM_SLOW'}),
             'HW_CPU_X86_AVX2, !CUSTOM_SLOW'),
            (request.required_traits, request.forbidden_traits,
             request.describe_traits()))

    def test_extra_specs_not_a_mapping(self):
        for specs in (['resources:VCPU=1'], 'resources:VCPU=1', 7):
            self._refused(specs, 'extra_specs must be a mapping')

    def test_a_key_that_is_no_string(self):
        self._refused({1: '1'}, 'keys must be strings')

    def test_an_amount_that_is_no_number(self):
        self._refused({'resources:CUSTOM_FPGA': 'x'},
                      'resources:CUSTOM_FPGA', 'whole number')

    def test_a_negative_amount(self):
        self._refused({'resources:VCPU': '-1'}, 'whole number')

    def test_an_amount_given_as_an_int_is_refused(self):
        self._refused({'resources:VCPU': 1}, 'as a string')

    def test_a_huge_amount(self):
        self._refused({'resources:VCPU': str(inventory.MAX_AMOUNT + 1)},
                      str(inventory.MAX_AMOUNT))
        self._refused({'resources:VCPU': '9' * 10000}, 'whole number')

    def test_non_ascii_digits(self):
        self._refused({'resources:VCPU': '\u0663'}, 'whole number')

    def test_a_bad_class_name(self):
        self._refused({'resources:custom_fpga': '1'},
                      'custom_fpga is not a resource class')
        self._refused({'resources:': '1'}, 'is not a resource class')

    def test_a_trait_value_that_is_neither(self):
        self._refused({'trait:CUSTOM_SSD': 'maybe'},
                      "'required' or 'forbidden'", "'maybe'")

    def test_an_invalid_trait_name(self):
        self._refused({'trait:not-a-trait': 'required'},
                      'not-a-trait is not a trait')
        self._refused({'trait:CUSTOM_' + 'A' * 300: 'required'},
                      'is not a trait')

    def test_the_messages_bound_what_they_repeat(self):
        message = self._refused({'resources:CUSTOM_X': 'y' * 10000},
                                'whole number')
        self.assertLess(len(message), 400)


class TraitsFilterTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.filter = traits.TraitsFilter()
        self.states = fakes.states(
            fakes.host('avx', traits=['HW_CPU_X86_AVX2']),
            fakes.host('both', traits=['HW_CPU_X86_AVX2', 'CUSTOM_SLOW']),
            fakes.host('none'))

    def _passing(self, extra_specs):
        return fakes.passing(self.states, self.filter.host_mask(
            self.states, _parsed(extra_specs)))

    def test_is_not_concerned_without_traits(self):
        self.assertIsNone(self.filter.host_mask(self.states,
                                                fakes.request()))

    def test_required(self):
        self.assertEqual(['avx', 'both'],
                         self._passing({'trait:HW_CPU_X86_AVX2':
                                        request_mod.REQUIRED}))

    def test_required_and_forbidden(self):
        self.assertEqual(['avx'], self._passing({
            'trait:HW_CPU_X86_AVX2': 'required',
            'trait:CUSTOM_SLOW': 'forbidden'}))

    def test_a_required_trait_no_host_has_passes_none(self):
        self.assertEqual([], self._passing({'trait:CUSTOM_X': 'required'}))

    def test_a_forbidden_trait_no_host_has_removes_none(self):
        self.assertEqual(['avx', 'both', 'none'],
                         self._passing({'trait:CUSTOM_X': 'forbidden'}))

    def test_traits_changed_on_a_host_are_followed(self):
        request = _parsed({'trait:CUSTOM_NEW': 'required'})
        self.assertEqual([], fakes.passing(
            self.states, self.filter.host_mask(self.states, request)))
        self.states.set_traits(self.states.index['uuid-none'],
                               ['CUSTOM_NEW'])
        self.assertEqual(['none'], fakes.passing(
            self.states, self.filter.host_mask(self.states, request)))
