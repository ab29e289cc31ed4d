"""build_and_run_instance on a real cell database and a real scheduler."""

import datetime
import threading

from oslo_utils import timeutils

from cellboot.compute import manager as compute_manager
from cellboot.objects import fault_messages
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action
from cellboot.objects import instance_fault
from tests import base
from tests.functional.compute import base as compute_base
from tests.functional.compute import test_restart

vm_states = instance_obj.vm_states

ALTERNATES = [
    {'service_host': 'host2', 'nodename': 'host2',
     'compute_node_uuid': '9a3c1b2e-0000-4000-8000-000000000002',
     'cell_uuid': None, 'allocation_request': compute_base.RESOURCES,
     'claimed': False},
]


class _NoBuildResults:
    """The scheduler, whose database is away for build results."""

    def __init__(self, scheduler):
        self._scheduler = scheduler
        self.refused = 0

    def __getattr__(self, name):
        return getattr(self._scheduler, name)

    def record_build_result(self, context, provider_uuid, succeeded):
        self.refused += 1
        raise RuntimeError('DBConnectionError: the database is away')


class _BuildTests:

    def setUp(self):
        super().setUp()
        self.ctxt = self.new_context()

    def _host(self, on_spawn=None):
        return self.start_manager(on_spawn=on_spawn)

    def _build(self, manager, instance, **kwargs):
        self.build(self.ctxt, manager, instance, **kwargs)

    # -- success -----------------------------------------------------------

    def test_build_makes_the_instance_active_on_host_and_node(self):
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        built = self.reload(instance)
        self.assertEqual((vm_states.ACTIVE, 'host1', 'host1', None),
                         (built.vm_state, built.host, built.node,
                          built.task_state))

    def test_build_sets_launched_at(self):
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        self.assertIsNotNone(self.reload(instance).launched_at)

    def test_build_spawns_through_the_driver(self):
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        self.assertEqual([instance.uuid], manager.driver.list_instances())

    def test_build_keeps_the_claim(self):
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        self.assertEqual({manager.node.uuid: compute_base.RESOURCES},
                         self.held(instance.uuid))

    def test_build_records_a_successful_event_and_finishes_the_action(self):
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        action, [event] = self.events(self.ctxt, instance)
        self.assertEqual(
            (compute_manager.EVENT_BUILD, instance_action.RESULT_SUCCESS,
             'host1', True, None),
            (event.event, event.result, event.host,
             action.finish_time is not None, action.message))

    def test_build_without_an_action_starts_one(self):
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager,
                                                 start_action=False)
        self._build(manager, instance)
        action, [event] = self.events(self.ctxt, instance)
        self.assertEqual((compute_manager.ACTION_CREATE,
                          instance_action.RESULT_SUCCESS),
                         (action.action, event.result))

    def test_build_clears_the_hosts_failure_count(self):
        manager = self._host()
        self.scheduler_api.record_build_result(self.ctx, manager.node.uuid,
                                               False)
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        [host] = self.scheduler_api.host_states(self.ctx)
        self.assertEqual(0, host['failed_builds'])

    def test_later_successes_leave_the_failure_count_alone(self):
        # Only failures make a success worth a call to the scheduler.
        manager = self._host()
        self._build(manager, self.create_building_instance(self.ctxt,
                                                           manager))
        self.scheduler_api.record_build_result(self.ctx, manager.node.uuid,
                                               False)
        self._build(manager, self.create_building_instance(self.ctxt,
                                                           manager))
        [host] = self.scheduler_api.host_states(self.ctx)
        self.assertEqual(1, host['failed_builds'])

    def test_success_after_a_failure_clears_the_failure_count(self):
        manager = self._host()
        self.flags(fail_hosts=['host1'], group='fake_driver')
        self._build(manager, self.create_building_instance(self.ctxt,
                                                           manager))
        self.flags(fail_hosts=[], group='fake_driver')
        self._build(manager, self.create_building_instance(self.ctxt,
                                                           manager))
        [host] = self.scheduler_api.host_states(self.ctx)
        self.assertEqual(0, host['failed_builds'])

    # -- the instance went away --------------------------------------------

    def test_instance_deleted_before_the_build_is_not_spawned(self):
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        instance.destroy(self.ctxt)
        self._build(manager, instance)
        self.assertEqual([], manager.driver.spawned)

    def test_instance_deleted_before_the_build_has_its_claim_released(self):
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        instance.destroy(self.ctxt)
        self._build(manager, instance)
        self.assertEqual({}, self.held(instance.uuid))

    def test_instance_in_error_is_not_spawned_and_holds_no_claim(self):
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        instance.update(self.ctxt, vm_state=vm_states.ERROR)
        self._build(manager, instance)
        self.assertEqual(([], {}), (manager.driver.spawned,
                                    self.held(instance.uuid)))

    def test_instance_meant_for_another_host_is_not_spawned(self):
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        instance.update(self.ctxt, host='host9', node='host9')
        self._build(manager, instance)
        self.assertEqual([], manager.driver.spawned)

    def test_repeated_build_of_an_active_instance_keeps_it_and_its_claim(
            self):
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        self._build(manager, instance)
        self.assertEqual(
            ([instance.uuid], vm_states.ACTIVE,
             {manager.node.uuid: compute_base.RESOURCES}),
            (manager.driver.spawned, self.reload(instance).vm_state,
             self.held(instance.uuid)))

    def test_instance_deleted_during_spawn_has_its_claim_released(self):
        manager = self._host(
            on_spawn=lambda inst: inst.destroy(self.ctxt))
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        self.assertEqual({}, self.held(instance.uuid))

    def test_instance_deleted_during_spawn_is_removed_from_the_host(self):
        manager = self._host(
            on_spawn=lambda inst: inst.destroy(self.ctxt))
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        self.assertEqual(([instance.uuid], []),
                         (manager.driver.spawned,
                          manager.driver.list_instances()))

    def test_instance_deleted_during_spawn_stays_deleted(self):
        manager = self._host(
            on_spawn=lambda inst: inst.destroy(self.ctxt))
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        built = self.reload(instance)
        self.assertEqual((True, vm_states.DELETED),
                         (built.deleted, built.vm_state))

    # -- reschedulable failures --------------------------------------------

    def _fail(self, mode):
        self.flags(fail_hosts=['host1'], fail_mode=mode,
                   group='fake_driver')

    def test_reschedule_releases_the_claim(self):
        self._fail('reschedule')
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance, host_list=ALTERNATES)
        self.assertEqual({}, self.held(instance.uuid))

    def test_a_release_the_scheduler_cannot_do_does_not_hold_the_build(
            self):
        # Its database restarting: the build is handed back all the same,
        # and the host's claim goes at its next heartbeat.
        self._fail('reschedule')
        manager = self._host()
        manager.scheduler = test_restart.UnreachableOnce(self.scheduler)
        instance = self.create_building_instance(self.ctxt, manager)
        held = self.held(instance.uuid)
        self._build(manager, instance, host_list=ALTERNATES)
        self.assertEqual(
            (True, 1, 'rescheduling', True),
            (manager.scheduler.failed, len(self.conductor.casts),
             self.reload(instance).task_state, held ==
             self.held(instance.uuid)))
        manager.report_state(self.ctx)
        self.assertEqual({}, self.held(instance.uuid))

    def test_a_build_result_the_scheduler_cannot_take_does_not_hold_it(
            self):
        self._fail('reschedule')
        manager = self._host()
        manager.scheduler = _NoBuildResults(self.scheduler)
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance, host_list=ALTERNATES)
        self.assertEqual(
            (1, 1, 'rescheduling', {}),
            (manager.scheduler.refused, len(self.conductor.casts),
             self.reload(instance).task_state, self.held(instance.uuid)))

    def test_reschedule_casts_build_instances_with_the_alternates(self):
        self._fail('reschedule')
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance, host_list=ALTERNATES)
        [cast] = self.conductor.casts
        self.assertEqual((instance.uuid, ALTERNATES,
                          {'flavor': compute_base.FLAVOR,
                           'num_instances': 1}),
                         (cast['instance']['uuid'], cast['host_list'],
                          cast['request_spec']))

    def test_first_reschedule_counts_one_attempt_on_this_host(self):
        self._fail('reschedule')
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance, host_list=ALTERNATES)
        retry = self.conductor.casts[0]['retry']
        self.assertEqual((1, [['host1', 'host1']]),
                         (retry['num_attempts'], retry['hosts']))

    def test_reschedule_adds_this_host_to_the_earlier_attempts(self):
        self._fail('reschedule')
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance, retry={
            'num_attempts': 1, 'hosts': [['host0', 'host0']],
            'last_failure': 'earlier'})
        retry = self.conductor.casts[0]['retry']
        self.assertEqual((2, [['host0', 'host0'], ['host1', 'host1']]),
                         (retry['num_attempts'], retry['hosts']))

    def test_reschedule_names_the_failure_as_last_failure(self):
        self._fail('reschedule')
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        self.assertIn('fail_hosts',
                      self.conductor.casts[0]['retry']['last_failure'])

    def test_reschedule_leaves_the_instance_building(self):
        self._fail('reschedule')
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        self.assertEqual(vm_states.BUILDING, self.reload(instance).vm_state)

    def test_reschedule_records_an_error_event_with_the_failure(self):
        self._fail('reschedule')
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        action, [event] = self.events(self.ctxt, instance)
        self.assertEqual(
            (instance_action.RESULT_ERROR, True, None),
            (event.result, 'fail_hosts' in event.details,
             action.finish_time))

    def test_reschedule_counts_a_failed_build_against_the_host(self):
        self._fail('reschedule')
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        [host] = self.scheduler_api.host_states(self.ctx)
        self.assertEqual(1, host['failed_builds'])

    def test_unexpected_driver_error_is_rescheduled_with_its_traceback(self):
        def broken(inst):
            raise RuntimeError('hypervisor went away')

        manager = self._host(on_spawn=broken)
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        _action, [event] = self.events(self.ctxt, instance)
        self.assertEqual(
            (True, True),
            ('RuntimeError: hypervisor went away' in
             self.conductor.casts[0]['retry']['last_failure'],
             'Traceback' in event.traceback))

    def test_unreachable_conductor_leaves_it_rescheduling_for_a_sweep(self):
        # Not ERROR: the cell conductors' check of untaken builds finds
        # it and reschedules it from what it stored
        # (tests/functional/sweepers/test_untaken_builds.py).
        self._fail('reschedule')
        manager = self._host()
        manager.cell_conductor = compute_base.UnreachableConductor()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance, host_list=ALTERNATES)
        left = self.reload(instance)
        self.assertEqual(
            (vm_states.BUILDING, 'rescheduling', {}, {}, ALTERNATES, 1),
            (left.vm_state, left.task_state, self.held(instance.uuid),
             instance_fault.InstanceFault.get_latest_for_instances(
                 self.ctx, [instance.uuid]),
             left.build_args['host_list'],
             left.build_args['retry']['num_attempts']))

    # -- aborted builds ----------------------------------------------------

    def test_abort_puts_the_instance_in_error_with_a_fault(self):
        self._fail('abort')
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        fault = instance_fault.InstanceFault.get_latest_for_instances(
            self.ctx, [instance.uuid])[instance.uuid]
        self.assertEqual(
            (vm_states.ERROR, compute_manager.FAULT_CODE, 'host1',
             fault_messages.BUILD_ABORTED, True),
            (self.reload(instance).vm_state, fault.code, fault.host,
             fault.message, fault.details.startswith(
                 f'Build of instance {instance.uuid} on host host1 '
                 f'aborted')))

    def test_abort_releases_the_claim(self):
        self._fail('abort')
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        self.assertEqual({}, self.held(instance.uuid))

    def test_abort_casts_no_reschedule(self):
        self._fail('abort')
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance, host_list=ALTERNATES)
        self.assertEqual([], self.conductor.casts)

    def test_abort_ends_the_action_in_error(self):
        self._fail('abort')
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        action, [event] = self.events(self.ctxt, instance)
        self.assertEqual(
            (instance_action.RESULT_ERROR, instance_action.RESULT_ERROR,
             True),
            (event.result, action.message, action.finish_time is not None))

    def test_abort_of_an_instance_deleted_meanwhile_leaves_it_deleted(self):
        self._fail('abort')
        manager = self._host(on_spawn=lambda inst: inst.destroy(self.ctxt))
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        self.assertEqual((vm_states.DELETED, {}),
                         (self.reload(instance).vm_state,
                          self.held(instance.uuid)))


class SQLiteBuildTest(_BuildTests, base.SQLiteMixin,
                      compute_base.ComputeTestCase):
    pass


class MySQLBuildTest(_BuildTests, base.MySQLMixin,
                     compute_base.ComputeTestCase):
    pass


class PostgreSQLBuildTest(_BuildTests, base.PostgreSQLMixin,
                          compute_base.ComputeTestCase):
    pass


class _IdempotenceTests:
    """A build message that arrives twice builds once (CONTRACT 5.).

    On SQLite and one server database: the conditional claim is one
    UPDATE, which the other backends run the same way.
    """

    def setUp(self):
        super().setUp()
        self.ctxt = self.new_context()

    def test_the_host_takes_the_build_as_spawning_on_itself(self):
        seen = []
        manager = self.start_manager(
            on_spawn=lambda inst: seen.append(self.reload(inst)))
        instance = self.create_building_instance(self.ctxt, manager)
        self.build(self.ctxt, manager, instance)
        self.assertEqual(
            [(instance_obj.task_states.SPAWNING, 'host1')],
            [(inst.task_state, inst.host) for inst in seen])

    def test_a_duplicate_during_the_spawn_is_dropped_and_keeps_the_claim(
            self):
        # The duplicate arrives while the first copy spawns (here: from
        # inside the spawn, so no timing is involved). It used to spawn
        # too and, losing the race to ACTIVE, release the claim of the
        # instance the first copy made ACTIVE.
        duplicates = []

        def duplicate(inst):
            if not duplicates:
                duplicates.append(inst.uuid)
                self.build(self.ctxt, manager, instance)

        manager = self.start_manager(on_spawn=duplicate)
        instance = self.create_building_instance(self.ctxt, manager)
        self.build(self.ctxt, manager, instance)
        self.assertEqual(
            ([instance.uuid], [instance.uuid], vm_states.ACTIVE,
             {manager.node.uuid: compute_base.RESOURCES}),
            (manager.driver.spawned, manager.driver.list_instances(),
             self.reload(instance).vm_state, self.held(instance.uuid)))

    def test_concurrent_copies_of_a_build_spawn_once(self):
        self.flags(spawn_time=0.2, group='fake_driver')
        manager = self.start_manager()
        instance = self.create_building_instance(self.ctxt, manager)
        threads = [threading.Thread(
            target=self.build, args=(self.new_context(), manager, instance))
            for _copy in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(
            ([instance.uuid], vm_states.ACTIVE,
             {manager.node.uuid: compute_base.RESOURCES}),
            (manager.driver.spawned, self.reload(instance).vm_state,
             self.held(instance.uuid)))

    def test_reschedule_hands_the_build_back_with_what_it_is_sent(self):
        self.flags(fail_hosts=['host1'], group='fake_driver')
        manager = self.start_manager()
        instance = self.create_building_instance(self.ctxt, manager)
        self.build(self.ctxt, manager, instance, host_list=ALTERNATES)
        handed = self.reload(instance)
        self.assertEqual(
            ('rescheduling', ALTERNATES, 1, [['host1', 'host1']]),
            (handed.task_state, handed.build_args['host_list'],
             handed.build_args['retry']['num_attempts'],
             handed.build_args['retry']['hosts']))

    def test_the_next_host_takes_a_rescheduled_build(self):
        self.flags(fail_hosts=['host1'], group='fake_driver')
        first = self.start_manager()
        second = self.start_manager('host2')
        instance = self.create_building_instance(self.ctxt, first)
        self.build(self.ctxt, first, instance, host_list=ALTERNATES)
        # What the cell conductor's claim-alternate does.
        self.scheduler.claim_resources(self.ctxt, instance.uuid,
                                       second.node.uuid,
                                       dict(compute_base.RESOURCES))
        self.reload(instance).move_build(self.ctxt, 'host2', 'host2',
                                         self.reload(instance).build_args)
        self.build(self.ctxt, second, instance)
        built = self.reload(instance)
        self.assertEqual(
            (vm_states.ACTIVE, 'host2', None,
             {second.node.uuid: compute_base.RESOURCES}),
            (built.vm_state, built.host, built.task_state,
             self.held(instance.uuid)))

    def test_a_timed_out_build_that_finishes_late_stays_error_unclaimed(
            self):
        def time_out(inst):
            self.assertTrue(self.reload(inst).time_out_build(
                self.ctx, timeutils.utcnow() + datetime.timedelta(
                    seconds=1)))

        manager = self.start_manager(on_spawn=time_out)
        instance = self.create_building_instance(self.ctxt, manager)
        self.build(self.ctxt, manager, instance)
        self.assertEqual(
            (vm_states.ERROR, [], {}),
            (self.reload(instance).vm_state, manager.driver.list_instances(),
             self.held(instance.uuid)))

    def test_a_build_moved_to_another_host_meanwhile_is_not_finished_here(
            self):
        # A replayed cast reached this host while a reschedule moved the
        # build on (the cell conductor claimed host2 and pointed the
        # instance at it): host2's claim and build are not this host's.
        second = self.start_manager('host2')

        def moved(inst):
            self.scheduler.claim_resources(self.ctxt, inst.uuid,
                                           second.node.uuid,
                                           dict(compute_base.RESOURCES))
            self.reload(inst).update(self.ctx, host='host2', node='host2')

        manager = self.start_manager(on_spawn=moved)
        instance = self.create_building_instance(self.ctxt, manager)
        self.build(self.ctxt, manager, instance)
        built = self.reload(instance)
        self.assertEqual(
            (vm_states.BUILDING, 'host2', [],
             {second.node.uuid: compute_base.RESOURCES}),
            (built.vm_state, built.host, manager.driver.list_instances(),
             self.held(instance.uuid)))

    def test_a_late_duplicate_of_a_timed_out_build_releases_this_host(self):
        manager = self.start_manager()
        instance = self.create_building_instance(self.ctxt, manager)
        self.reload(instance).time_out_build(
            self.ctx, timeutils.utcnow() + datetime.timedelta(seconds=1))
        self.build(self.ctxt, manager, instance)
        self.assertEqual(([], {}), (manager.driver.spawned,
                                    self.held(instance.uuid)))


class SQLiteIdempotenceTest(_IdempotenceTests, base.SQLiteMixin,
                            compute_base.ComputeTestCase):
    pass


class MySQLIdempotenceTest(_IdempotenceTests, base.MySQLMixin,
                           compute_base.ComputeTestCase):
    pass
