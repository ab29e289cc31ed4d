"""select_destinations against real databases: claims, alternates, errors."""

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.objects import instance_mapping
from cellboot.objects import server_group
from cellboot.scheduler import api
from cellboot.scheduler.resources import claims
from tests import base
from tests.functional.scheduler import placement_base
from tests.functional.scheduler.placement_base import spec

SMALL = {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}


def _uuids(count):
    return [uuidutils.generate_uuid() for _ in range(count)]


class _SelectDestinationsTests:

    def setUp(self):
        super().setUp()
        self.scheduler = api.SchedulerAPI()

    def _select(self, request_spec=None, count=1, **kwargs):
        instances = _uuids(count)
        return instances, self.scheduler.select_destinations(
            self.ctx, request_spec or spec(), instances, **kwargs)

    # -- the chosen host and its claim ---------------------------------

    def test_chosen_host_is_claimed_in_the_database(self):
        uuid = self.add_host('a')
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
        [host] = self.scheduler.host_states(self.ctx)
        self.assertEqual((uuid, 6.0), (host['uuid'],
                                       host['resources']['VCPU']['free']))

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
        [host] = self.scheduler.host_states(self.ctx)
        self.assertEqual(4.0, host['resources']['VCPU']['free'])

    def test_anti_affinity_spreads_the_instances_of_one_request(self):
        for i in range(3):
            self.add_host(f'h{i}')
        group = {'uuid': 'g1', 'policy': 'anti-affinity', 'members': [],
                 'hosts': []}
        _instances, selections = self._select(spec(instance_group=group),
                                              count=3)
        self.assertEqual(3, len({hosts[0]['service_host']
                                 for hosts in selections}))

    def test_affinity_keeps_the_instances_of_one_request_together(self):
        for i in range(3):
            self.add_host(f'h{i}')
        group = {'uuid': 'g1', 'policy': 'affinity', 'members': [],
                 'hosts': []}
        _instances, selections = self._select(spec(instance_group=group),
                                              count=3)
        self.assertEqual(1, len({hosts[0]['service_host']
                                 for hosts in selections}))

    def test_anti_affinity_avoids_hosts_of_existing_members(self):
        a = self.add_host('a')
        self.add_host('b')
        claims.claim_resources(self.ctx, 'member-1', a, SMALL)
        group = {'uuid': 'g1', 'policy': 'anti-affinity',
                 'members': ['member-1']}
        for _ in range(3):
            _instances, [hosts] = self._select(spec(instance_group=group))
            self.assertEqual('b', hosts[0]['service_host'])

    def test_group_hint_loads_the_server_group(self):
        a = self.add_host('a')
        self.add_host('b')
        group = server_group.ServerGroup.create(
            self.ctx, 'web', 'project', 'affinity')
        group.add_members(self.ctx, ['member-1'])
        claims.claim_resources(self.ctx, 'member-1', a, SMALL)
        _instances, [hosts] = self._select(
            spec(scheduler_hints={'group': group.uuid}))
        self.assertEqual('a', hosts[0]['service_host'])

    def test_group_hint_naming_no_group_is_no_valid_host(self):
        self.add_host('a')
        error = self.assertRaises(
            exception.NoValidHost, self._select,
            spec(scheduler_hints={'group': uuidutils.generate_uuid()}))
        self.assertIn('does not exist', str(error))

    def _server_on(self, provider, project_id='project-a'):
        """A server of ``project_id`` holding SMALL on ``provider``."""
        uuid = uuidutils.generate_uuid()
        instance_mapping.InstanceMapping.create(self.ctx, uuid, project_id)
        claims.claim_resources(self.ctx, uuid, provider, SMALL)
        return uuid

    def test_same_host_hint_follows_the_named_instance(self):
        self.add_host('a')
        b = self.add_host('b')
        vm = self._server_on(b)
        _instances, [hosts] = self._select(
            spec(scheduler_hints={'same_host': [vm]},
                 project_id='project-a'))
        self.assertEqual(['b'], [h['service_host'] for h in hosts])

    def test_same_host_with_another_projects_server_is_as_unknown(self):
        self.add_host('a')
        b = self.add_host('b')
        theirs = self._server_on(b, project_id='project-b')
        unknown = uuidutils.generate_uuid()
        errors = [str(self.assertRaises(
            exception.NoValidHost, self._select,
            spec(scheduler_hints={'same_host': [uuid]},
                 project_id='project-a'))).replace(uuid, 'UUID')
            for uuid in (theirs, unknown)]
        self.assertEqual(errors[1], errors[0])

    def test_different_host_avoids_the_projects_own_server(self):
        self.add_host('a')
        b = self.add_host('b')
        vm = self._server_on(b)
        for _ in range(3):
            _instances, [hosts] = self._select(
                spec(scheduler_hints={'different_host': [vm]},
                     project_id='project-a'))
            self.assertEqual(['a'], [h['service_host'] for h in hosts])

    def test_different_host_ignores_another_projects_server(self):
        self.add_host('a', vcpus=64)
        b = self.add_host('b', vcpus=64)
        theirs = self._server_on(b, project_id='project-b')
        chosen = set()
        for _ in range(8):
            _instances, [hosts] = self._select(
                spec(scheduler_hints={'different_host': [theirs]},
                     project_id='project-a'))
            chosen.add(hosts[0]['service_host'])
        # b stays a candidate: as if the uuid were unknown (the weighers
        # spread the claims over both hosts).
        self.assertIn('b', chosen)

    def test_hints_without_a_project_resolve_no_server(self):
        self.add_host('a')
        b = self.add_host('b')
        vm = self._server_on(b)
        self.assertRaises(exception.NoValidHost, self._select,
                          spec(scheduler_hints={'same_host': [vm]}))

    def test_target_cell_by_name(self):
        self.add_host('a', cell=0)
        self.add_host('b', cell=1)
        _instances, [hosts] = self._select(
            spec(scheduler_hints={'target_cell': 'cell2'}))
        self.assertEqual('b', hosts[0]['service_host'])

    # -- NoValidHost ---------------------------------------------------

    def test_no_valid_host_names_the_filter_that_removed_the_last(self):
        self.add_host('a', vcpus=4)
        self.add_host('b', vcpus=4, disabled=True)
        error = self.assertRaises(
            exception.NoValidHost, self._select,
            spec({'vcpus': 5, 'memory_mb': 1024, 'root_gb': 1},
                 availability_zone='nova'))
        self.assertIn('ResourceFilter removed the last 1 host(s)',
                      str(error))
        self.assertIn('ComputeFilter removed 1', str(error))

    def test_no_valid_host_for_an_unknown_zone_names_the_zone_filter(self):
        self.add_host('a')
        error = self.assertRaises(exception.NoValidHost, self._select,
                                  spec(availability_zone='elsewhere'))
        self.assertIn('AvailabilityZoneFilter removed the last 1 host(s)',
                      str(error))

    def test_no_valid_host_without_any_host_says_none_is_known(self):
        error = self.assertRaises(exception.NoValidHost, self._select)
        self.assertIn('knows no compute host', str(error))

    # -- stale host states ---------------------------------------------

    def test_failed_claim_refreshes_the_host_and_tries_the_next(self):
        full = self.add_host('a', vcpus=64)
        other = self.add_host('b', vcpus=4)
        self.scheduler.start(self.ctx, refresh_interval=0)
        # Another scheduler fills the host our states prefer.
        claims.claim_resources(self.ctx, 'elsewhere', full,
                               {'VCPU': 64})
        _instances, [hosts] = self._select()
        self.assertEqual((other, 1), (hosts[0]['compute_node_uuid'],
                                      self.scheduler.manager.failed_claims))
        states = {h['uuid']: h for h in self.scheduler.host_states(self.ctx)}
        self.assertEqual(0.0, states[full]['resources']['VCPU']['free'])

    def test_no_valid_host_names_the_cells_that_did_not_answer(self):
        dead = self.add_dead_cell()
        self.add_host('a', vcpus=1)
        error = self.assertRaises(exception.NoValidHost, self._select)
        self.assertIn(f'did not answer at the last host state load were '
                      f'not considered: {dead.uuid}', str(error))

    def test_a_dead_cell_is_skipped_while_others_schedule(self):
        self.add_dead_cell()
        self.add_host('a', cell=1)
        _instances, [hosts] = self._select()
        self.assertEqual('a', hosts[0]['service_host'])

    # -- the rest of the scheduler API ---------------------------------

    def test_update_provider_makes_a_new_host_schedulable_at_once(self):
        self.scheduler.start(self.ctx, refresh_interval=0)
        uuid = self.add_host('late', provider=False)
        self.scheduler.update_provider(
            self.ctx, uuid, 'late', self.cells[0].uuid,
            {'VCPU': {'total': 4}, 'MEMORY_MB': {'total': 4096},
             'DISK_GB': {'total': 40}})
        _instances, [hosts] = self._select()
        self.assertEqual(uuid, hosts[0]['compute_node_uuid'])

    def test_claim_and_release_through_the_api_follow_the_database(self):
        uuid = self.add_host('a', vcpus=8)
        self.scheduler.start(self.ctx, refresh_interval=0)
        self.scheduler.claim_resources(self.ctx, 'vm-1', uuid, SMALL)
        after_claim = self.scheduler.host_states(self.ctx)[0]
        released = self.scheduler.release_resources(self.ctx, 'vm-1')
        after_release = self.scheduler.host_states(self.ctx)[0]
        self.assertEqual(
            (6.0, {uuid: SMALL}, 8.0),
            (after_claim['resources']['VCPU']['free'], released,
             after_release['resources']['VCPU']['free']))

    def test_failed_api_claim_is_reported_and_refreshes_the_host(self):
        uuid = self.add_host('a', vcpus=2)
        self.scheduler.start(self.ctx, refresh_interval=0)
        claims.claim_resources(self.ctx, 'other', uuid, SMALL)
        self.assertRaises(exception.ClaimFailed,
                          self.scheduler.claim_resources,
                          self.ctx, 'vm-1', uuid, SMALL)
        [host] = self.scheduler.host_states(self.ctx)
        self.assertEqual(0.0, host['resources']['VCPU']['free'])


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
