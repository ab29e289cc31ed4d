"""Cell pruning, the filter chain, and the NoValidHost reason."""

from cellboot.scheduler import candidates
from cellboot.scheduler import filters
from tests import base as test_base
from tests.unit.scheduler import fakes


class FindCandidatesTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.filters = filters.load_filters(
            ['CellFilter', 'ComputeFilter', 'ResourceFilter'])
        self.states = fakes.states(
            fakes.host('a', cell=fakes.CELL1, vcpus=4),
            fakes.host('b', cell=fakes.CELL1, vcpus=16),
            fakes.host('c', cell=fakes.CELL2, vcpus=16, disabled=True),
            fakes.host('d', cell=fakes.CELL2, vcpus=2))

    def _find(self, **kwargs):
        return candidates.find(self.states, fakes.request(**kwargs),
                               self.filters)

    def test_hosts_passing_every_filter_remain(self):
        mask, _elimination = self._find(vcpus=4)
        self.assertEqual(['a', 'b'], fakes.passing(self.states, mask))

    def test_reason_names_the_filter_that_removed_the_last_hosts(self):
        mask, elimination = self._find(vcpus=17)
        self.assertFalse(mask.any())
        self.assertIn('ResourceFilter removed the last 3 host(s)',
                      elimination.reason())

    def test_last_step_is_the_filter_as_a_label(self):
        _mask, elimination = self._find(vcpus=17)
        self.assertEqual('ResourceFilter', elimination.last_step())

    def test_last_step_without_any_host(self):
        self.assertEqual('none', candidates.Elimination(0, 0).last_step())

    def test_reason_tells_what_the_request_asked_for(self):
        _mask, elimination = self._find(vcpus=17)
        self.assertIn('VCPU=17', elimination.reason())

    def test_reason_lists_what_each_filter_removed(self):
        _mask, elimination = self._find(vcpus=17)
        self.assertIn('Of 4 host(s) in 2 cell(s): ComputeFilter removed 1, '
                      'ResourceFilter removed 3.', elimination.reason())

    def test_cells_that_cannot_fit_are_pruned_before_host_filters(self):
        # cell2 has 18 vCPUs in all (its disabled host included), cell1 20.
        _mask, elimination = self._find(vcpus=19)
        self.assertEqual(
            [('ResourceFilter (cell pruning)', 2),
             ('ResourceFilter', 2)],
            [(name, count) for name, count, _ in elimination.steps])

    def test_reason_names_the_filter_when_cell_pruning_removed_all(self):
        _mask, elimination = self._find(vcpus=32)
        self.assertIn('ResourceFilter (cell pruning) removed the last 4 '
                      'host(s)', elimination.reason())
        self.assertIn('2 cell(s) pruned', elimination.reason())

    def test_target_cell_prunes_other_cells(self):
        mask, _elimination = self._find(
            vcpus=1, scheduler_hints={'target_cell': fakes.CELL2})
        self.assertEqual(['d'], fakes.passing(self.states, mask))

    def test_ignore_hosts_removes_them(self):
        mask, _elimination = self._find(vcpus=1, ignore_hosts=['a', 'd'])
        self.assertEqual(['b'], fakes.passing(self.states, mask))

    def test_hosts_whose_claim_failed_are_removed_last(self):
        request = fakes.request(vcpus=1)
        request.failed_providers = {'uuid-a', 'uuid-b', 'uuid-d'}
        mask, elimination = candidates.find(self.states, request,
                                            self.filters)
        self.assertFalse(mask.any())
        self.assertIn('claim retries removed the last 3 host(s)',
                      elimination.reason())

    def test_no_host_at_all_says_so(self):
        states = fakes.states()
        mask, elimination = candidates.find(states, fakes.request(),
                                            self.filters)
        self.assertFalse(mask.any())
        self.assertIn('knows no compute host', elimination.reason())
