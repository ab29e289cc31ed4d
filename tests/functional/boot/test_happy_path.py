"""Boots that succeed: one in each of two cells, and a multi-create."""

from tests import base
from tests.functional import cluster
from tests.functional import invariants


class HappyPathTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster.Cluster(cells=2,
                                                       hosts_per_cell=2))

    def test_boots_across_two_cells_end_active_in_their_cells(self):
        uuids = [uuid for cell in self.cluster.cells
                 for uuid in self.cluster.boot(
                     scheduler_hints={'target_cell': cell.name})]
        self.cluster.wait_for_quiet()
        found = [self.cluster.find(uuid) for uuid in uuids]
        self.assertEqual([('cell1', 'active'), ('cell2', 'active')],
                         [(cell.name, inst.vm_state) for cell, inst in found])
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_an_active_instance_holds_its_flavor_on_its_host(self):
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        _cell, instance = self.cluster.find(uuid)
        node = self.cluster.computes[instance.host].node
        self.assertEqual({node.uuid: {'VCPU': 1, 'MEMORY_MB': 512,
                                      'DISK_GB': 10}},
                         self.cluster.allocations(uuid))
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_the_boot_flow_is_persisted_and_succeeds(self):
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        (flow,) = self.cluster.flows(uuid)
        self.assertEqual(('boot', 'SUCCESS', 'flow database'),
                         (flow['kind'], flow['state'], flow['location']))
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_a_multi_create_of_20_ends_all_active(self):
        uuids = self.cluster.boot(count=20)
        self.cluster.wait_for_quiet()
        states = {self.cluster.find(uuid)[1].vm_state for uuid in uuids}
        self.assertEqual({'active'}, states)
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_a_multi_create_is_one_flow(self):
        uuids = self.cluster.boot(count=20)
        self.cluster.wait_for_quiet()
        (flow,) = self.cluster.flows(uuids[0])
        self.assertEqual(sorted(uuids), sorted(flow['instance_uuids']))
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))
