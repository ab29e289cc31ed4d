"""A compute host that restarts ends the builds it was spawning.

Its spawns died with the previous process: the instances it had taken
(building, spawning on this host) are set ERROR at start, with a fault
naming the host, an Error event ending their create action, and their
claims given back, instead of waiting for the conductors' BUILD
timeout. Builds it had not taken, and other hosts' builds, are left.
"""

from cellboot.compute import manager as compute_manager
from cellboot import exception
from cellboot.objects import fault_messages
from cellboot.objects import instance_fault
from tests import base
from tests.functional.compute import base as compute_base


class UnreachableOnce:
    """The scheduler, whose first ``release_resources`` times out."""

    def __init__(self, scheduler):
        self._scheduler = scheduler
        self.failed = False

    def __getattr__(self, name):
        return getattr(self._scheduler, name)

    def release_resources(self, context, consumer_uuid, provider_uuid=None):
        if not self.failed:
            self.failed = True
            raise exception.RPCTimeout(method='release_resources',
                                       topic='cellboot-scheduler',
                                       timeout=60, url='rabbit://down/')
        return self._scheduler.release_resources(context, consumer_uuid,
                                                 provider_uuid)


class _RestartTests:

    def _spawning(self, manager):
        """A build ``manager``'s host took and was spawning."""
        ctxt = self.new_context()
        instance = self.create_building_instance(ctxt, manager)
        self.assertTrue(instance.claim_build(
            self.ctx, manager.host, manager.node.hypervisor_hostname))
        return ctxt, instance

    def test_a_restart_ends_the_build_it_was_spawning_in_error(self):
        ctxt, instance = self._spawning(self.start_manager())
        self.start_manager()
        fault = instance_fault.InstanceFault.get_latest_for_instances(
            self.ctx, [instance.uuid])[instance.uuid]
        current = self.reload(instance)
        action, events = self.events(ctxt, instance)
        self.assertEqual(
            ('error', None, fault_messages.BUILD_INTERRUPTED,
             'Host host1 restarted while building it',
             'host1', {}, 'Error',
             {compute_manager.EVENT_RESTART: 'Error'}),
            (current.vm_state, current.task_state, fault.message,
             fault.details, fault.host, self.held(instance.uuid),
             action.message,
             {event.event: event.result for event in events}))

    def test_builds_not_taken_or_of_another_host_are_left(self):
        manager = self.start_manager()
        other = self.start_manager('host2')
        untaken = self.create_building_instance(self.new_context(), manager)
        _ctxt, elsewhere = self._spawning(other)
        self.assertEqual(0, self.start_manager().end_interrupted_builds(
            self.ctx))
        self.assertEqual(
            [('building', None), ('building', 'spawning')],
            [(self.reload(inst).vm_state, self.reload(inst).task_state)
             for inst in (untaken, elsewhere)])

    def test_a_claim_the_scheduler_did_not_take_back_goes_at_a_heartbeat(
            self):
        _ctxt, instance = self._spawning(self.start_manager())
        restarted = self.make_manager()
        restarted.scheduler = UnreachableOnce(self.scheduler)
        restarted.init_host(self.ctx)
        self.addCleanup(restarted.stop)
        held = self.held(instance.uuid)
        restarted.report_state(self.ctx)
        self.assertEqual(('error', True, {}),
                         (self.reload(instance).vm_state, bool(held),
                          self.held(instance.uuid)))


class SQLiteRestartTest(_RestartTests, base.SQLiteMixin,
                        compute_base.ComputeTestCase):
    pass


class PostgreSQLRestartTest(_RestartTests, base.PostgreSQLMixin,
                            compute_base.ComputeTestCase):
    pass
