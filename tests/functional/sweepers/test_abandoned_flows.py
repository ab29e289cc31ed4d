"""The cell conductors' sweep settles a reschedule flow an operator abandoned.

A build fails on its host; the cell conductor that runs its reschedule
flow is killed (a SIGKILLed process's pid as owner) as the flow starts
claiming the alternate. The operator abandons the flow
(``abandoning.abandon``, as ``flows abandon`` and the REST action do):
the survivor's next sweep ends the instance in ERROR with the abandon's
fault, its claims given back, at once (not after ``build_timeout``),
never hands the flow over, and marks the note settled. SQLite and
MariaDB, in-process.
"""

from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.flowrun import abandoning
from cellboot.flowrun import abandons
from cellboot.flowrun import lookup
from cellboot.objects import fault_messages
from tests import base
from tests.functional.compute import base as compute_base
from tests.functional import cluster
from tests.functional import invariants
from tests.functional.sweepers import base as sweep_base
from tests.functional.sweepers import test_unowned_reschedule_flows as unowned


class _AbandonedRescheduleTest(unowned._Test):

    BACKEND = 'sqlite'

    def setUp(self):
        base.TestCase.setUp(self)
        self.flags(orphan_build_request_timeout=unowned.TIMEOUT,
                   sweep_interval=3600, group='conductor')
        self.flags(fail_hosts=[unowned.FAILING_HOST], group='fake_driver')
        self.cluster = self.useFixture(cluster.Cluster(
            cells=1, hosts_per_cell=2, backend=self.BACKEND,
            host_capacity=unowned.BIG_FAILING_HOST))
        self.cell = self.cluster.cells[0]
        self.ctx = self.cluster.ctx

    def killed_reschedule(self):
        """``(instance uuid, flow uuid)`` of a reschedule flow whose
        conductor was killed as it claimed the alternate."""
        cast = unowned.Cast()
        uuid = self.reschedule_to(cast)
        self.assertTrue(compute_base.wait_for(lambda: cast.calls))
        ((context, kwargs),) = cast.calls
        dead = self.cell_conductor(
            owner=f'{CONF.host}:{sweep_base.dead_pid()}')
        dead.runner.flow_listeners = [lambda engine_: unowned.KillAt(
            engine_, 'claim-alternate')]
        self.assertRaises(unowned.Killed, dead.build_instances, context,
                          **kwargs)
        return uuid, self.saved_flow()

    def test_the_instance_ends_in_error_with_the_abandons_fault(self):
        uuid, flow_uuid = self.killed_reschedule()
        done = abandoning.abandon(self.ctx, flow_uuid, 'operator-1',
                                  reason='host pool retired')
        self.assertEqual(('reschedule', [uuid]),
                         (done['kind'], done['instance_uuids']))
        self.assertIn('cell cell1', done['settled_by'])
        # Old enough to be handed over, were it not abandoned.
        sweep_base.update_flow_meta(
            self.cell.database_connection, flow_uuid,
            started_at=sweep_base.ago(unowned.TIMEOUT + 1))
        survivor = self.cell_conductor()
        self.addCleanup(survivor.stop)

        done = self.sweep(survivor)

        self.assertEqual(({'handed_over': 0}, {'settled': 1}),
                         (done['UnownedFlows'], done['AbandonedFlows']))
        flow = lookup.get_flow(self.cell.database_connection, flow_uuid)
        note = flow['abandoned']
        self.assertEqual('FAILURE', flow['state'])
        self.assertIsNotNone(note['settled_at'])
        instance = self.cluster.find(uuid)[1]
        fault = self.cluster.fault(uuid)
        self.assertEqual(
            ('error', None, fault_messages.BUILD_ABANDONED,
             abandons.fault_message(flow_uuid, note), {}),
            (instance.vm_state, instance.task_state, fault.message,
             fault.details, self.cluster.allocations(uuid)))
        self.assertTrue(fault.details.endswith(': host pool retired'))
        self.assertEqual([], invariants.check_invariants(self.ctx))
        # Settled: later sweeps leave it, and nobody resumes the flow.
        done = self.sweep(survivor)
        self.assertEqual(({'handed_over': 0}, {'settled': 0}),
                         (done['UnownedFlows'], done['AbandonedFlows']))
        self.assertEqual(0, survivor.start(self.ctx))
        self.assertEqual('FAILURE', lookup.get_flow(
            self.cell.database_connection, flow_uuid)['state'])

    def test_a_build_a_host_took_since_is_left_to_that_host(self):
        uuid, flow_uuid = self.killed_reschedule()
        abandoning.abandon(self.ctx, flow_uuid, 'operator-1')
        # As if the alternate had taken it after the abandon.
        with cb_context.target_cell(self.ctx, self.cell) as cctxt:
            instance = self.cluster.find(uuid)[1]
            instance.update(cctxt, task_state='spawning',
                            host=unowned.OTHER_HOST)
        survivor = self.cell_conductor()
        self.addCleanup(survivor.stop)
        self.assertEqual({'settled': 0},
                         self.sweep(survivor)['AbandonedFlows'])
        self.assertEqual('building', self.cluster.find(uuid)[1].vm_state)


class SQLiteAbandonedRescheduleTest(_AbandonedRescheduleTest):
    pass


class MySQLAbandonedRescheduleTest(_AbandonedRescheduleTest):
    BACKEND = 'mysql'
