"""Conductors that find planted flow rows unfinished refuse to run them.

The rows (``tests.functional.planted``) name code, are unfinished and
belong to this host's conductor, which is gone: a conductor starting
(it resumes its host's flows) and the sweeps (they hand over flows that
nobody runs) find them. Each is refused with a WARNING and left as it
is, nothing it names runs, and the conductor goes on with the real
flows beside them. Embedded mode (no jobboard); the jobboard's side is
``tests.functional.jobboard.test_planted_jobs``.
"""

from cellboot.conductor import manager
from cellboot.conductor import sweepers
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.compute import rpcapi as compute_rpcapi
from tests import base
from tests.functional.boot import test_resume
from tests.functional import cluster
from tests.functional import planted
from tests.functional.sweepers import base as sweep_base


class PlantedFlowsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster.Cluster(cells=1,
                                                       hosts_per_cell=2))
        self.cell_url = self.cluster.cells[0].database_connection
        self.in_flows = planted.Plants(self.state_path, 'boot')
        self.in_cell = planted.Plants(self.state_path, 'reschedule')
        self.in_flows.plant(self.cluster.flow_url)
        self.in_cell.plant(self.cell_url)
        # A well-formed boot flow where only reschedule flows belong.
        self.in_cell.plant_meta(self.cell_url, 'boot in a cell',
                                {'kind': 'boot'})
        self.addCleanup(self.assertEqual, ([], []),
                        (self.in_flows.ran(), self.in_cell.ran()))
        self.untouched = {
            (url, label): plants.state(url, label)
            for plants, url in ((self.in_flows, self.cluster.flow_url),
                                (self.in_cell, self.cell_url))
            for label in plants.uuids}
        self.addCleanup(self._assert_untouched)

    def _assert_untouched(self):
        for (url, label), before in self.untouched.items():
            plants = (self.in_flows if url == self.cluster.flow_url
                      else self.in_cell)
            self.assertEqual(before, plants.state(url, label), label)

    def _super_conductor(self, owner):
        conductor = manager.SuperConductorManager(
            scheduler=self.cluster.scheduler)
        conductor.runner.owner = owner
        self.addCleanup(conductor.stop)
        return conductor

    def _cell_conductor(self):
        cell = self.cluster.cells[0]
        conductor = manager.CellConductorManager(
            cell_name=cell.name, database_connection=cell.database_connection,
            scheduler=self.cluster.cell_schedulers[cell.name],
            compute_rpcapi=compute_rpcapi.ComputeAPI(cell.name,
                                                     self.cluster.transport))
        self.addCleanup(conductor.stop)
        return conductor

    def _kill_a_boot(self, owner):
        """A real boot flow left RUNNING by a conductor that died."""
        dying = manager.SuperConductorManager(
            scheduler=self.cluster.scheduler)
        dying.runner.owner = owner
        dying.runner.flow_listeners = [
            lambda engine: test_resume.KillAfter(engine, 'create-in-cell')]
        build_requests, specs = self.cluster.build_request(1)
        self.assertRaises(test_resume.Killed,
                          dying.schedule_and_build_instances,
                          self.cluster.ctx, build_requests, specs)
        return build_requests[0]['instance_uuid']

    def assertWarnedOf(self, log, plants, labels=None):
        text = '\n'.join(log.output)
        for label in labels or plants.uuids:
            self.assertIn(f'Flow {plants.uuids[label]} in the ', text)
            self.assertIn('is corrupt and is never run', text)

    def test_a_starting_super_conductor_resumes_only_the_real_flow(self):
        uuid = self._kill_a_boot('conductor:1')
        survivor = self._super_conductor('conductor:2')
        with self.assertLogs('cellboot.flowrun.lookup', 'WARNING') as log:
            self.assertEqual(1, survivor.start(self.cluster.ctx))
        self.cluster.wait_for_quiet()
        self.assertWarnedOf(log, self.in_flows)
        self.assertEqual('active', self.cluster.find(uuid)[1].vm_state)
        # (The planted flows stay RUNNING for ever, for the operator to
        # see: the invariants would list them.)
        (flow,) = [flow for flow in self.cluster.flows(uuid)
                   if not flow['corrupt']]
        self.assertEqual('SUCCESS', flow['state'])

    def test_a_starting_cell_conductor_resumes_none_of_them(self):
        conductor = self._cell_conductor()
        with self.assertLogs('cellboot.flowrun.lookup', 'WARNING') as log:
            self.assertEqual(0, conductor.start(self.cluster.ctx))
        self.assertWarnedOf(log, self.in_cell)
        self.assertIn('a boot flow is run by the super conductors',
                      '\n'.join(log.output))

    def test_the_super_sweep_hands_over_only_the_real_flow(self):
        self.flags(orphan_build_request_timeout=60, group='conductor')
        uuid = self._kill_a_boot(f'{CONF.host}:{sweep_base.dead_pid()}')
        (flow,) = [flow for flow in self.cluster.flows(uuid)
                   if not flow['corrupt']]
        sweep_base.update_flow_meta(self.cluster.flow_url, flow['uuid'],
                                    started_at=sweep_base.ago(120))
        conductor = self._super_conductor('conductor:2')
        with self.assertLogs('cellboot.flowrun.lookup', 'WARNING') as log:
            done = sweepers.Sweeper(sweepers.checks_for(conductor), 1,
                                    'boot sweeper').sweep_once(
                cb_context.get_admin_context())
        self.assertEqual(1, done['OrphanBuildRequests']['handed_over'])
        self.assertWarnedOf(log, self.in_flows)
        self.cluster.wait_for_quiet()
        self.assertEqual('active', self.cluster.find(uuid)[1].vm_state)

    def test_the_cell_sweep_hands_over_none_of_them(self):
        conductor = self._cell_conductor()
        with self.assertLogs('cellboot.flowrun.lookup', 'WARNING') as log:
            done = sweepers.Sweeper(sweepers.checks_for(conductor), 1,
                                    'cell1 sweeper').sweep_once(
                cb_context.get_admin_context())
        self.assertEqual({'UnownedFlows': {'handed_over': 0},
                          'AbandonedFlows': {'settled': 0},
                          'BuildTimeouts': sweep_base.timeouts(0),
                          'StrayClaims': {'released': 0}}, done)
        self.assertWarnedOf(log, self.in_cell)

    def test_a_planted_flow_handed_to_a_conductor_is_refused(self):
        # However it gets there (a sweep of another version, a job): the
        # run itself refuses it, before it writes anything.
        conductor = self._super_conductor('conductor:2')
        for label, flow_uuid in self.in_flows.uuids.items():
            with self.assertLogs('cellboot.flowrun.runner',
                                 'WARNING') as log:
                self.assertTrue(conductor.runner.hand_over(flow_uuid))
                while conductor.runner._resumers:
                    conductor.runner._resumers.pop().join(30)
            self.assertIn(f'Boot flow {flow_uuid} refused: Flow {flow_uuid} '
                          f'is corrupt and is never run', log.output[0])

    def test_a_cell_conductor_refuses_a_boot_flow_of_its_database(self):
        conductor = self._cell_conductor()
        flow_uuid = self.in_cell.uuids['boot in a cell']
        with self.assertLogs('cellboot.flowrun.runner', 'WARNING') as log:
            self.assertTrue(conductor.runner.hand_over(flow_uuid))
            while conductor.runner._resumers:
                conductor.runner._resumers.pop().join(30)
        self.assertIn('a boot flow is run by the super conductors',
                      log.output[0])
