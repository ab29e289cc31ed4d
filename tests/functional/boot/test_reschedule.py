"""Builds that fail on their host and are retried inside the cell."""

from cellboot.conf import fake_driver
from cellboot.objects import fault_messages
from tests import base
from tests.functional import cluster
from tests.functional import invariants

# The bigger host is the scheduler's first choice (the RAM weigher
# spreads), so a build goes there first and its alternate is host2.
BIG_HOST1 = {'cell1-host1': {'memory_mb': 16384}}


class RescheduleTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster.Cluster(
            cells=1, hosts_per_cell=2, host_capacity=BIG_HOST1))

    def test_a_build_failed_on_its_host_succeeds_on_the_alternate(self):
        self.flags(fail_hosts=['cell1-host1'], group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        _cell, instance = self.cluster.find(uuid)
        self.assertEqual(('active', 'cell1-host2'),
                         (instance.vm_state, instance.host))
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_the_reschedule_flow_is_persisted_in_the_cell(self):
        self.flags(fail_hosts=['cell1-host1'], group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        flows = {flow['kind']: flow for flow in self.cluster.flows(uuid)}
        self.assertEqual(('SUCCESS', 'cell cell1'),
                         (flows['reschedule']['state'],
                          flows['reschedule']['location']))
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_exhausted_alternates_end_in_error_with_a_fault(self):
        self.flags(fail_hosts=['cell1-host1', 'cell1-host2'],
                   group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        _cell, instance = self.cluster.find(uuid)
        fault = self.cluster.fault(uuid)
        self.assertEqual('error', instance.vm_state)
        self.assertEqual(fault_messages.RETRIES_EXCEEDED, fault.message)
        self.assertTrue(fault.details.startswith(
            'Exceeded maximum number of retries'), fault.details)
        self.assertIn('cell1-host2', fault.details)
        self.assertEqual({}, self.cluster.allocations(uuid))
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_an_aborted_build_ends_in_error_with_a_fault(self):
        self.flags(fail_hosts=['cell1-host1'], fail_mode=fake_driver.ABORT,
                   group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        _cell, instance = self.cluster.find(uuid)
        self.assertEqual('error', instance.vm_state)
        fault = self.cluster.fault(uuid)
        self.assertEqual(fault_messages.BUILD_ABORTED, fault.message)
        self.assertIn('aborted', fault.details)
        self.assertEqual({}, self.cluster.allocations(uuid))
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))
