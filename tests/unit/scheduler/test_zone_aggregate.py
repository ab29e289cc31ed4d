"""A zone's aggregate is the aggregate of what is below it."""

import copy

from cellboot.scheduler import aggregate
from cellboot.scheduler import zone_aggregate
from tests import base as test_base

CELL_A = {
    'hosts': 4, 'up_hosts': 3,
    'resources': {
        'VCPU': {'capacity': 64.0, 'free': 40.0, 'max_free': 16.0},
        'MEMORY_MB': {'capacity': 1024.0, 'free': 512.0, 'max_free': 256.0},
    },
    'zones': ['nova', 'az2'],
    'traits': {'CUSTOM_SSD': 2, 'HW_CPU_X86_AVX2': 3},
    'computed_at': 200.0,
}
CELL_B = {
    'hosts': 2, 'up_hosts': 2,
    'resources': {
        'VCPU': {'capacity': 32.0, 'free': 30.0, 'max_free': 20.0},
        'DISK_GB': {'capacity': 100.0, 'free': 50.0, 'max_free': 50.0},
    },
    'zones': ['az1', 'nova'],
    'traits': {'CUSTOM_SSD': 1},
    'computed_at': 100.0,
}


class CombineTest(test_base.TestCase):

    def test_no_child_has_an_aggregate(self):
        self.assertIsNone(zone_aggregate.combine([]))
        self.assertIsNone(zone_aggregate.combine([None, None]))

    def test_one_child_is_its_own_aggregate_with_zones_sorted(self):
        expected = dict(CELL_A, zones=sorted(CELL_A['zones']))
        self.assertEqual(expected, zone_aggregate.combine([CELL_A]))

    def test_trait_counts_are_summed(self):
        both = zone_aggregate.combine([CELL_A, None, CELL_B])
        self.assertEqual({'CUSTOM_SSD': 3, 'HW_CPU_X86_AVX2': 3},
                         both['traits'])

    def test_a_child_that_says_no_traits_makes_them_unknown(self):
        older = {key: value for key, value in CELL_B.items()
                 if key != 'traits'}
        self.assertIsNone(
            zone_aggregate.combine([CELL_A, older])['traits'])

    def test_counts_and_room_are_summed(self):
        both = zone_aggregate.combine([CELL_A, None, CELL_B])
        self.assertEqual(6, both['hosts'])
        self.assertEqual(5, both['up_hosts'])
        self.assertEqual({'capacity': 96.0, 'free': 70.0, 'max_free': 20.0},
                         both['resources']['VCPU'])

    def test_a_class_one_child_lacks_is_summed_over_the_others(self):
        both = zone_aggregate.combine([CELL_A, CELL_B])
        self.assertEqual(CELL_A['resources']['MEMORY_MB'],
                         both['resources']['MEMORY_MB'])
        self.assertEqual(CELL_B['resources']['DISK_GB'],
                         both['resources']['DISK_GB'])

    def test_zones_are_the_sorted_union(self):
        both = zone_aggregate.combine([CELL_A, CELL_B])
        self.assertEqual(['az1', 'az2', 'nova'], both['zones'])

    def test_computed_at_is_the_oldest_child(self):
        both = zone_aggregate.combine([CELL_A, CELL_B])
        self.assertEqual(100.0, both['computed_at'])

    def test_children_are_not_changed(self):
        before = copy.deepcopy([CELL_A, CELL_B])
        zone_aggregate.combine([CELL_A, CELL_B])
        zone_aggregate.combine([zone_aggregate.combine([CELL_A]), CELL_B])
        self.assertEqual(before, [CELL_A, CELL_B])

    def test_nested_zones_equal_the_flat_sum(self):
        flat = zone_aggregate.combine([CELL_A, CELL_B, CELL_A])
        nested = zone_aggregate.combine(
            [zone_aggregate.combine([CELL_A, CELL_B]), CELL_A])
        self.assertEqual(flat, nested)

    def test_the_result_is_a_valid_aggregate(self):
        both = zone_aggregate.combine([CELL_A, CELL_B])
        self.assertEqual(both, aggregate.validated(both))
