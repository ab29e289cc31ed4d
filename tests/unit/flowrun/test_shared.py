"""Each kind's flow is built once per process, and shared safely.

``cellboot.flowrun.shared`` hands every engine of a kind the same flow,
atoms included, and the same compilation. The tests here check that a
kind's flow is built once whichever way and from whichever thread it is
asked for, that an engine of it inspects and compiles nothing again, and
that two runs of one shared flow at once, in two threads, through the
runner, keep their results, states and progress apart while each is
inside the very same atom as the other.
"""

import contextlib
import threading
import uuid

import fixtures
from taskflow import atom as tf_atom
from taskflow.engines.action_engine import compiler as tf_compiler
from taskflow.patterns import linear_flow
from taskflow.persistence import models
from taskflow import retry as tf_retry
from taskflow import states
from taskflow import task
from taskflow.utils import persistence_utils

from cellboot.flowrun import engine as flow_engine
from cellboot.flowrun import kinds
from tests import base

KIND = 'sharedtest'
# Seconds a run waits for the other at most (never reached unless the
# runs cannot overlap, which is what the test is about).
WAIT = 10


def detail(kind):
    flow_detail = models.FlowDetail(kind, str(uuid.uuid4()))
    flow_detail.meta = {'kind': kind}
    return flow_detail


class Meet(task.Task):
    """Where the two runs meet: both are inside this atom at once.

    It reports a progress there (which no run records), and returns who
    ran it with how many listened to its notifier meanwhile.
    """

    def execute(self, who, meet):
        self.update_progress(0.5)
        meet.here()
        return {'who': who, 'listeners': len(self.notifier)}

    def revert(self, who, **kwargs):
        self.update_progress(0.5)


class Take(task.Task):
    """Run A fails here (every try); run B waits here until A ended.

    So that everything A's engine does to the shared atoms (running,
    failing, retrying, reverting them) happens while B is inside one of
    them.
    """

    def execute(self, who, met, meet):
        if who == 'A':
            raise ValueError(f'{who} fails')
        meet.wait_for_a()
        return f'{who} met {met["who"]}'


class Meeting:
    """The transient value that makes the two runs overlap."""

    def __init__(self, barrier, a_ended):
        self._barrier = barrier
        self._a_ended = a_ended
        self._met = False

    def here(self):
        """Wait for the other run, the first time only (A tries again)."""
        if not self._met:
            self._met = True
            self._barrier.wait(WAIT)

    def wait_for_a(self):
        if not self._a_ended.wait(WAIT):
            raise AssertionError('run A did not end while B waited')


def _engine(flow):
    return flow_engine.CellbootEngine(
        flow, persistence_utils.create_flow_detail(flow), None, {})


def get_flow():
    return linear_flow.Flow(
        KIND, retry=tf_retry.Times(2, name='again')).add(
        Meet('meet', provides='met'), Take('take', provides='taken'))


class Kind(fixtures.Fixture):
    """Registers a kind of the test's own, built by ``factory``."""

    def __init__(self, name, factory):
        super().__init__()
        self.name = name
        self.factory = factory

    def _setUp(self):
        self.useFixture(fixtures.MockPatchObject(
            kinds, 'KINDS', dict(kinds.KINDS, **{
                self.name: kinds.Kind(self.factory, kinds.SUPER)})))


class OncePerProcessTest(base.TestCase):

    def test_a_kind_is_built_once_however_and_wherever_asked(self):
        built = []

        def factory():
            built.append(threading.current_thread().name)
            return get_flow()

        self.useFixture(Kind('counted', factory))
        flows = []
        threads = [threading.Thread(target=lambda: flows.extend(
            [kinds.flow('counted'),
             kinds.build(detail('counted'), kinds.SUPER)]))
            for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(1, len(built))
        self.assertEqual(16, len(flows))
        self.assertEqual({id(flows[0])}, {id(flow) for flow in flows})

    def test_each_kind_has_its_own_flow(self):
        boot = kinds.build(detail('boot'), kinds.SUPER)
        self.assertIs(boot, kinds.flow('boot'))
        self.assertIs(kinds.flow('reschedule'),
                      kinds.build(detail('reschedule'), kinds.CELL))
        self.assertIsNot(boot, kinds.flow('reschedule'))

    def test_an_engine_of_a_kind_inspects_and_compiles_nothing_again(self):
        first = _engine(kinds.flow('boot'))
        first.compile()
        inspected = self.useFixture(fixtures.MockPatchObject(
            tf_atom, '_build_arg_mapping',
            side_effect=AssertionError('an atom was built'))).mock
        compiled = self.useFixture(fixtures.MockPatchObject(
            tf_compiler.PatternCompiler, '_compile',
            side_effect=AssertionError('a flow was compiled'))).mock
        for _ in range(3):
            engine = _engine(kinds.build(detail('boot'), kinds.SUPER))
            engine.compile()
            self.assertIs(first.compilation, engine.compilation)
            # Its runtime is its own, on its own storage.
            self.assertIsNot(first._runtime, engine._runtime)
            self.assertIs(engine.storage, engine._runtime.storage)
        inspected.assert_not_called()
        compiled.assert_not_called()

    def test_a_flow_that_is_no_kinds_is_compiled_by_each_engine(self):
        flow = get_flow()
        first, second = _engine(flow), _engine(flow)
        first.compile()
        second.compile()
        self.assertIsNot(first.compilation, second.compilation)


class ConcurrentRunsTest(base.TestCase):
    """Two runs of one shared flow at once keep to themselves."""

    def setUp(self):
        super().setUp()
        self.useFixture(Kind(KIND, get_flow))

    def _run(self, who, meeting, engines, errors):
        def keep(engine):
            engines[who] = engine
            return contextlib.nullcontext()

        try:
            flow_engine.run_in_memory(
                KIND, {'who': who}, {'meet': meeting}, label=who,
                extra_listeners=(keep,))
        except Exception as exc:
            errors[who] = exc

    def test_two_runs_at_once_keep_their_results_and_states(self):
        barrier = threading.Barrier(2)
        a_ended = threading.Event()
        engines, errors = {}, {}
        run_b = threading.Thread(target=self._run, args=(
            'B', Meeting(barrier, a_ended), engines, errors))
        run_b.start()
        try:
            run_a = threading.Thread(target=self._run, args=(
                'A', Meeting(barrier, a_ended), engines, errors))
            run_a.start()
            run_a.join(WAIT * 2)
        finally:
            a_ended.set()
            run_b.join(WAIT * 2)
        self.assertFalse(run_a.is_alive() or run_b.is_alive())
        a, b = engines['A'].storage, engines['B'].storage
        self.assertIs(engines['A']._flow, engines['B']._flow)
        self.assertIs(engines['A'].compilation, engines['B'].compilation)

        # A failed twice (one retry), then reverted; B succeeded once.
        self.assertEqual(['A'], list(errors))
        self.assertIn('A fails', str(errors['A']))
        self.assertEqual(
            (states.REVERTED, {name: states.REVERTED
                               for name in ('again', 'meet', 'take')}),
            (a.get_flow_state(), {name: a.get_atom_state(name)
                                  for name in ('again', 'meet', 'take')}))
        self.assertEqual(
            (states.SUCCESS, {name: states.SUCCESS
                              for name in ('again', 'meet', 'take')}),
            (b.get_flow_state(), {name: b.get_atom_state(name)
                                  for name in ('again', 'meet', 'take')}))
        self.assertEqual({'who': 'B', 'listeners': 0}, b.get('meet'))
        self.assertEqual('B met B', b.get('take'))
        # B's one try, which nothing failed (A's failures are A's).
        self.assertEqual([{}], [failures for _provided, failures
                                in b.get_retry_history('again')])

        # No progress of either run reached a storage.
        for storage in (a, b):
            for name in ('meet', 'take'):
                self.assertEqual(0.0, storage.get_task_progress(name))
                self.assertIsNone(storage.get_task_progress_details(name))
        # And nothing is left listening to the shared atoms.
        for atom in engines['A']._flow:
            self.assertEqual(0, len(atom.notifier))
