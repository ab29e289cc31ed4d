"""A flow step that meets a database outage runs again, on the real engine.

The flows here are small TaskFlow flows run unpersisted on cellboot's
engine (``CellbootEngine``), the one every conductor uses; their tasks
fail the way a step does when its database is down: oslo.db's
``DBConnectionError`` here, or oslo.messaging's ``RemoteError`` naming
it, which is what a conductor gets from a scheduler whose database is
down (built below by oslo.messaging's own (de)serialisation, as its
RabbitMQ driver does).
"""

import sys

import fixtures
from oslo_db import exception as db_exc
from oslo_messaging._drivers import common as messaging_common
from taskflow import exceptions as tf_exc
from taskflow.patterns import linear_flow
from taskflow import retry as tf_retry
from taskflow import states
from taskflow import task
from taskflow.utils import persistence_utils

from cellboot import exception
from cellboot.flowrun import engine as flow_engine
from cellboot.flowrun import outages
from cellboot.rpc import ALLOWED_REMOTE_EXMODS
from tests import base


def _remote(error):
    """``error`` raised in a service, as its RPC caller receives it."""
    try:
        raise error
    except Exception:
        data = messaging_common.serialize_remote_exception(sys.exc_info())
    return messaging_common.deserialize_remote_exception(
        data, ALLOWED_REMOTE_EXMODS)


class Flaky(task.Task):
    """Raises ``errors`` one per call, then returns; records its calls."""

    def __init__(self, name, errors, **kwargs):
        super().__init__(name, **kwargs)
        self.errors = list(errors)
        self.calls = []

    def execute(self, resumed=False):
        self.calls.append(resumed)
        if self.errors:
            raise self.errors.pop(0)
        return 'done'


class Plain(task.Task):
    """Takes no ``resumed``; fails once, then reverts flakily."""

    def __init__(self, name, errors, revert_errors=()):
        super().__init__(name)
        self.errors = list(errors)
        self.revert_errors = list(revert_errors)
        self.calls = 0
        self.reverts = 0

    def execute(self):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)

    def revert(self, **kwargs):
        self.reverts += 1
        if self.revert_errors:
            raise self.revert_errors.pop(0)


class Boom(task.Task):
    def execute(self):
        raise ValueError('a real failure')


class Once(tf_retry.Retry):
    """A retry controller whose revert meets the outage once."""

    def __init__(self, name):
        super().__init__(name)
        self.reverts = 0

    def execute(self, history):
        return len(history)

    def on_failure(self, history):
        return tf_retry.REVERT

    def revert(self, history, *args, **kwargs):
        self.reverts += 1
        if self.reverts == 1:
            raise db_exc.DBConnectionError('down')


class Reporting(task.Task):
    """Reports a progress; returns how many listen to its notifier."""

    def execute(self):
        self.update_progress(0.5)
        return len(self.notifier)

    def revert(self, **kwargs):
        self.update_progress(0.5)


def _run(flow):
    engine = flow_engine.CellbootEngine(
        flow, persistence_utils.create_flow_detail(flow), None, {})
    engine.run()
    return engine


class IsOutageTest(base.TestCase):

    def test_a_lost_connection_here_or_in_the_scheduler(self):
        self.assertTrue(outages.is_outage(db_exc.DBConnectionError()))
        self.assertTrue(outages.is_outage(_remote(
            db_exc.DBConnectionError('the scheduler lost its database'))))

    def test_other_remote_errors_are_not(self):
        self.assertFalse(outages.is_outage(_remote(ValueError('no'))))
        self.assertFalse(outages.is_outage(_remote(db_exc.DBDeadlock())))
        # A cellboot error crosses the bus as itself, and is the step's.
        remote = _remote(exception.NoValidHost(reason='full'))
        self.assertIsInstance(remote, exception.NoValidHost)
        self.assertFalse(outages.is_outage(remote))
        self.assertFalse(outages.is_outage(
            exception.RPCTimeout(method='m', topic='t', timeout=1, url='u')))


class RideOutTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.sleeps = []
        self.useFixture(fixtures.MockPatch(
            'tenacity.nap.time.sleep', side_effect=self.sleeps.append))

    def test_a_step_runs_again_as_a_resumed_one(self):
        step = Flaky('schedule', [
            db_exc.DBConnectionError('down'),
            _remote(db_exc.DBConnectionError('the scheduler\'s too'))])
        engine = _run(linear_flow.Flow('f').add(step))
        self.assertEqual([False, True, True], step.calls)
        self.assertEqual(states.SUCCESS, engine.storage.get_flow_state())
        self.assertEqual('done', engine.storage.get('schedule'))

    def test_a_step_without_resumed_runs_again_as_it_was(self):
        step = Plain('p', [db_exc.DBConnectionError('down')])
        _run(linear_flow.Flow('f').add(step))
        self.assertEqual(1 + 1, step.calls)

    def test_a_revert_runs_again(self):
        first = Plain('first', [], [db_exc.DBConnectionError('down')])
        flow = linear_flow.Flow('f').add(first, Boom('boom'))
        self.assertRaises(ValueError, _run, flow)
        self.assertEqual(2, first.reverts)

    def test_a_retry_controller_s_revert_runs_again(self):
        controller = Once('alternates')
        flow = linear_flow.Flow('f', retry=controller).add(Boom('boom'))
        self.assertRaises(ValueError, _run, flow)
        self.assertEqual(2, controller.reverts)

    def test_a_real_failure_fails_the_step_at_once(self):
        step = Flaky('f1', [ValueError('a real failure')])
        self.assertRaises(ValueError, _run, linear_flow.Flow('f').add(step))
        self.assertEqual([False], step.calls)
        self.assertEqual([], self.sleeps)

    def test_an_outage_past_the_bound_fails_the_step(self):
        self.flags(outage_retry_seconds=5, group='database')
        step = Flaky('f1', [db_exc.DBConnectionError('down')] * 100)
        self.assertRaises((db_exc.DBConnectionError, tf_exc.WrappedFailure),
                          _run, linear_flow.Flow('f').add(step))
        self.assertGreaterEqual(sum(self.sleeps), 5)
        self.assertLess(len(step.calls), 100)


class ProgressTest(base.TestCase):
    """The executors subscribe nothing to a task's progress notifier.

    What lets one task serve engines running at once: nothing one engine
    does to a task's notifier reaches another (``outages.TaskExecutor``).
    """

    def test_nothing_listens_to_a_running_task(self):
        engine = _run(linear_flow.Flow('f').add(Reporting('report')))
        self.assertEqual(0, engine.storage.get('report'))
        # The progress it reported is not recorded, as the engine's own.
        self.assertEqual(0.0, engine.storage.get_task_progress('report'))
        self.assertIsNone(
            engine.storage.get_task_progress_details('report'))

    def test_nothing_listens_to_a_reverting_task(self):
        step = Reporting('report')
        flow = linear_flow.Flow('f').add(step, Boom('boom'))
        heard = []
        step.notifier.register(
            step.notifier.ANY,
            lambda event_type, details: heard.append(len(step.notifier)))
        engine = flow_engine.CellbootEngine(
            flow, persistence_utils.create_flow_detail(flow), None, {})
        self.assertRaises(ValueError, engine.run)
        # Whenever the task notified (its execute, its revert, the
        # engine's state changes), only the test's own listener heard.
        self.assertEqual({1}, set(heard))
        self.assertEqual(states.REVERTED,
                         engine.storage.get_atom_state('report'))
        self.assertEqual(0.0, engine.storage.get_task_progress('report'))
