"""What ``CellbootEngine`` writes to the flow database, and when.

The engine defers and folds TaskFlow's writes
(``cellboot.flowrun.storage``); what must hold whatever it folds: an
atom's outcome is in the database before the next atom runs, a flow
resumed from what the database held at any
point finishes without running a completed atom again, and a conductor
taking the flow over keeps the meta keys it wrote. Checked by reading
the database through TaskFlow's own backend, on every backend.
"""

import fixtures
import pymysql
import sqlalchemy as sa
from taskflow.listeners import base as listener_base
from taskflow.patterns import linear_flow
from taskflow.persistence.backends import impl_sqlalchemy
from taskflow.persistence import models
from taskflow import states
from taskflow import task

from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import listeners
from cellboot.flowrun import engine as flow_engine
from cellboot.flowrun import schema as flow_schema
from tests import base
from tests import fixtures as cb_fixtures

NAMES = ('first', 'second', 'third')


class Step(task.Task):
    """Records that it ran, and what the database held at that moment."""

    def __init__(self, name, seen, provides):
        super().__init__(name, provides=provides)
        self._seen = seen

    def execute(self, persistence, flow_uuid, **kwargs):
        self._seen.append((self.name, stored_states(persistence, flow_uuid)))
        return f'{self.name}-done'


class RerunSafeStep(Step):
    """A Step whose success may wait for a later write."""

    rerun_safe = True


class Fail(task.Task):
    def execute(self):
        raise RuntimeError('the third step broke')


def stored_states(url, flow_uuid):
    """{atom name: (state, results)} as another process would read it."""
    backend = impl_sqlalchemy.SQLAlchemyBackend({'connection': url})
    try:
        flow_detail = backend.get_connection().get_flow_details(flow_uuid)
        return {atom.name: (atom.state, atom.results)
                for atom in flow_detail}
    finally:
        backend.close()


class _FlowDBCase:
    """A flow database of ``BACKEND`` and flows of ``Step`` atoms on it."""

    def setUp(self):
        super().setUp()
        self.url = self.useFixture(cb_fixtures.Database(
            self.BACKEND, reuse='flows')).url
        flow_schema.sync_flow_database(self.url)
        self.addCleanup(flow_db.reset)
        self.seen = []

    def make_flow(self, last=None):
        flow = linear_flow.Flow('deferred')
        for index, name in enumerate(NAMES):
            if name == 'third' and last is not None:
                flow.add(last)
            else:
                flow.add(Step(name, self.seen, provides=f'out{index}'))
        return flow

    def save_flow_detail(self):
        book = models.LogBook('deferred-writes')
        flow_detail = models.FlowDetail('deferred', uuid=f'fd-{id(self)}')
        book.add(flow_detail)
        flow_db.get_connection(self.url).save_logbook(book)
        return book.find(flow_detail.uuid)

    def engine(self, flow, flow_detail):
        engine = flow_engine.CellbootEngine(
            flow, flow_detail, flow_db.get_backend(self.url), {})
        engine.storage.inject({'persistence': self.url,
                               'flow_uuid': flow_detail.uuid},
                              transient=True)
        return engine

    def count_commits(self):
        commits = []
        engine = flow_db.get_backend(self.url).engine
        listener = (lambda conn: commits.append(1))
        sa.event.listen(engine, 'commit', listener)
        self.addCleanup(sa.event.remove, engine, 'commit', listener)
        return commits


class _DeferredWritesTests(_FlowDBCase):

    def test_each_outcome_is_stored_before_the_next_atom_runs(self):
        flow_detail = self.save_flow_detail()

        self.engine(self.make_flow(), flow_detail).run()

        seen = dict(self.seen)
        self.assertNotIn(states.SUCCESS, [seen['first'].get(name, (None,))[0]
                                          for name in NAMES])
        self.assertEqual((states.SUCCESS, 'first-done'),
                         seen['second']['first'])
        self.assertEqual((states.SUCCESS, 'second-done'),
                         seen['third']['second'])
        self.assertNotEqual(states.SUCCESS, seen['third']['third'][0])

    def test_the_run_ends_with_everything_stored(self):
        flow_detail = self.save_flow_detail()

        self.engine(self.make_flow(), flow_detail).run()

        stored = stored_states(self.url, flow_detail.uuid)
        self.assertEqual({name: (states.SUCCESS, f'{name}-done')
                          for name in NAMES},
                         {name: stored[name] for name in NAMES})
        fd = flow_db.get_connection(self.url).get_flow_details(
            flow_detail.uuid)
        self.assertEqual(states.SUCCESS, fd.state)

    def test_a_linear_flow_writes_once_per_atom(self):
        flow_detail = self.save_flow_detail()
        commits = self.count_commits()

        self.engine(self.make_flow(), flow_detail).run()

        # Before the second and the third atom, and at the end.
        self.assertEqual(3, len(commits))

    def test_a_rerun_safe_success_waits_for_the_next_needed_write(self):
        flow_detail = self.save_flow_detail()
        commits = self.count_commits()
        flow = linear_flow.Flow('deferred').add(
            Step('first', self.seen, provides='out0'),
            RerunSafeStep('second', self.seen, provides='out1'),
            Step('third', self.seen, provides='out2'))

        self.engine(flow, flow_detail).run()

        seen = dict(self.seen)
        self.assertEqual((states.SUCCESS, 'first-done'),
                         seen['third']['first'])
        self.assertNotEqual(states.SUCCESS, seen['third']['second'][0])
        # Before the second atom (the first's outcome), and at the end.
        self.assertEqual(2, len(commits))
        stored = stored_states(self.url, flow_detail.uuid)
        self.assertEqual({name: (states.SUCCESS, f'{name}-done')
                          for name in NAMES},
                         {name: stored[name] for name in NAMES})

    def test_a_rerun_safe_failure_is_written_before_the_revert(self):
        flow_detail = self.save_flow_detail()

        class SafeFail(Fail):
            rerun_safe = True

        flow = linear_flow.Flow('deferred').add(
            Step('first', self.seen, provides='out0'),
            RerunSafeStep('second', self.seen, provides='out1'),
            SafeFail('third'))
        engine = self.engine(flow, flow_detail)
        seen_at_revert = []

        def revert(step, *args, **kwargs):
            seen_at_revert.append(stored_states(self.url, flow_detail.uuid))

        self.useFixture(fixtures.MockPatchObject(RerunSafeStep, 'revert',
                                                 revert))
        self.assertRaises(RuntimeError, engine.run)
        # TaskFlow reverts the failed atom first, then the second (whose
        # own success could wait: not the failure).
        (at_revert,) = seen_at_revert
        self.assertIn(at_revert['third'][0],
                      (states.FAILURE, states.REVERTED))

    def test_durations_are_written_with_the_final_state(self):
        flow_detail = self.save_flow_detail()
        engine = self.engine(self.make_flow(), flow_detail)
        commits = self.count_commits()

        with listeners.attached(engine, 'test', self.url):
            engine.run()

        self.assertEqual(3, len(commits))
        fd = flow_db.get_connection(self.url).get_flow_details(
            flow_detail.uuid)
        self.assertIn('duration', fd.meta)
        for atom in fd:
            if atom.name in NAMES:
                self.assertIn('duration', atom.meta)

    def test_a_flow_resumed_from_a_mid_run_state_skips_what_completed(self):
        # What a SIGKILL during the third atom would have left: the
        # database as the third atom saw it.
        flow_detail = self.save_flow_detail()
        self.engine(self.make_flow(), flow_detail).run()
        at_third = dict(self.seen)['third']
        crashed = self.save_flow_detail_like(at_third)
        self.seen.clear()

        self.engine(self.make_flow(), crashed).run()

        self.assertEqual(['third'], [name for name, _s in self.seen])
        stored = stored_states(self.url, crashed.uuid)
        self.assertEqual(states.SUCCESS, stored['third'][0])

    def save_flow_detail_like(self, atom_states):
        """A new flow detail holding ``atom_states``, loaded back."""
        book = models.LogBook('resumed')
        flow_detail = models.FlowDetail('deferred',
                                        uuid=f'fd-resumed-{id(self)}')
        flow_detail.state = states.RUNNING
        for name, (state, results) in atom_states.items():
            if name not in NAMES:
                continue
            atom = models.TaskDetail(name, f'{name}-{id(self)}')
            atom.state, atom.results = state, results
            flow_detail.add(atom)
        book.add(flow_detail)
        flow_db.get_connection(self.url).save_logbook(book)
        return flow_db.get_connection(self.url).get_flow_details(
            flow_detail.uuid)

    def test_a_reverted_flow_is_stored_reverted(self):
        flow_detail = self.save_flow_detail()
        engine = self.engine(self.make_flow(last=Fail('third')),
                             flow_detail)

        self.assertRaises(RuntimeError, engine.run)

        fd = flow_db.get_connection(self.url).get_flow_details(
            flow_detail.uuid)
        self.assertEqual(states.REVERTED, fd.state)
        self.assertEqual({states.REVERTED},
                         {atom.state for atom in fd if atom.name in NAMES})

    def test_meta_written_by_another_conductor_is_kept(self):
        flow_detail = self.save_flow_detail()
        engine = self.engine(self.make_flow(), flow_detail)
        # A conductor that takes a flow over writes its own keys.
        other = flow_db.get_connection(self.url).get_flow_details(
            flow_detail.uuid)
        other.meta = dict(other.meta or {}, owner='host-b:42')
        flow_db.get_connection(self.url).update_flow_details(other)

        with listeners.attached(engine, 'test', self.url):
            engine.run()

        meta = flow_db.get_connection(self.url).get_flow_details(
            flow_detail.uuid).meta
        self.assertEqual('host-b:42', meta['owner'])
        self.assertIn('duration', meta)

    def test_a_flow_another_conductor_ended_stays_ended(self):
        # This engine lost its claim; the new holder finished the flow
        # meanwhile. Whatever this engine still writes must not undo it.
        flow_detail = self.save_flow_detail()
        engine = self.engine(self.make_flow(), flow_detail)
        engine.storage.set_flow_state(states.RUNNING)
        engine.storage.flush()
        winner = flow_db.get_connection(self.url).get_flow_details(
            flow_detail.uuid)
        winner.state = states.SUCCESS
        flow_db.get_connection(self.url).update_flow_details(winner)

        engine.storage.set_flow_state(states.SUSPENDED)
        engine.storage.flush()

        self.assertEqual(states.SUCCESS, flow_db.get_connection(
            self.url).get_flow_details(flow_detail.uuid).state)

    def test_a_killed_run_stores_nothing_more(self):
        # A BaseException (the process is going away) is not an end of
        # the run: what was deferred is lost, as with a SIGKILL. Killed
        # once 'second' succeeded, before 'third' started (which would
        # have stored it).
        class Killed(BaseException):
            pass

        class KillAfterSecond(listener_base.Listener):
            def __init__(self, engine):
                super().__init__(engine, task_listen_for=[states.SUCCESS],
                                 flow_listen_for=[], retry_listen_for=[])

            def _task_receiver(self, state, details):
                if details['task_name'] == 'second':
                    raise Killed()

        flow_detail = self.save_flow_detail()
        engine = self.engine(self.make_flow(), flow_detail)
        with KillAfterSecond(engine):
            self.assertRaises(Killed, engine.run)
        stored = stored_states(self.url, flow_detail.uuid)
        self.assertEqual(states.SUCCESS, stored['first'][0])
        self.assertNotEqual(states.SUCCESS, stored['second'][0])

    def test_progress_is_not_written(self):
        flow_detail = self.save_flow_detail()

        self.engine(self.make_flow(), flow_detail).run()

        fd = flow_db.get_connection(self.url).get_flow_details(
            flow_detail.uuid)
        for atom in fd:
            self.assertNotIn('progress', atom.meta or {})


class SQLiteDeferredWritesTest(_DeferredWritesTests, base.SQLiteMixin,
                               base.TestCase):
    pass


class MySQLDeferredWritesTest(_DeferredWritesTests, base.MySQLMixin,
                              base.TestCase):
    pass


class PostgreSQLDeferredWritesTest(_DeferredWritesTests,
                                   base.PostgreSQLMixin, base.TestCase):
    pass


class MySQLFlushRetryTest(_FlowDBCase, base.MySQLMixin, base.TestCase):
    """A flush the database rolls back and asks for again is repeated.

    The failure is injected once, as the driver raises it, right after
    the new atoms' INSERT ran in the flush's transaction: the repeated
    flush inserts them again into a database that rolled them back.
    """

    def fail_once_after_insert(self, error):
        """Raise ``error`` once, after an INSERT of atom details.

        Returns the list of the INSERTs of atom details run, failed or
        not.
        """
        engine = flow_db.get_backend(self.url).engine
        inserts = []

        def after_cursor_execute(conn, cursor, statement, *args):
            if statement.startswith('INSERT INTO atomdetails'):
                inserts.append(statement)
                if len(inserts) == 1:
                    raise error

        sa.event.listen(engine, 'after_cursor_execute', after_cursor_execute)
        self.addCleanup(sa.event.remove, engine, 'after_cursor_execute',
                        after_cursor_execute)
        return inserts

    def test_a_deadlock_is_retried(self):
        flow_detail = self.save_flow_detail()
        inserts = self.fail_once_after_insert(pymysql.err.OperationalError(
            1213, 'Deadlock found when trying to get lock; try restarting '
            'transaction'))

        self.engine(self.make_flow(), flow_detail).run()

        self.assertEqual(2, len(inserts))
        stored = stored_states(self.url, flow_detail.uuid)
        self.assertEqual({name: (states.SUCCESS, f'{name}-done')
                          for name in NAMES},
                         {name: stored[name] for name in NAMES})

    def test_another_error_is_not_retried(self):
        flow_detail = self.save_flow_detail()
        engine = self.engine(self.make_flow(), flow_detail)
        engine.compile()
        engine.prepare()  # the atoms exist, in memory, to be inserted
        inserts = self.fail_once_after_insert(pymysql.err.OperationalError(
            1054, "Unknown column 'x' in 'field list'"))

        self.assertRaises(sa.exc.OperationalError, engine.storage.flush)

        self.assertEqual(1, len(inserts))
        self.assertEqual({}, stored_states(self.url, flow_detail.uuid))


class MySQLFlushOutageTest(_FlowDBCase, base.MySQLMixin, base.TestCase):
    """A flush whose connection is lost is repeated, COMMIT done or not.

    The worst case of a lost connection: the server committed the flush
    and its answer was lost. The driver's commit is made to do exactly
    that once (commit, then raise MySQL's "Lost connection" as PyMySQL
    does), so the repeated flush meets the atoms the first one inserted.
    """

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MockPatch(
            'tenacity.nap.time.sleep'))

    def lose_the_answer_of_commits(self, count=1):
        """The first ``count`` commits, and every other one after the
        first (each retry gets its answer); the list of those lost."""
        dialect = flow_db.get_backend(self.url).engine.dialect
        real = dialect.do_commit
        lost = []
        commits = []

        def do_commit(dbapi_connection):
            real(dbapi_connection)
            commits.append(1)
            if len(lost) < count and len(commits) % 2:
                lost.append(1)
                raise pymysql.err.OperationalError(
                    2013, 'Lost connection to MySQL server during query')

        dialect.do_commit = do_commit
        self.addCleanup(vars(dialect).pop, 'do_commit', None)
        return lost

    def test_a_flush_that_committed_is_not_written_twice(self):
        flow_detail = self.save_flow_detail()
        lost = self.lose_the_answer_of_commits()

        self.engine(self.make_flow(), flow_detail).run()

        self.assertEqual([1], lost)
        stored = stored_states(self.url, flow_detail.uuid)
        self.assertEqual({name: (states.SUCCESS, f'{name}-done')
                          for name in NAMES},
                         {name: stored[name] for name in NAMES})

    def test_every_write_of_a_run_may_lose_its_answer(self):
        flow_detail = self.save_flow_detail()
        lost = self.lose_the_answer_of_commits(count=3)

        self.engine(self.make_flow(), flow_detail).run()

        self.assertEqual(3, len(lost))
        fd = flow_db.get_connection(self.url).get_flow_details(
            flow_detail.uuid)
        self.assertEqual(states.SUCCESS, fd.state)
