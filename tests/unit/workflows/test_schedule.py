"""``schedule``: claims for the whole request; cell0 when it fails."""

from taskflow.types import failure

from cellboot.api import server_records
from cellboot.builds import fates
from cellboot import exception
from cellboot.objects import instance_mapping
from cellboot.workflows.tasks import schedule
from tests import base
from tests.unit.workflows import fleet

HUGE = {'vcpus': 64, 'memory_mb': 512, 'root_gb': 1, 'flavorid': 'huge'}


class _ScheduleTests:

    def setUp(self):
        super().setUp()
        self.nodes = [self.add_host('h1'), self.add_host('h2')]
        self.start_scheduler()
        self.task = schedule.Schedule('schedule')

    def _execute(self, store):
        return self.task.execute(self.ctx, self.scheduler,
                                 store['request_spec'],
                                 store['instance_uuids'])

    def _revert(self, store, result, flow_failures=None):
        self.task.revert(self.ctx, self.scheduler, store['request_spec'],
                         store['instance_uuids'], store['build_requests'],
                         result=result, flow_failures=flow_failures or {})

    def test_execute_claims_a_host_for_every_instance(self):
        store, uuids = self.request(2)
        selections = self._execute(store)
        self.assertEqual(sorted(uuids), sorted(selections))
        for uuid in uuids:
            chosen = selections[uuid][0]
            self.assertEqual({chosen['compute_node_uuid']:
                              chosen['allocation_request']}, self.held(uuid))

    def test_execute_gives_alternates_of_the_chosen_cell(self):
        store, (uuid,) = self.request(1)
        hosts = self._execute(store)[uuid]
        self.assertEqual({'h1', 'h2'}, {h['service_host'] for h in hosts})
        self.assertEqual({self.cells[0].uuid}, {h['cell_uuid']
                                                for h in hosts})

    def test_a_resumed_execute_gives_back_what_a_dead_run_claimed(self):
        store, (uuid,) = self.request(1)
        for node in self.nodes:
            self.cell_scheduler.claim_resources(self.ctx, uuid, node,
                                                {'VCPU': 1})
        chosen = self.task.execute(self.ctx, self.scheduler,
                                   store['request_spec'], [uuid],
                                   resumed=True)[uuid][0]
        self.assertEqual({chosen['compute_node_uuid']:
                          chosen['allocation_request']}, self.held(uuid))

    def test_execute_raises_no_valid_host_when_nothing_fits(self):
        store, _uuids = self.request(1, flavor=HUGE)
        self.assertRaises(exception.NoValidHost, self._execute, store)

    def test_revert_of_no_valid_host_buries_every_instance_in_cell0(self):
        store, uuids = self.request(2, flavor=HUGE)
        error = exception.NoValidHost(reason='Not enough VCPU.')
        self._revert(store, failure.Failure.from_exception(error))
        for uuid in uuids:
            self.assertEqual('error',
                             self.instance_in(self.cell0, uuid).vm_state)
            self.assertIn('No valid host was found. Not enough VCPU.',
                          self.fault_of(self.cell0, uuid).details)
            self.assertEqual('cell0', self.mapped_cell(uuid))
            self.assertFalse(self.has_build_request(uuid))

    def test_revert_after_a_later_failure_buries_unsettled_ones_only(self):
        store, (settled, unsettled) = self.request(2)
        selections = self._execute(store)
        instance_mapping.InstanceMapping.get_by_instance_uuid(
            self.ctx, settled).set_cell(self.ctx, self.cells[0].uuid)
        boom = failure.Failure.from_exception(RuntimeError('cell DB gone'))
        self._revert(store, selections, {'create-in-cell': boom})
        self.assertIn('cell DB gone',
                      self.fault_of(self.cell0, unsettled).details)
        self.assertEqual({}, self.held(unsettled))
        self.assertEqual('cell1', self.mapped_cell(settled))
        self.assertNotEqual({}, self.held(settled))

    def test_revert_does_not_bury_what_its_owner_deleted(self):
        store, (uuid,) = self.request(1, flavor=HUGE)
        # As DELETE /servers/{id} does while the server has no cell: the
        # build request and the mapping go together.
        server_records.delete(self.ctx, uuid, self.scheduler)
        error = exception.NoValidHost(reason='Not enough VCPU.')
        self._revert(store, failure.Failure.from_exception(error))
        self.assertTrue(self.instance_in(self.cell0, uuid,
                                         read_deleted=True).deleted)
        self.assertRaises(exception.InstanceMappingNotFound,
                          instance_mapping.InstanceMapping.
                          get_by_instance_uuid, self.ctx, uuid)

    def test_burial_records_an_error_event_in_cell0(self):
        store, (uuid,) = self.request(1, flavor=HUGE)
        error = exception.NoValidHost(reason='Not enough VCPU.')
        self._revert(store, failure.Failure.from_exception(error))
        event = self.events_in(self.cell0, uuid)[0]
        self.assertEqual((fates.SCHEDULE_EVENT, 'Error'),
                         (event.event, event.result))


class SQLiteScheduleTest(_ScheduleTests, base.SQLiteMixin,
                         fleet.FleetTestCase):
    pass


class MySQLScheduleTest(_ScheduleTests, base.MySQLMixin,
                        fleet.FleetTestCase):
    pass


class PostgreSQLScheduleTest(_ScheduleTests, base.PostgreSQLMixin,
                             fleet.FleetTestCase):
    pass
