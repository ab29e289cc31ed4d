"""What a fenced-out run relies on, without a database.

``fencing.FencedOut`` is a BaseException so that TaskFlow lets it
through untouched: raised by an atom, or by the storage as the engine
starts the next atom, it must stop the engine where it is, with no
revert of the atoms that ran and no failure recorded. These tests hold
TaskFlow to that (a new TaskFlow that caught it would fail here), and
check the fence's own refusals of garbage.
"""

from unittest import mock

from taskflow.patterns import linear_flow
from taskflow import states
from taskflow import task
from taskflow.utils import persistence_utils

from cellboot.flowrun import engine as flow_engine
from cellboot.flowrun import fencing
from tests import base

FLOW = '9a1f3c3e-0000-4000-8000-000000000001'


class Recorded(task.Task):
    """Records its runs and reverts in ``log``."""

    def __init__(self, name, log):
        super().__init__(name)
        self._log = log

    def execute(self):
        self._log.append(('execute', self.name))

    def revert(self, **kwargs):
        self._log.append(('revert', self.name))


class TakenOver(Recorded):
    def execute(self):
        super().execute()
        raise fencing.FencedOut(FLOW, 2, 3)


class FencedOutThroughTaskFlowTest(base.TestCase):

    def engine(self, *atoms):
        flow = linear_flow.Flow('fenced').add(*atoms)
        return flow_engine.CellbootEngine(
            flow, persistence_utils.create_flow_detail(flow), None, {})

    def test_raised_by_an_atom_it_stops_the_engine_without_revert(self):
        log = []
        engine = self.engine(Recorded('first', log), TakenOver('second', log),
                             Recorded('third', log))
        error = self.assertRaises(fencing.FencedOut, engine.run)
        self.assertEqual((FLOW, 2, 3),
                         (error.flow_uuid, error.token, error.current))
        self.assertEqual([('execute', 'first'), ('execute', 'second')], log)
        self.assertNotIn(engine.storage.get_flow_state(),
                         (states.FAILURE, states.REVERTED,
                          states.REVERTING))
        self.assertEqual(states.SUCCESS,
                         engine.storage.get_atom_state('first'))

    def test_raised_as_the_next_atom_starts_it_never_starts(self):
        # What the storage does when the write before an atom is fenced.
        log = []
        engine = self.engine(Recorded('first', log), Recorded('second', log))
        real = engine.storage.set_atom_state

        def fenced(atom_name, state):
            if atom_name == 'second' and state == states.RUNNING:
                raise fencing.FencedOut(FLOW, 2, None)
            return real(atom_name, state)

        engine.storage.set_atom_state = fenced
        self.assertRaises(fencing.FencedOut, engine.run)
        self.assertEqual([('execute', 'first')], log)
        self.assertNotIn(engine.storage.get_flow_state(),
                         (states.FAILURE, states.REVERTED,
                          states.REVERTING))


class FenceGarbageTest(base.TestCase):

    def test_a_token_must_be_a_positive_integer(self):
        for garbage in (None, '2', 2.0, True, False, 0, -3, [2], b'2'):
            self.assertRaises(ValueError, fencing.Fence, FLOW, garbage,
                              engine=None)
        self.assertEqual(f'<Fence {FLOW} generation 7>',
                         repr(fencing.Fence(FLOW, 7, engine=None)))

    def test_its_message_names_the_flow_and_both_generations(self):
        self.assertEqual(
            f'flow {FLOW} was taken over: this run holds generation 2 and '
            f'the flow is at generation 5; its writes are refused, it '
            f'stops here and records nothing',
            str(fencing.FencedOut(FLOW, 2, 5)))
        self.assertIn('has no fence any more',
                      str(fencing.FencedOut(FLOW, 2, None)))
        self.assertIn("at generation 'x'",
                      str(fencing.FencedOut(FLOW, 2, 'x')))


class FenceCheckTest(base.TestCase):
    """When ``Fence.check`` asks the database, and when a proof stands."""

    def test_a_run_just_taken_checks_without_a_query(self):
        engine = mock.MagicMock()
        fencing.Fence('f', 2, engine, fresh=60.0, taken=True).check()
        engine.begin.assert_not_called()

    def test_a_run_never_proven_queries(self):
        engine = mock.MagicMock()
        engine.begin.return_value.__enter__.return_value.execute \
            .return_value.rowcount = 1
        fencing.Fence('f', 2, engine, fresh=60.0).check()
        engine.begin.assert_called_once_with()

    def test_a_proof_older_than_fresh_is_queried_again(self):
        engine = mock.MagicMock()
        engine.begin.return_value.__enter__.return_value.execute \
            .return_value.rowcount = 0
        engine.begin.return_value.__enter__.return_value.execute \
            .return_value.scalar.return_value = 3
        fence = fencing.Fence('f', 2, engine, fresh=0.0, taken=True)
        self.assertRaises(fencing.FencedOut, fence.check)
