"""The columnar host states: building, claims, updates, lookups."""

import numpy as np

from cellboot.scheduler import host_state
from tests import base as test_base
from tests.unit.scheduler import fakes

VCPU = host_state.VCPU
MEM = host_state.MEMORY_MB


class BuildTest(test_base.TestCase):

    def test_free_is_capacity_minus_usage(self):
        states = fakes.states(fakes.host('a', vcpus=8, used={'VCPU': 3}))
        self.assertEqual(5.0, states.free[VCPU, 0])

    def test_capacity_applies_reserved_and_ratio(self):
        states = fakes.states(fakes.host(
            'a', vcpus=10, inventories={'VCPU': {'reserved': 2,
                                                 'allocation_ratio': 2.0}}))
        self.assertEqual(16.0, states.capacity[VCPU, 0])

    def test_missing_inventory_has_no_capacity(self):
        states = fakes.states(fakes.host('a', inventories={'DISK_GB': None}))
        self.assertEqual(0.0, states.capacity[host_state.DISK_GB, 0])

    def test_cells_sum_the_free_resources_of_their_hosts(self):
        states = fakes.states(
            fakes.host('a', cell=fakes.CELL1, vcpus=4),
            fakes.host('b', cell=fakes.CELL1, vcpus=6, used={'VCPU': 1}),
            fakes.host('c', cell=fakes.CELL2, vcpus=8))
        self.assertEqual(
            [9.0, 8.0],
            [states.cell_free[VCPU, states.cell_code(c)]
             for c in (fakes.CELL1, fakes.CELL2)])

    def test_overcommitted_host_adds_no_negative_room_to_its_cell(self):
        states = fakes.states(fakes.host('a', vcpus=4, used={'VCPU': 6}),
                              fakes.host('b', vcpus=4))
        self.assertEqual(4.0, states.cell_free[VCPU, 0])


class UsageTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.states = fakes.states(fakes.host('a', vcpus=8, memory_mb=4096))

    def test_add_usage_takes_from_host_and_cell(self):
        self.states.add_usage(0, {'VCPU': 2, 'MEMORY_MB': 1024})
        self.assertEqual((6.0, 3072.0, 6.0), (
            self.states.free[VCPU, 0], self.states.free[MEM, 0],
            self.states.cell_free[VCPU, 0]))

    def test_negative_usage_releases(self):
        self.states.add_usage(0, {'VCPU': 2})
        self.states.add_usage(0, {'VCPU': 2}, sign=-1)
        self.assertEqual((8.0, 0.0), (self.states.free[VCPU, 0],
                                      self.states.used[VCPU, 0]))

    def test_set_resources_replaces_inventory_and_usage(self):
        self.states.set_resources(0, {'VCPU': {'total': 32}},
                                  {'VCPU': 30}, generation=7)
        self.assertEqual((2.0, 0.0, 7, 2.0), (
            self.states.free[VCPU, 0], self.states.capacity[MEM, 0],
            self.states.generation[0], self.states.cell_free[VCPU, 0]))


class UpsertTest(test_base.TestCase):

    def test_new_host_is_appended_and_counted_up(self):
        states = fakes.states(fakes.host('a'))
        new = fakes.host('b', cell=fakes.CELL2, vcpus=4)
        del new['last_seen_up']
        states.upsert_hosts([new])
        pos = states.position('uuid-b')
        self.assertEqual((1, fakes.CELL2, 4.0), (
            pos, states.cell_uuid(pos), states.free[VCPU, pos]))
        self.assertTrue(np.isfinite(states.last_seen_up[pos]))

    def test_known_host_keeps_its_position_and_liveness(self):
        states = fakes.states(fakes.host('a', last_seen_up=123.0))
        states.upsert_hosts([fakes.host('a', vcpus=64, last_seen_up=None)])
        self.assertEqual((0, 64.0, 123.0), (
            states.position('uuid-a'), states.free[VCPU, 0],
            states.last_seen_up[0]))

    def test_host_moving_cell_moves_its_room(self):
        states = fakes.states(fakes.host('a', cell=fakes.CELL1, vcpus=4),
                              fakes.host('b', cell=fakes.CELL2, vcpus=8))
        states.upsert_hosts([fakes.host('a', cell=fakes.CELL2, vcpus=4)])
        self.assertEqual(
            [0.0, 12.0],
            [states.cell_free[VCPU, states.cell_code(c)]
             for c in (fakes.CELL1, fakes.CELL2)])

    def test_removed_host_is_not_found_and_leaves_its_cell(self):
        states = fakes.states(fakes.host('a'), fakes.host('b'))
        states.remove_host('uuid-a')
        self.assertEqual((None, 1), (states.position('uuid-a'),
                                     int(states.cell_hosts[0])))


class LookupTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.states = fakes.states(fakes.host('a'), fakes.host('b'),
                                   fakes.host('c'))

    def test_positions_skip_unknown_uuids(self):
        self.assertEqual([0, 2], list(self.states.positions(
            ['uuid-a', 'nope', 'uuid-c'])))

    def test_positions_of_service_hosts(self):
        self.assertEqual([1], list(
            self.states.positions_of_service_hosts(['b', 'nope'])))

    def test_host_dict_has_capacity_usage_and_liveness(self):
        values = self.states.host_dict(0, down_time=60)
        self.assertEqual(('a', fakes.CELL1, True, 16.0), (
            values['service_host'], values['cell_uuid'], values['up'],
            values['resources']['VCPU']['free']))

    def test_nbytes_counts_arrays_and_strings(self):
        self.assertGreater(self.states.nbytes(), 3 * 100)
