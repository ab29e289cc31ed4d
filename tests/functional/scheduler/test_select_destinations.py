"""select_destinations against real databases: claims, alternates, errors.

Through both levels of one process (``FleetTestCase.schedulers``): the
API level picks a cell by its aggregate, the cell's scheduler picks and
claims its host. Hints and server groups: ``test_select_hints``; what
the API level does when a cell refuses or is not there:
``test_cells_scheduler``.
"""

from oslo_utils import uuidutils

from cellboot import exception
from tests import base
from tests.functional.scheduler import placement_base
from tests.functional.scheduler.placement_base import spec

SMALL = {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}
BIG = {'vcpus': 5, 'memory_mb': 1024, 'root_gb': 1}


def _uuids(count):
    return [uuidutils.generate_uuid() for _ in range(count)]


class _SelectDestinationsTests:

    def _select(self, request_spec=None, count=1, **kwargs):
        instances = _uuids(count)
        return instances, self.scheduler.select_destinations(
            self.ctx, request_spec or spec(), instances, **kwargs)

    def _select_in(self, cell, request_spec=None, count=1):
        """Straight to one cell's scheduler, as the API level asks it."""
        instances = _uuids(count)
        return instances, self.cell_scheduler(cell).select_destinations(
            self.ctx, request_spec or spec(), instances)

    # -- the chosen host and its claim ---------------------------------

    def test_chosen_host_is_claimed_in_its_cells_database(self):
        uuid = self.add_host('a', cell=1)
        (instance,), [[chosen]] = self._select()
        self.assertEqual(
            (uuid, True, {uuid: SMALL}),
            (chosen['compute_node_uuid'], chosen['claimed'],
             self.held(instance)))

    def test_selection_names_host_node_cell_and_allocation(self):
        self.add_host('a', cell=1)
        _instances, [[chosen]] = self._select()
        self.assertEqual(
            ('a', 'a', self.cells[1].uuid, SMALL),
            (chosen['service_host'], chosen['nodename'],
             chosen['cell_uuid'], chosen['allocation_request']))

    def test_claim_is_applied_to_the_host_states(self):
        uuid = self.add_host('a', vcpus=8)
        self._select()
        [host] = self.hosts()
        self.assertEqual((uuid, 6.0), (host['uuid'],
                                       host['resources']['VCPU']['free']))

    def test_host_states_name_the_cell_of_each_host(self):
        self.add_host('a', cell=0)
        self.add_host('b', cell=1)
        self.assertEqual({'a': self.cells[0].uuid, 'b': self.cells[1].uuid},
                         {h['service_host']: h['cell_uuid']
                          for h in self.hosts()})

    # -- alternates ----------------------------------------------------

    def test_alternates_come_from_the_chosen_hosts_cell_only(self):
        for i in range(4):
            self.add_host(f'c1-{i}', cell=0)
            self.add_host(f'c2-{i}', cell=1)
        for _ in range(6):
            _instances, [hosts] = self._select()
            self.assertEqual({hosts[0]['cell_uuid']},
                             {h['cell_uuid'] for h in hosts})

    def test_alternates_never_include_the_chosen_host(self):
        for i in range(4):
            self.add_host(f'h{i}')
        _instances, [hosts] = self._select()
        names = [h['service_host'] for h in hosts]
        self.assertEqual(len(names), len(set(names)))

    def test_alternates_are_max_attempts_minus_one_and_unclaimed(self):
        self.flags(max_attempts=3, group='scheduler')
        for i in range(5):
            self.add_host(f'h{i}')
        (instance,), [hosts] = self._select()
        self.assertEqual(([True, False, False], 1),
                         ([h['claimed'] for h in hosts],
                          len(self.held(instance))))

    def test_alternates_pass_the_filters(self):
        self.add_host('a', vcpus=8)
        self.add_host('b', vcpus=8)
        self.add_host('tiny', vcpus=1)
        self.add_host('off', vcpus=8, disabled=True)
        _instances, [hosts] = self._select()
        self.assertEqual({'a', 'b'}, {h['service_host'] for h in hosts})

    def test_alternates_are_best_weighed_first(self):
        self.flags(max_attempts=3, group='scheduler')
        self.add_host('big', memory_mb=65536)
        self.add_host('mid', memory_mb=32768)
        self.add_host('small', memory_mb=16384)
        _instances, [hosts] = self._select()
        self.assertEqual(['big', 'mid', 'small'],
                         [h['service_host'] for h in hosts])

    def test_no_alternates_when_not_asked(self):
        for i in range(3):
            self.add_host(f'h{i}')
        _instances, [hosts] = self._select(return_alternates=False)
        self.assertEqual(1, len(hosts))

    # -- weighers: pack or spread --------------------------------------

    def _two_instances_on(self, multiplier):
        self.flags(ram_weight_multiplier=multiplier,
                   cpu_weight_multiplier=multiplier,
                   disk_weight_multiplier=multiplier,
                   group='filter_scheduler')
        self.add_host('a')
        self.add_host('b')
        _instances, selections = self._select(count=2)
        return [hosts[0]['service_host'] for hosts in selections]

    def test_positive_multipliers_spread_instances(self):
        self.assertEqual(2, len(set(self._two_instances_on(1.0))))

    def test_negative_multipliers_pack_instances(self):
        self.assertEqual(1, len(set(self._two_instances_on(-1.0))))

    def test_the_cell_with_the_most_room_on_one_host_is_asked_first(self):
        self.flags(cpu_weight_multiplier=0.0, disk_weight_multiplier=0.0,
                   group='filter_scheduler')
        self.add_host('roomy', cell=1, memory_mb=65536)
        self.add_host('cramped', cell=0, memory_mb=8192)
        for _ in range(3):
            _instances, [hosts] = self._select()
            self.assertEqual('roomy', hosts[0]['service_host'])

    # -- multi-instance requests ---------------------------------------

    def test_instances_of_a_request_consume_capacity_one_by_one(self):
        # Packing fills a host (room for 2) before it moves on.
        self.flags(ram_weight_multiplier=-1.0, group='filter_scheduler')
        a = self.add_host('a', vcpus=4)
        b = self.add_host('b', vcpus=4)
        instances, selections = self._select(count=4)
        chosen = [hosts[0]['compute_node_uuid'] for hosts in selections]
        self.assertEqual((2, 2), (chosen.count(a), chosen.count(b)))
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 40},
                         self.used(a))

    def test_claims_are_released_when_the_request_cannot_complete(self):
        a = self.add_host('a', vcpus=4)
        instances = _uuids(3)
        self.assertRaises(exception.NoValidHost,
                          self.scheduler.select_destinations,
                          self.ctx, spec(), instances)
        self.assertEqual(([{}, {}, {}], 0),
                         ([self.held(i) for i in instances],
                          self.used(a)['VCPU']))

    def test_released_claims_give_the_room_back_to_the_host_states(self):
        self.add_host('a', vcpus=4)
        self.assertRaises(exception.NoValidHost,
                          self.scheduler.select_destinations,
                          self.ctx, spec(), _uuids(3))
        [host] = self.hosts()
        self.assertEqual(4.0, host['resources']['VCPU']['free'])

    def test_a_consumer_asked_again_holds_only_its_new_claim(self):
        a = self.add_host('a', vcpus=8)
        b = self.add_host('b', vcpus=8)
        instance = uuidutils.generate_uuid()
        cell = self.cell_scheduler(0)
        for _ in range(3):  # the API level asking again, as after a timeout
            [[chosen]] = cell.select_destinations(
                self.ctx, spec(), [instance], return_alternates=False)
        held = self.held(instance)
        free = {h['uuid']: h['resources']['VCPU']['free']
                for h in self.hosts()}
        self.assertEqual(
            ({chosen['compute_node_uuid']: SMALL}, 14.0, 2),
            (held, free[a] + free[b],
             self.used(a)['VCPU'] + self.used(b)['VCPU']))

    # -- NoValidHost ---------------------------------------------------
    # (the cells' schedulers started: they publish their aggregates, which
    # the API level reads before it says no)

    def _start_live_cells(self):
        for i in range(len(self.cells)):
            self.cell_scheduler(i).start(self.ctx, refresh_interval=0)
        self.scheduler.start(self.ctx, refresh_interval=0)

    def test_no_valid_host_names_the_cell_filter_that_removed_the_last(self):
        self.add_host('a', vcpus=4)
        self._start_live_cells()
        error = self.assertRaises(exception.NoValidHost, self._select,
                                  spec(BIG))
        self.assertIn('ResourceFilter removed the last 1 cell(s)',
                      str(error))

    def test_no_valid_host_says_which_cells_have_no_host_up(self):
        self.add_host('a', vcpus=4)
        self._start_live_cells()
        error = self.assertRaises(exception.NoValidHost, self._select,
                                  spec(BIG))
        # cell2 has no host at all.
        self.assertIn('ComputeFilter removed 1', str(error))

    def test_a_cells_no_valid_host_names_the_host_filter(self):
        self.add_host('a', vcpus=4)
        self.add_host('b', vcpus=4, disabled=True)
        error = self.assertRaises(exception.NoValidHost, self._select_in, 0,
                                  spec(BIG, availability_zone='nova'))
        self.assertIn('ResourceFilter removed the last 1 host(s)',
                      str(error))
        self.assertIn('ComputeFilter removed 1', str(error))

    def test_no_valid_host_for_an_unknown_zone_names_the_zone_filter(self):
        self.add_host('a')
        self._start_live_cells()
        error = self.assertRaises(exception.NoValidHost, self._select,
                                  spec(availability_zone='elsewhere'))
        self.assertIn('AvailabilityZoneFilter removed the last', str(error))

    def test_no_valid_host_without_any_host_says_no_cell_has_one_up(self):
        self._start_live_cells()
        error = self.assertRaises(exception.NoValidHost, self._select)
        self.assertIn('ComputeFilter removed the last 2 cell(s)', str(error))

    def test_a_cell_without_any_host_says_it_knows_none(self):
        error = self.assertRaises(exception.NoValidHost, self._select_in, 0)
        self.assertIn('knows no compute host', str(error))

    def test_no_valid_host_counts_a_dead_cell_as_not_usable(self):
        self.add_dead_cell()
        self.add_host('a', vcpus=1)
        self._start_live_cells()
        error = self.assertRaises(exception.NoValidHost, self._select)
        self.assertIn('usable removed 1', str(error))

    def test_a_dead_cell_is_skipped_while_others_schedule(self):
        self.add_dead_cell()
        self.add_host('a', cell=1)
        _instances, [hosts] = self._select()
        self.assertEqual('a', hosts[0]['service_host'])

    # -- stale host states ---------------------------------------------

    def test_failed_claim_refreshes_the_host_and_tries_the_next(self):
        full = self.add_host('a', vcpus=64)
        other = self.add_host('b', vcpus=4)
        self.start()
        # Another scheduler of the cell fills the host our states prefer,
        # without announcing it (its change feed is off).
        self.flags(sync_backend='none', group='scheduler')
        self.claim(uuidutils.generate_uuid(), full, {'VCPU': 64})
        self.flags(sync_backend='database', group='scheduler')
        _instances, [hosts] = self._select()
        self.assertEqual(
            (other, 1), (hosts[0]['compute_node_uuid'],
                         self.cell_scheduler(0).manager.failed_claims))
        states = {h['uuid']: h for h in self.hosts()}
        self.assertEqual(0.0, states[full]['resources']['VCPU']['free'])

    # -- the rest of a cell scheduler's API ----------------------------

    def test_update_provider_makes_a_new_host_schedulable_at_once(self):
        self.start()
        uuid = self.add_host('late', provider=False)
        self.cell_scheduler(0).update_provider(
            self.ctx, uuid, 'late',
            {'VCPU': {'total': 4}, 'MEMORY_MB': {'total': 4096},
             'DISK_GB': {'total': 40}})
        _instances, [hosts] = self._select_in(0)
        self.assertEqual(uuid, hosts[0]['compute_node_uuid'])

    def test_update_provider_publishes_the_cells_new_room(self):
        self.start()
        uuid = self.add_host('late', provider=False)
        self.cell_scheduler(0).update_provider(
            self.ctx, uuid, 'late', {'VCPU': {'total': 4}})
        self.scheduler.refresh(self.ctx)
        view = self.scheduler.aggregates.view(self.cells[0].uuid)
        self.assertEqual((1, 4.0), (
            view.aggregate['up_hosts'],
            view.aggregate['resources']['VCPU']['max_free']))

    def test_claim_and_release_through_the_cell_follow_the_database(self):
        uuid = self.add_host('a', vcpus=8)
        self.start()
        cell = self.cell_scheduler(0)
        consumer = uuidutils.generate_uuid()
        cell.claim_resources(self.ctx, consumer, uuid, SMALL)
        [after_claim] = cell.host_states(self.ctx)
        released = cell.release_resources(self.ctx, consumer)
        [after_release] = cell.host_states(self.ctx)
        self.assertEqual(
            (6.0, {uuid: SMALL}, 8.0),
            (after_claim['resources']['VCPU']['free'], released,
             after_release['resources']['VCPU']['free']))

    def test_failed_cell_claim_is_reported_and_refreshes_the_host(self):
        uuid = self.add_host('a', vcpus=2)
        self.start()
        self.claim(uuidutils.generate_uuid(), uuid, SMALL)
        cell = self.cell_scheduler(0)
        self.assertRaises(exception.ClaimFailed, cell.claim_resources,
                          self.ctx, uuidutils.generate_uuid(), uuid, SMALL)
        [host] = cell.host_states(self.ctx)
        self.assertEqual(0.0, host['resources']['VCPU']['free'])

    def test_delete_provider_forgets_the_host(self):
        uuid = self.add_host('a')
        self.start()
        self.cell_scheduler(0).delete_provider(self.ctx, uuid)
        self.assertEqual([], self.hosts())


class SQLiteSelectDestinationsTest(_SelectDestinationsTests,
                                   base.SQLiteMixin,
                                   placement_base.FleetTestCase):
    pass


class MySQLSelectDestinationsTest(_SelectDestinationsTests,
                                  base.MySQLMixin,
                                  placement_base.FleetTestCase):
    pass


class PostgreSQLSelectDestinationsTest(_SelectDestinationsTests,
                                       base.PostgreSQLMixin,
                                       placement_base.FleetTestCase):
    pass
