"""A cell's aggregate with any resource class and traits, and what the
API level's filters make of it; a cell's hostile figures."""

import copy

from cellboot import exception
from cellboot.scheduler import aggregate
from cellboot.scheduler import cell_filters
from tests import base as test_base
from tests.unit.scheduler import fakes
from tests.unit.scheduler import test_aggregate


def _document(**values):
    document = copy.deepcopy(test_aggregate.GOOD)
    document.update(values)
    return document


class OfStatesTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.states = fakes.states(
            fakes.host('a', inventories={'CUSTOM_FPGA': {'total': 2}},
                       used={'CUSTOM_FPGA': 1},
                       traits=['CUSTOM_SSD', 'HW_CPU_X86_AVX2']),
            fakes.host('b', traits=['CUSTOM_SSD']),
            fakes.host('down', last_seen_up=fakes.NOW - 1000,
                       inventories={'VGPU': {'total': 4}},
                       traits=['CUSTOM_DOWN']))
        self.found = aggregate.of_states(self.states, 60)

    def test_every_class_of_the_up_hosts_is_summed(self):
        self.assertEqual(
            ({'capacity': 2.0, 'free': 1.0, 'max_free': 1.0}, False),
            (self.found['resources']['CUSTOM_FPGA'],
             'VGPU' in self.found['resources']))

    def test_traits_count_the_up_hosts_having_them(self):
        self.assertEqual({'CUSTOM_SSD': 2, 'HW_CPU_X86_AVX2': 1},
                         self.found['traits'])

    def test_it_passes_its_own_validation(self):
        self.assertEqual(self.found['traits'],
                         aggregate.validated(self.found)['traits'])


class ValidatedTest(test_base.TestCase):

    def _refused(self, document, field):
        exc = self.assertRaises(exception.Invalid, aggregate.validated,
                                document)
        self.assertIn(field, str(exc))

    def test_traits_absent_are_unknown(self):
        self.assertIsNone(aggregate.validated(_document())['traits'])

    def test_names_that_are_no_trait_are_dropped(self):
        checked = aggregate.validated(_document(traits={
            'CUSTOM_SSD': 1, 'custom ssd': 2, 'CUSTOM_' + 'X' * 300: 1}))
        self.assertEqual({'CUSTOM_SSD': 1}, checked['traits'])

    def test_counts_are_bounded_by_the_up_hosts(self):
        checked = aggregate.validated(_document(traits={'CUSTOM_SSD': 10}))
        self.assertEqual({'CUSTOM_SSD': 3}, checked['traits'])

    def test_a_count_that_is_no_count_is_refused(self):
        for count in (-1, 1.5, True, '2', None, 10 ** 12):
            self._refused(_document(traits={'CUSTOM_SSD': count}),
                          'aggregate trait count')

    def test_traits_not_a_mapping_are_refused(self):
        self._refused(_document(traits=['CUSTOM_SSD']), 'aggregate traits')

    def test_too_many_traits_are_refused(self):
        self._refused(_document(traits={
            f'CUSTOM_T{i}': 1 for i in range(aggregate.MAX_TRAITS + 1)}),
            'aggregate traits')

    def test_too_many_classes_are_refused(self):
        resources = {f'CUSTOM_C{i}': {'capacity': 1, 'free': 1,
                                      'max_free': 1}
                     for i in range(aggregate.MAX_CLASSES + 1)}
        self._refused(_document(resources=resources), 'aggregate resources')

    def test_a_class_name_that_is_no_string_is_dropped(self):
        resources = dict(test_aggregate.GOOD['resources'])
        resources[7] = {'capacity': 1, 'free': 1, 'max_free': 1}
        checked = aggregate.validated(_document(resources=resources))
        self.assertNotIn(7, checked['resources'])


class CellTraitsShadowTest(test_base.TestCase):
    """The API level's TraitsFilter never says no where a host would
    say yes."""

    AGGREGATE = {'up_hosts': 3, 'traits': {'CUSTOM_SSD': 3,
                                           'HW_CPU_X86_AVX2': 1}}

    def _allow(self, required=(), forbidden=(), aggregate_=None):
        return cell_filters._traits_allow(aggregate_ or self.AGGREGATE,
                                          frozenset(required),
                                          frozenset(forbidden))

    def test_a_required_trait_some_host_has_keeps_the_cell(self):
        self.assertTrue(self._allow(['HW_CPU_X86_AVX2', 'CUSTOM_SSD']))

    def test_a_required_trait_no_host_has_prunes_it(self):
        self.assertFalse(self._allow(['CUSTOM_NONE']))

    def test_a_forbidden_trait_some_host_lacks_keeps_it(self):
        self.assertTrue(self._allow(forbidden=['HW_CPU_X86_AVX2']))

    def test_a_forbidden_trait_every_up_host_has_prunes_it(self):
        self.assertFalse(self._allow(forbidden=['CUSTOM_SSD']))

    def test_a_cell_that_says_nothing_of_traits_is_kept(self):
        self.assertTrue(self._allow(['CUSTOM_NONE'], ['CUSTOM_SSD'],
                                    {'up_hosts': 3, 'traits': None}))
