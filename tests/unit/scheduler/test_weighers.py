"""Each weigher on its own, and how their weights combine."""

import numpy as np

from cellboot import exception
from cellboot.scheduler import weighers
from cellboot.scheduler.weighers import base
from cellboot.scheduler.weighers import build_failure
from cellboot.scheduler.weighers import resources
from tests import base as test_base
from tests.unit.scheduler import fakes


def _best(states, weights):
    return states.service_hosts[int(np.argmax(weights))]


class ResourceWeighersTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.states = fakes.states(
            fakes.host('ram', vcpus=4, memory_mb=65536, disk_gb=100),
            fakes.host('cpu', vcpus=64, memory_mb=4096, disk_gb=100),
            fakes.host('disk', vcpus=4, memory_mb=4096, disk_gb=9000))
        self.mask = np.ones(3, dtype=bool)

    def _weigh(self, weigher):
        return base.weigh(self.states, self.mask, fakes.request(),
                          [weigher])

    def test_ram_weigher_spreads_to_most_free_memory(self):
        self.assertEqual('ram', _best(self.states,
                                      self._weigh(resources.RAMWeigher())))

    def test_cpu_weigher_spreads_to_most_free_vcpus(self):
        self.assertEqual('cpu', _best(self.states,
                                      self._weigh(resources.CPUWeigher())))

    def test_disk_weigher_spreads_to_most_free_disk(self):
        self.assertEqual('disk', _best(self.states,
                                       self._weigh(resources.DiskWeigher())))

    def test_negative_multiplier_packs_onto_least_free(self):
        self.flags(ram_weight_multiplier=-1.0, group='filter_scheduler')
        states = fakes.states(
            fakes.host('empty', memory_mb=8192),
            fakes.host('half', memory_mb=8192, used={'MEMORY_MB': 4096}))
        weights = base.weigh(states, np.ones(2, dtype=bool), fakes.request(),
                             [resources.RAMWeigher()])
        self.assertEqual('half', _best(states, weights))

    def test_usage_counts_against_free(self):
        states = fakes.states(
            fakes.host('busy', memory_mb=8192, used={'MEMORY_MB': 6000}),
            fakes.host('idle', memory_mb=4096))
        weights = base.weigh(states, np.ones(2, dtype=bool), fakes.request(),
                             [resources.RAMWeigher()])
        self.assertEqual('idle', _best(states, weights))

    def test_zero_multiplier_ignores_the_weigher(self):
        self.flags(ram_weight_multiplier=0.0, group='filter_scheduler')
        self.assertEqual([0.0, 0.0, 0.0],
                         list(self._weigh(resources.RAMWeigher())))

    def test_multipliers_balance_weighers(self):
        self.flags(ram_weight_multiplier=1.0, cpu_weight_multiplier=3.0,
                   group='filter_scheduler')
        weights = base.weigh(self.states, self.mask, fakes.request(),
                             [resources.RAMWeigher(),
                              resources.CPUWeigher()])
        self.assertEqual('cpu', _best(self.states, weights))

    def test_all_equal_scores_weigh_zero(self):
        states = fakes.states(fakes.host('a'), fakes.host('b'))
        weights = base.weigh(states, np.ones(2, dtype=bool),
                             fakes.request(), [resources.RAMWeigher()])
        self.assertEqual([0.0, 0.0], list(weights))

    def test_normalizes_over_the_candidates_only(self):
        weights = base.weigh(self.states, np.array([False, True, True]),
                             fakes.request(), [resources.DiskWeigher()])
        self.assertEqual([0.0, 1.0], list(weights[1:]))

    def test_hosts_that_failed_the_filters_weigh_minus_infinity(self):
        weights = base.weigh(self.states, np.array([False, True, True]),
                             fakes.request(), [resources.DiskWeigher()])
        self.assertEqual(-np.inf, weights[0])


class BuildFailureWeigherTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.states = fakes.states(fakes.host('a'), fakes.host('b'))
        self.weigher = build_failure.BuildFailureWeigher()

    def test_host_with_failed_builds_weighs_less(self):
        self.states.record_build_failure('uuid-a')
        weights = base.weigh(self.states, np.ones(2, dtype=bool),
                             fakes.request(),
                             [self.weigher])
        self.assertEqual('b', _best(self.states, weights))

    def test_outweighs_the_resource_weighers_by_default(self):
        states = fakes.states(fakes.host('roomy', memory_mb=65536),
                              fakes.host('small', memory_mb=2048))
        states.record_build_failure('uuid-roomy')
        weights = base.weigh(states, np.ones(2, dtype=bool), fakes.request(),
                             [resources.RAMWeigher(), self.weigher])
        self.assertEqual('small', _best(states, weights))

    def test_is_not_concerned_when_no_host_failed(self):
        self.assertIsNone(self.weigher.raw(self.states, fakes.request()))

    def test_a_success_clears_the_count(self):
        self.states.record_build_failure('uuid-a')
        self.states.clear_build_failures('uuid-a')
        self.assertIsNone(self.weigher.raw(self.states, fakes.request()))


class LoadWeighersTest(test_base.TestCase):

    def test_loads_every_built_in_weigher(self):
        names = ['RAMWeigher', 'CPUWeigher', 'DiskWeigher',
                 'BuildFailureWeigher']
        self.assertEqual(names,
                         [w.name for w in weighers.load_weighers(names)])

    def test_unknown_name_is_a_configuration_error(self):
        self.assertRaises(exception.ConfigurationError,
                          weighers.load_weighers, ['ResourceFilter'])
