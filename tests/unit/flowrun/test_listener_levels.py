"""How loud a reverted flow is in the logs: one warning per cause.

A reschedule flow that runs out of alternates (the cell hands the build
back, a normal end) used to print five WARNING lines; an atom's revert
follows a failure already logged, so it is INFO now, while the failure,
a retry, a revert that failed and the flow's own revert stay WARNING.
"""

from taskflow import engines
from taskflow.patterns import linear_flow
from taskflow import retry
from taskflow import states
from taskflow import task
from taskflow.types import failure as tf_failure

from cellboot.flowrun import listeners
from tests import base

LOGGER = 'cellboot.flowrun.listeners'


class _Fine(task.Task):
    def execute(self):
        return 'fine'


class _Fails(task.Task):
    def execute(self):
        raise RuntimeError('the host failed it')


class ListenerLevelsTest(base.TestCase):

    def _run_reverted(self):
        # The retry controller's REVERTED carries the failure, as the
        # reschedule flow's ``alternates`` does once none is left.
        flow = linear_flow.Flow('demo', retry=retry.Times(1, 'again')).add(
            _Fine('first'), _Fails('second'))
        engine = engines.load(flow)
        with self.assertLogs(LOGGER, 'DEBUG') as log:
            with listeners.LoggingListener(engine, 'demo flow'):
                self.assertRaises(RuntimeError, engine.run)
        return [(record.levelname, record.getMessage())
                for record in log.records]

    def test_the_failure_and_the_flows_revert_are_the_warnings(self):
        warnings = [message for level, message in self._run_reverted()
                    if level == 'WARNING']
        self.assertEqual(
            ['Flow demo flow: task second FAILURE: '
             'RuntimeError: the host failed it',
             'Flow demo (demo flow): REVERTED'], warnings)

    def test_each_atoms_revert_is_info(self):
        records = self._run_reverted()
        self.assertIn(('INFO', 'Flow demo flow: task first REVERTED'),
                      records)
        self.assertIn(('INFO', 'Flow demo flow: task second REVERTED'),
                      records)
        self.assertIn(('INFO', 'Flow demo flow: retry again REVERTED'),
                      records)

    def test_a_revert_that_carries_its_failure_is_info_too(self):
        # TaskFlow hands an atom's REVERTED the failure that caused it
        # when a retry controller gives up (claim-alternate, alternates).
        engine = engines.load(linear_flow.Flow('demo').add(_Fine('first')))
        listener = listeners.LoggingListener(engine, 'demo flow')
        failure = tf_failure.Failure.from_exception(
            RuntimeError('no alternate left'))
        with self.assertLogs(LOGGER, 'DEBUG') as log:
            listener._task_receiver(states.REVERTED, {
                'task_name': 'claim-alternate', 'result': failure})
        self.assertEqual(['INFO'], [r.levelname for r in log.records])
