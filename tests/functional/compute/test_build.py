"""build_and_run_instance on a real cell database and a real scheduler."""

from cellboot.compute import manager as compute_manager
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action
from cellboot.objects import instance_fault
from tests import base
from tests.functional.compute import base as compute_base

vm_states = instance_obj.vm_states

ALTERNATES = [
    {'service_host': 'host2', 'nodename': 'host2',
     'compute_node_uuid': '9a3c1b2e-0000-4000-8000-000000000002',
     'cell_uuid': None, 'allocation_request': compute_base.RESOURCES,
     'claimed': False},
]


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

    def test_unreachable_conductor_leaves_error_with_a_fault(self):
        self._fail('reschedule')
        manager = self._host()
        manager.cell_conductor = compute_base.UnreachableConductor()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance, host_list=ALTERNATES)
        fault = instance_fault.InstanceFault.get_latest_for_instances(
            self.ctx, [instance.uuid])[instance.uuid]
        self.assertEqual(
            (vm_states.ERROR, {}, True),
            (self.reload(instance).vm_state, self.held(instance.uuid),
             'could not be rescheduled' in fault.message))

    # -- aborted builds ----------------------------------------------------

    def test_abort_puts_the_instance_in_error_with_a_fault(self):
        self._fail('abort')
        manager = self._host()
        instance = self.create_building_instance(self.ctxt, manager)
        self._build(manager, instance)
        fault = instance_fault.InstanceFault.get_latest_for_instances(
            self.ctx, [instance.uuid])[instance.uuid]
        self.assertEqual(
            (vm_states.ERROR, compute_manager.FAULT_CODE, 'host1', True),
            (self.reload(instance).vm_state, fault.code, fault.host,
             fault.message.startswith(
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
