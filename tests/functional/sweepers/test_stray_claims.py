"""A claim a late message re-made off an ACTIVE instance's host goes back.

An in-process deployment (``fake://``) of one cell and three hosts, on
SQLite, MariaDB and PostgreSQL (the sweep's query is one join). The
late message is played by the cell's own scheduler: it claims a host
for an instance that is ACTIVE elsewhere, as a request delivered again
after a RabbitMQ restart does (what ``make faults`` met). The cell
conductor's sweep must give back that claim, and only that one.
"""

from cellboot.compute import rpcapi as compute_rpcapi
from cellboot.conductor import manager as conductor_manager
from cellboot.conductor import stray_claims
from cellboot import context as cb_context
from cellboot.objects import compute_node as compute_node_obj
from cellboot.objects import instance as instance_obj
from tests import base
from tests.functional import cluster
from tests.functional import invariants

RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


class StrayClaimsTest(base.TestCase):

    BACKEND = 'sqlite'

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster.Cluster(
            cells=1, hosts_per_cell=3, backend=self.BACKEND))
        self.cell = self.cluster.cells[0]
        self.ctx = cb_context.get_admin_context()
        self.scheduler = self.cluster.cell_schedulers[self.cell.name]
        self.check = stray_claims.StrayClaims(
            conductor_manager.CellConductorManager(
                cell_name=self.cell.name,
                database_connection=self.cell.database_connection,
                scheduler=self.scheduler,
                compute_rpcapi=compute_rpcapi.ComputeAPI(
                    self.cell.name, self.cluster.transport)))

    def _providers(self):
        with cb_context.target_cell(self.ctx, self.cell) as cctxt:
            return {node.host: node.uuid for node in
                    compute_node_obj.ComputeNode.get_all(cctxt)}

    def _active(self):
        """One server booted and ACTIVE: (uuid, its host)."""
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        instance = self.cluster.find(uuid)[1]
        self.assertEqual('active', instance.vm_state)
        return uuid, instance.host

    def _other(self, host):
        return next(uuid for name, uuid in sorted(self._providers().items())
                    if name != host)

    def _late_claim(self, uuid, provider):
        self.scheduler.claim_resources(self.ctx, uuid, provider, RESOURCES)

    def test_a_claim_off_an_active_instances_host_is_given_back(self):
        uuid, host = self._active()
        own, stray = self._providers()[host], self._other(host)
        before = self.cluster.allocations(uuid)
        self.assertEqual([own], list(before))
        self._late_claim(uuid, stray)
        self.assertEqual({own, stray}, set(self.cluster.allocations(uuid)))
        self.assertNotEqual([], invariants.check_invariants(self.ctx))
        with self.assertLogs('cellboot.conductor.stray_claims',
                             'WARNING') as log:
            self.assertEqual({'released': 1}, self.check.sweep_once(self.ctx))
        self.assertIn(f'Instance {uuid} is active on another host but holds '
                      f'a claim on resource provider {stray}', log.output[0])
        self.assertEqual(before, self.cluster.allocations(uuid))
        self.assertEqual([], invariants.check_invariants(self.ctx))
        self.assertEqual({'released': 0}, self.check.sweep_once(self.ctx))

    def test_a_building_instances_claims_are_left_to_its_build(self):
        # A build under way may hold a claim on the host it is moving to
        # before its row names that host (claim-alternate): not stray.
        uuid, host = self._active()
        stray = self._other(host)
        with cb_context.target_cell(self.ctx, self.cell) as cctxt:
            instance_obj.Instance(uuid=uuid).update(
                cctxt, vm_state='building', task_state='spawning')
        self._late_claim(uuid, stray)
        self.assertEqual({'released': 0}, self.check.sweep_once(self.ctx))
        self.assertIn(stray, self.cluster.allocations(uuid))

    def test_a_consumer_that_is_no_instance_of_the_cell_is_left_alone(self):
        # A boot in flight claims before its instance row exists, and an
        # allocation request has none: the super conductor judges those.
        uuid, host = self._active()
        before = self.cluster.allocations(uuid)
        other = '5b4c2f4e-8d55-4a3e-9a7e-9d3f1c2b7a60'
        self._late_claim(other, self._other(host))
        self.assertEqual({'released': 0}, self.check.sweep_once(self.ctx))
        self.assertEqual(1, len(self.cluster.allocations(other)))
        self.assertEqual(before, self.cluster.allocations(uuid))

    def test_a_release_the_scheduler_cannot_do_now_is_found_again(self):
        uuid, host = self._active()
        stray = self._other(host)
        self._late_claim(uuid, stray)
        real = self.scheduler.release_resources

        def unreachable(*args, **kwargs):
            raise ConnectionError('scheduler unreachable')

        self.scheduler.release_resources = unreachable
        self.assertEqual({'released': 0}, self.check.sweep_once(self.ctx))
        self.assertIn(stray, self.cluster.allocations(uuid))
        self.scheduler.release_resources = real
        self.assertEqual({'released': 1}, self.check.sweep_once(self.ctx))
        self.assertNotIn(stray, self.cluster.allocations(uuid))


class MySQLStrayClaimsTest(base.MySQLMixin, StrayClaimsTest):
    pass


class PostgreSQLStrayClaimsTest(base.PostgreSQLMixin, StrayClaimsTest):
    pass
