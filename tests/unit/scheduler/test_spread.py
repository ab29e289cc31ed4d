"""The hosts a cell scheduler chooses among (``manager.spread``)."""

import numpy as np
import testtools

from cellboot.scheduler import manager

NO = -np.inf


class SpreadTest(testtools.TestCase):

    def test_one_is_the_one_best_host_even_among_ties(self):
        weights = np.array([1.0, 3.0, 3.0, NO])
        self.assertEqual([1], list(manager.spread(weights, 1)))

    def test_the_best_and_every_host_tied_with_the_last_of_them(self):
        weights = np.array([1.0, 5.0, 2.0, 2.0, 2.0, NO, 0.5])
        self.assertEqual([1, 2, 3, 4], sorted(manager.spread(weights, 2)))

    def test_without_ties_the_count_best(self):
        weights = np.array([1.0, 5.0, 2.0, 3.0])
        self.assertEqual([1, 3], sorted(manager.spread(weights, 2)))

    def test_filtered_out_hosts_are_never_chosen(self):
        weights = np.array([NO, 1.0, NO])
        self.assertEqual([1], list(manager.spread(weights, 3)))
        self.assertEqual([], list(manager.spread(np.array([NO, NO]), 2)))

    def test_equal_hosts_are_all_candidates(self):
        # A fleet filling evenly: all one slot from full.
        weights = np.zeros(100)
        self.assertEqual(100, len(manager.spread(weights, 2)))
