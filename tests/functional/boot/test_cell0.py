"""Builds that fail before they reach a cell end in cell0."""

from cellboot.objects import fault_messages
from cellboot.objects import host_mapping
from tests import base
from tests.functional import cluster
from tests.functional import invariants

HUGE = {'flavorid': 'huge', 'name': 'huge', 'vcpus': 1024,
        'memory_mb': 512, 'root_gb': 1}
# More than half of a cluster host's disk (200 GB, not over-committed).
HALF_A_HOST = {'flavorid': 'half', 'name': 'half', 'vcpus': 1,
               'memory_mb': 512, 'root_gb': 150}


class Cell0Test(base.TestCase):

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster.Cluster(cells=2,
                                                       hosts_per_cell=1))

    def test_no_valid_host_buries_every_instance_in_cell0(self):
        uuids = self.cluster.boot(count=3, flavor=HUGE)
        self.cluster.wait_for_quiet()
        found = [self.cluster.find(uuid) for uuid in uuids]
        self.assertEqual([('cell0', 'error')] * 3,
                         [(cell.name, inst.vm_state) for cell, inst in found])
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_the_cell0_fault_gives_the_schedulers_reason(self):
        (uuid,) = self.cluster.boot(flavor=HUGE)
        self.cluster.wait_for_quiet()
        fault = self.cluster.fault(uuid)
        # The owner's sentence, and the scheduler's reason for admins.
        self.assertEqual(fault_messages.NO_VALID_HOST, fault.message)
        self.assertIn('No valid host was found.', fault.details)
        self.assertIn('VCPU', fault.details)
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_a_boot_flow_that_found_no_host_ends_reverted(self):
        (uuid,) = self.cluster.boot(flavor=HUGE)
        self.cluster.wait_for_quiet()
        (flow,) = self.cluster.flows(uuid)
        self.assertEqual('REVERTED', flow['state'])
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_an_unmapped_host_buries_only_its_instances_in_cell0(self):
        host_mapping.HostMapping.get_by_host(
            self.cluster.ctx, 'cell2-host1').destroy(self.cluster.ctx)
        # One such instance per host: no one cell holds the two, the API
        # level splits them, one to each cell.
        uuids = self.cluster.boot(count=2, flavor=HALF_A_HOST)
        self.cluster.wait_for_quiet()
        where = {}
        for uuid in uuids:
            cell, instance = self.cluster.find(uuid)
            where.setdefault((cell.name, instance.vm_state), []).append(uuid)
        self.assertEqual({('cell0', 'error'), ('cell1', 'active')},
                         set(where))
        for uuid in where[('cell0', 'error')]:
            fault = self.cluster.fault(uuid)
            self.assertEqual(fault_messages.NO_VALID_HOST, fault.message)
            self.assertIn('cell2-host1 is not mapped to any cell',
                          fault.details)
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))
