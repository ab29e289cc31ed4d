"""Each host filter on its own, over in-memory host states."""

from cellboot import exception
from cellboot.scheduler import filters
from cellboot.scheduler.filters import affinity
from cellboot.scheduler.filters import availability_zone
from cellboot.scheduler.filters import base
from cellboot.scheduler.filters import cell
from cellboot.scheduler.filters import compute
from cellboot.scheduler.filters import resource
from cellboot.scheduler.filters import server_group
from tests import base as test_base
from tests.unit.scheduler import fakes


class ComputeFilterTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(service_down_time=60, group='scheduler')
        self.filter = compute.ComputeFilter()

    def test_passes_enabled_host_that_reported_recently(self):
        states = fakes.states(fakes.host('a', last_seen_up=fakes.NOW - 5))
        self.assertEqual(['a'], fakes.passing(
            states, self.filter.host_mask(states, fakes.request())))

    def test_removes_disabled_service(self):
        states = fakes.states(fakes.host('a'),
                              fakes.host('b', disabled=True))
        self.assertEqual(['a'], fakes.passing(
            states, self.filter.host_mask(states, fakes.request())))

    def test_removes_service_silent_longer_than_down_time(self):
        states = fakes.states(fakes.host('a'),
                              fakes.host('b', last_seen_up=fakes.NOW - 61))
        self.assertEqual(['a'], fakes.passing(
            states, self.filter.host_mask(states, fakes.request())))

    def test_removes_host_that_never_reported(self):
        states = fakes.states(fakes.host('a'),
                              fakes.host('b', last_seen_up=None))
        self.assertEqual(['a'], fakes.passing(
            states, self.filter.host_mask(states, fakes.request())))

    def test_judges_liveness_as_of_the_cell_load_not_now(self):
        # Loaded long ago, the heartbeat was fresh then: still up.
        states = fakes.states(fakes.host('a', last_seen_up=fakes.NOW - 1),
                              read_at=fakes.NOW)
        self.assertEqual(['a'], fakes.passing(
            states, self.filter.host_mask(states, fakes.request())))

    def test_honours_configured_down_time(self):
        self.flags(service_down_time=300, group='scheduler')
        states = fakes.states(fakes.host('a', last_seen_up=fakes.NOW - 200))
        self.assertEqual(['a'], fakes.passing(
            states, self.filter.host_mask(states, fakes.request())))


class ResourceFilterTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.filter = resource.ResourceFilter()

    def _passing(self, *hosts, **flavor):
        states = fakes.states(*hosts)
        return fakes.passing(states, self.filter.host_mask(
            states, fakes.request(**flavor)))

    def test_removes_host_without_enough_free_vcpus(self):
        self.assertEqual(['big'], self._passing(
            fakes.host('small', vcpus=2), fakes.host('big', vcpus=8),
            vcpus=4))

    def test_removes_host_without_enough_free_memory(self):
        self.assertEqual(['big'], self._passing(
            fakes.host('small', memory_mb=1024),
            fakes.host('big', memory_mb=8192), memory_mb=2048))

    def test_removes_host_without_enough_free_disk(self):
        self.assertEqual(['big'], self._passing(
            fakes.host('small', disk_gb=10), fakes.host('big', disk_gb=100),
            root_gb=20))

    def test_subtracts_usage(self):
        self.assertEqual(['empty'], self._passing(
            fakes.host('busy', vcpus=8, used={'VCPU': 6}),
            fakes.host('empty', vcpus=8), vcpus=4))

    def test_exact_fit_passes(self):
        self.assertEqual(['a'], self._passing(
            fakes.host('a', vcpus=8, used={'VCPU': 4}), vcpus=4))

    def test_applies_allocation_ratio(self):
        self.assertEqual(['over'], self._passing(
            fakes.host('plain', vcpus=4, used={'VCPU': 2}),
            fakes.host('over', vcpus=4, used={'VCPU': 2},
                       inventories={'VCPU': {'allocation_ratio': 4.0}}),
            vcpus=4))

    def test_rounds_capacity_like_the_claims(self):
        # (100 * 1.15) is 114.999... in floating point; claims allow 115.
        self.assertEqual(['a'], self._passing(
            fakes.host('a', vcpus=100, used={'VCPU': 100},
                       inventories={'VCPU': {'allocation_ratio': 1.15}}),
            vcpus=15))

    def test_subtracts_reserved(self):
        self.assertEqual([], self._passing(
            fakes.host('a', memory_mb=4096,
                       inventories={'MEMORY_MB': {'reserved': 2048}}),
            memory_mb=3072))

    def test_removes_host_whose_max_unit_is_below_the_amount(self):
        self.assertEqual(['b'], self._passing(
            fakes.host('a', vcpus=32, inventories={'VCPU': {'max_unit': 4}}),
            fakes.host('b', vcpus=32), vcpus=8))

    def test_removes_host_whose_min_unit_is_above_the_amount(self):
        self.assertEqual(['b'], self._passing(
            fakes.host('a', inventories={'VCPU': {'min_unit': 2}}),
            fakes.host('b'), vcpus=1))

    def test_removes_host_whose_step_size_does_not_divide_the_amount(self):
        self.assertEqual(['b'], self._passing(
            fakes.host('a', disk_gb=1000,
                       inventories={'DISK_GB': {'step_size': 50}}),
            fakes.host('b'), root_gb=20))

    def test_removes_host_without_inventory_of_a_requested_class(self):
        self.assertEqual(['b'], self._passing(
            fakes.host('a', inventories={'DISK_GB': None}), fakes.host('b'),
            root_gb=1))

    def test_ignores_classes_the_flavor_does_not_ask_for(self):
        self.assertEqual(['a'], self._passing(
            fakes.host('a', inventories={'DISK_GB': None}), root_gb=0))

    def test_prunes_cells_whose_summed_free_cannot_fit(self):
        states = fakes.states(
            fakes.host('a', cell=fakes.CELL1, vcpus=2),
            fakes.host('b', cell=fakes.CELL1, vcpus=2),
            fakes.host('c', cell=fakes.CELL2, vcpus=8))
        mask = self.filter.cell_mask(states, fakes.request(vcpus=6))
        self.assertEqual([False, True], [
            bool(mask[states.cell_code(c)])
            for c in (fakes.CELL1, fakes.CELL2)])

    def test_keeps_cell_whose_sum_fits_though_no_host_does(self):
        # Pruning is a cheap necessary condition; hosts decide.
        states = fakes.states(fakes.host('a', vcpus=2),
                              fakes.host('b', vcpus=2))
        self.assertTrue(self.filter.cell_mask(
            states, fakes.request(vcpus=4)).all())


class AvailabilityZoneFilterTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.filter = availability_zone.AvailabilityZoneFilter()
        self.states = fakes.states(fakes.host('a', az='az1'),
                                   fakes.host('b', az='az2'))

    def test_is_not_concerned_without_a_zone(self):
        self.assertIsNone(self.filter.host_mask(self.states,
                                                fakes.request()))

    def test_passes_hosts_of_the_zone(self):
        self.assertEqual(['b'], fakes.passing(self.states, self.filter.
                         host_mask(self.states, fakes.request(
                             availability_zone='az2'))))

    def test_unknown_zone_passes_no_host(self):
        self.assertEqual([], fakes.passing(self.states, self.filter.
                         host_mask(self.states, fakes.request(
                             availability_zone='nowhere'))))


class CellFilterTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.filter = cell.CellFilter()
        self.states = fakes.states(fakes.host('a', cell=fakes.CELL1),
                                   fakes.host('b', cell=fakes.CELL2))

    def _cells(self, **hints):
        mask = self.filter.cell_mask(
            self.states, fakes.request(scheduler_hints=hints))
        if mask is None:
            return None
        return [self.states.cells.names[c] for c in mask.nonzero()[0]]

    def test_is_not_concerned_without_the_hint(self):
        self.assertIsNone(self._cells())

    def test_keeps_only_the_target_cell(self):
        self.assertEqual([fakes.CELL2], self._cells(target_cell=fakes.CELL2))

    def test_accepts_the_hint_as_a_one_item_list(self):
        self.assertEqual([fakes.CELL1],
                         self._cells(target_cell=[fakes.CELL1]))

    def test_unknown_cell_keeps_no_cell(self):
        self.assertEqual([], self._cells(target_cell='no-such-cell'))


class SameAndDifferentHostFilterTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.states = fakes.states(fakes.host('a'), fakes.host('b'),
                                   fakes.host('c'))

    def _request(self, **hints):
        request = fakes.request(scheduler_hints=hints)
        # What resolve() finds: instance i1 on host a, i2 on host b.
        where = {'i1': 'uuid-a', 'i2': 'uuid-b'}
        request.same_host_providers = {where[i] for i in request.same_host
                                       if i in where}
        request.different_host_providers = {
            where[i] for i in request.different_host if i in where}
        return request

    def test_same_host_is_not_concerned_without_the_hint(self):
        self.assertIsNone(affinity.SameHostFilter().host_mask(
            self.states, self._request()))

    def test_same_host_passes_only_the_hosts_of_the_instances(self):
        mask = affinity.SameHostFilter().host_mask(
            self.states, self._request(same_host=['i1', 'i2']))
        self.assertEqual(['a', 'b'], fakes.passing(self.states, mask))

    def test_same_host_passes_nothing_when_the_instances_have_no_host(self):
        mask = affinity.SameHostFilter().host_mask(
            self.states, self._request(same_host=['gone']))
        self.assertEqual([], fakes.passing(self.states, mask))

    def test_different_host_is_not_concerned_without_the_hint(self):
        self.assertIsNone(affinity.DifferentHostFilter().host_mask(
            self.states, self._request()))

    def test_different_host_removes_the_hosts_of_the_instances(self):
        mask = affinity.DifferentHostFilter().host_mask(
            self.states, self._request(different_host='i1'))
        self.assertEqual(['b', 'c'], fakes.passing(self.states, mask))


class ServerGroupFiltersTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.states = fakes.states(fakes.host('a'), fakes.host('b'),
                                   fakes.host('c'))

    def _request(self, policy, hosts=(), providers=()):
        request = fakes.request(instance_group={
            'uuid': 'g1', 'policy': policy, 'members': [],
            'hosts': list(hosts)})
        request.group_providers = set(providers)
        return request

    def test_affinity_lets_the_first_member_go_anywhere(self):
        self.assertIsNone(server_group.ServerGroupAffinityFilter().host_mask(
            self.states, self._request('affinity')))

    def test_affinity_passes_only_the_group_hosts(self):
        mask = server_group.ServerGroupAffinityFilter().host_mask(
            self.states, self._request('affinity', hosts=['b']))
        self.assertEqual(['b'], fakes.passing(self.states, mask))

    def test_affinity_counts_hosts_found_from_member_allocations(self):
        mask = server_group.ServerGroupAffinityFilter().host_mask(
            self.states, self._request('affinity', providers=['uuid-c']))
        self.assertEqual(['c'], fakes.passing(self.states, mask))

    def test_affinity_ignores_anti_affinity_groups(self):
        self.assertIsNone(server_group.ServerGroupAffinityFilter().host_mask(
            self.states, self._request('anti-affinity', hosts=['a'])))

    def test_anti_affinity_removes_the_group_hosts(self):
        mask = server_group.ServerGroupAntiAffinityFilter().host_mask(
            self.states, self._request('anti-affinity', hosts=['a'],
                                       providers=['uuid-b']))
        self.assertEqual(['c'], fakes.passing(self.states, mask))

    def test_anti_affinity_ignores_affinity_groups(self):
        self.assertIsNone(
            server_group.ServerGroupAntiAffinityFilter().host_mask(
                self.states, self._request('affinity', hosts=['a'])))

    def test_placed_instances_join_the_group_hosts(self):
        request = self._request('anti-affinity')
        request.placed('uuid-a', 'a')
        mask = server_group.ServerGroupAntiAffinityFilter().host_mask(
            self.states, request)
        self.assertEqual(['b', 'c'], fakes.passing(self.states, mask))


class _OutOfTreeFilter(base.BaseHostFilter):
    pass


class LoadFiltersTest(test_base.TestCase):

    def test_loads_built_in_filters_in_order(self):
        loaded = filters.load_filters(['ResourceFilter', 'ComputeFilter'])
        self.assertEqual(['ResourceFilter', 'ComputeFilter'],
                         [f.name for f in loaded])

    def test_loads_a_filter_by_dotted_path(self):
        loaded = filters.load_filters(
            [f'{__name__}._OutOfTreeFilter'])
        self.assertIsInstance(loaded[0], _OutOfTreeFilter)

    def test_unknown_name_is_a_configuration_error(self):
        error = self.assertRaises(exception.ConfigurationError,
                                  filters.load_filters, ['NoSuchFilter'])
        self.assertIn('ResourceFilter', str(error))

    def test_dotted_path_to_a_non_filter_is_refused(self):
        self.assertRaises(exception.ConfigurationError,
                          filters.load_filters, ['cellboot.conf.CONF'])
