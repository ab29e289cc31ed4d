"""Flow and instance notifications are sent where their events happen.

A super conductor over a flow database (``fleet``: cell1 with hosts h1
and h2, compute casts recorded): what ``sender`` would put on the bus
is caught, and each flow event is checked against what the flow
database says happened.
"""

import threading
from unittest import mock

from cellboot.builds import deletes
from cellboot.flowrun import lookup
from cellboot.notifications import sender
from tests import base
from tests.unit.workflows import fleet
from tests.unit.workflows import test_conductors

HUGE = dict(fleet.SMALL, vcpus=1024)


class EventsTest(test_conductors.SuperConductorSetUp, base.SQLiteMixin,
                 fleet.FleetTestCase):

    def setUp(self):
        super().setUp()
        self.flags(enabled=True, group='notifications')
        self.sent = []
        self._lock = threading.Lock()
        patcher = mock.patch.object(sender, 'send', self._record)
        patcher.start()
        self.addCleanup(patcher.stop)

    def _record(self, ctxt, publisher_id, event_type, priority, payload):
        with self._lock:
            self.sent.append((ctxt, event_type, priority,
                              payload['nova_object.data']))

    def _boot(self, flavor=None):
        store, (uuid,) = self.request(flavor=flavor)
        self.conductor.schedule_and_build_instances(
            self.ctx, [store['build_requests'][uuid]],
            [store['request_spec']])
        return uuid

    def _flow(self, uuid):
        (flow,) = lookup.find_flows(self.flow_url, instance_uuid=uuid)
        return flow

    def _about(self, flow_uuid):
        return [(event_type, data) for _c, event_type, _p, data in self.sent
                if data.get('uuid') == flow_uuid]

    def test_a_boot_flow_that_succeeds_sends_flow_end(self):
        uuid = self._boot()
        flow = self._flow(uuid)
        ((event_type, data),) = self._about(flow['uuid'])
        self.assertEqual(('flow.end', 'boot', 'SUCCESS', None),
                         (event_type, data['name'], data['state'],
                          data['reason']))
        self.assertEqual(flow['meta']['owner'], data['owner'])
        # Under the context of the request that started the flow.
        (ctxt,) = [c for c, event_type, _p, _d in self.sent
                   if event_type == 'flow.end']
        self.assertEqual(self.ctx.request_id, ctxt['request_id'])

    def test_a_boot_without_a_host_sends_flow_revert_and_create_error(self):
        uuid = self._boot(flavor=HUGE)
        flow = self._flow(uuid)
        self.assertEqual('REVERTED', flow['state'])
        ((event_type, data),) = self._about(flow['uuid'])
        self.assertEqual('flow.revert', event_type)
        self.assertEqual('NoValidHost',
                         data['reason']['nova_object.data']['exception'])
        (error,) = [data for _c, event_type, _p, data in self.sent
                    if event_type == 'instance.create.error']
        self.assertEqual((uuid, 'error'), (error['uuid'], error['state']))
        self.assertIn('No valid host',
                      error['fault']['nova_object.data'][
                          'exception_message'])

    def _suspended_boot(self):
        """A boot whose flow is suspended after ``schedule``: (instance
        uuid, flow uuid)."""
        self.conductor.runner.flow_listeners = [
            lambda engine_: test_conductors.SuspendAfter(engine_,
                                                         'schedule')]
        uuid = self._boot()
        self.conductor.runner.flow_listeners = ()
        return uuid, self._flow(uuid)['uuid']

    def test_a_resumed_flow_sends_flow_resume_then_its_end(self):
        _uuid, flow_uuid = self._suspended_boot()
        # Suspended: not an end, nothing sent.
        self.assertEqual([], self._about(flow_uuid))
        self.conductor.runner.resume_unfinished()
        self.assertEqual(['flow.resume', 'flow.end'],
                         [event for event, _d in self._about(flow_uuid)])

    def test_a_flow_handed_over_sends_flow_hand_over(self):
        uuid, flow_uuid = self._suspended_boot()
        self.assertTrue(self.conductor.runner.hand_over(flow_uuid))
        for thread in self.conductor.runner._resumers:
            thread.join(30)
        self.assertEqual(['flow.hand_over', 'flow.resume', 'flow.end'],
                         [event for event, _d in self._about(flow_uuid)])
        self.assertEqual('SUCCESS', self._flow(uuid)['state'])

    def test_a_delete_in_the_cell_sends_delete_start_and_end_once(self):
        uuid = self._boot()
        cell = self.cells[0]
        self.assertTrue(deletes.soft_delete_in_cell(self.ctx, uuid, cell))
        sent = [(event_type, data['uuid'], data['state'])
                for _c, event_type, _p, data in self.sent
                if event_type.startswith('instance.delete.')]
        self.assertEqual([('instance.delete.start', uuid, 'building'),
                          ('instance.delete.end', uuid, 'deleted')], sent)
        (end,) = [data for _c, event_type, _p, data in self.sent
                  if event_type == 'instance.delete.end']
        self.assertIsNotNone(end['deleted_at'])
        # A retried delete finds it deleted: nothing more is sent.
        del self.sent[:]
        self.assertTrue(deletes.soft_delete_in_cell(self.ctx, uuid, cell))
        self.assertEqual([], self.sent)
