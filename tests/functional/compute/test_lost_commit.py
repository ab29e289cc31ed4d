"""A build's write retried after a lost connection whose COMMIT happened.

A connection lost during COMMIT leaves the writer not knowing whether
its transaction committed; ``cellboot.compute.build_records`` then runs
a second function (``again=True``) that must find the earlier attempt's
work and not do it twice. A real cut cannot be timed between the
server's commit and its answer, so each test here runs the attempt that
committed, then the retry, on a real database, as the retry would meet
it. And a second build message for an instance the host is handling
already is dropped at once, which is what lets a retried take trust
that a build it finds taken here is its own.
"""

import logging
import threading

import fixtures
import pymysql
import sqlalchemy as sa

from cellboot.compute import build_records
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot import exception
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action
from cellboot.objects import instance_fault
from tests import base
from tests.functional.compute import base as compute_base

vm_states = instance_obj.vm_states


class _LostCommitTests:

    def setUp(self):
        super().setUp()
        self.ctxt = self.new_context()
        self.manager = self.start_manager()
        self.node = self.manager.node.hypervisor_hostname
        self.instance = self.create_building_instance(self.ctxt,
                                                      self.manager)

    def _events(self):
        action = instance_action.InstanceAction.get_by_request_id(
            self.ctxt, self.instance.uuid, self.ctxt.request_id)
        return instance_action.InstanceActionEvent.get_by_action(
            self.ctxt, action.id)

    def _take(self, again=False, ctxt=None):
        current = instance_obj.Instance(uuid=self.instance.uuid)
        return current, build_records._take(ctxt or self.ctxt, current,
                                            'host1', self.node, again=again)

    # -- take -----------------------------------------------------------------

    def test_a_retried_take_finds_its_own_build_and_event(self):
        _current, event = self._take()
        current, again = self._take(again=True)
        self.assertEqual(event.id, again.id)
        self.assertEqual(1, len(self._events()))
        self.assertEqual(instance_obj.task_states.SPAWNING,
                         current.task_state)

    def test_a_retried_take_of_another_request_s_build_is_no_take(self):
        # The build was taken for another request (its own event): not
        # this message's, which is then dropped as a duplicate.
        self._take()
        other = self.new_context()
        instance_action.InstanceAction.start(
            other, self.instance.uuid, build_records.ACTION_CREATE,
            other.request_id)
        _current, event = self._take(again=True, ctxt=other)
        self.assertIsNone(event)

    def test_a_retried_take_of_a_finished_event_is_no_take(self):
        _current, event = self._take()
        event.finish(self.ctxt, instance_action.RESULT_ERROR)
        self.assertIsNone(self._take(again=True)[1])

    def test_a_first_take_of_a_taken_build_is_no_take(self):
        self._take()
        self.assertIsNone(self._take()[1])

    # -- settle ---------------------------------------------------------------

    def test_a_retried_settle_finds_the_build_active_and_writes_nothing(self):
        current, event = self._take()
        build_records._settle(self.ctxt, current, event, 'host1', self.node)
        finished = self._events()[0].finish_time
        build_records._settle(self.ctxt, current, event, 'host1', self.node,
                              again=True)
        (stored,) = self._events()
        self.assertEqual((instance_action.RESULT_SUCCESS, finished),
                         (stored.result, stored.finish_time))
        self.assertEqual(vm_states.ACTIVE, self.reload(self.instance).vm_state)

    def test_a_retried_settle_of_a_build_timed_out_meanwhile_fails(self):
        current, event = self._take()
        self.reload(self.instance).update(self.ctxt, vm_state=vm_states.ERROR,
                                          task_state=None)
        self.assertRaises(exception.UnexpectedVMState, build_records._settle,
                          self.ctxt, current, event, 'host1', self.node,
                          again=True)

    def test_a_first_settle_of_an_active_build_still_fails(self):
        current, event = self._take()
        build_records._settle(self.ctxt, current, event, 'host1', self.node)
        self.assertRaises(exception.UnexpectedVMState, build_records._settle,
                          self.ctxt, current, event, 'host1', self.node)

    # -- fail -----------------------------------------------------------------

    def _fail(self, current, event, again=False, message='it broke'):
        build_records._fail(self.ctxt, current, event, 500, message,
                            'details', 'host1', again=again)

    def test_a_retried_failure_writes_one_fault(self):
        current, event = self._take()
        self._fail(current, event)
        first = instance_fault.InstanceFault.get_latest_for_instances(
            self.ctxt, [self.instance.uuid])[self.instance.uuid]
        self._fail(current, event, again=True)
        latest = instance_fault.InstanceFault.get_latest_for_instances(
            self.ctxt, [self.instance.uuid])[self.instance.uuid]
        self.assertEqual(first.id, latest.id)
        self.assertEqual(vm_states.ERROR, self.reload(self.instance).vm_state)

    def test_a_retried_failure_with_another_message_writes_its_fault(self):
        current, event = self._take()
        self._fail(current, event, message='first')
        self._fail(current, event, again=True, message='second')
        latest = instance_fault.InstanceFault.get_latest_for_instances(
            self.ctxt, [self.instance.uuid])[self.instance.uuid]
        self.assertEqual('second', latest.message)

    # -- one message per instance at a time -----------------------------------

    def test_a_message_for_a_build_in_hand_is_dropped_at_once(self):
        inner = []

        def on_spawn(instance):
            # A duplicate arrives while this host spawns the instance.
            inner.append(self.build(self.ctxt, manager, instance))

        log = self.useFixture(fixtures.FakeLogger(
            name='cellboot.compute.manager', level=logging.INFO))
        manager = self.start_manager(host='host2', on_spawn=on_spawn)
        instance = self.create_building_instance(self.ctxt, manager)
        self.build(self.ctxt, manager, instance)
        self.assertEqual([instance.uuid], manager.driver.spawned)
        self.assertEqual([None], inner)
        self.assertIn(f'Instance {instance.uuid} is being built on host '
                      f'host2 already', log.output)
        self.assertEqual(vm_states.ACTIVE, self.reload(instance).vm_state)
        # Once handled, the instance is out of hand: a late copy is
        # dropped by the database's state, as before.
        self.build(self.ctxt, manager, instance)
        self.assertEqual([instance.uuid], manager.driver.spawned)


class MySQLLostAnswersTest(base.MySQLMixin, compute_base.ComputeTestCase):
    """Whole builds whose cell database commits and loses the answer.

    The driver's commit of the cell database is made to commit, then
    raise MySQL's "Lost connection" (2013) as PyMySQL does, on the first
    attempt of every transaction: every write of the build meets the
    worst case of a lost connection, and the build still ends right.
    """

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MockPatch('tenacity.nap.time.sleep'))
        # The build's own commits are counted: the scheduler's change
        # feed (its entry for the build result) is a writer of its own,
        # whose lost answer is tested in test_sync.
        self.scheduler_api.sync = self.scheduler_api.manager.sync = None
        self.ctxt = self.new_context()
        self.manager = self.start_manager()
        self.lost = []

    def lose_answers(self):
        dialect = cell_connection.get_engine(
            self.dbs.cell_urls[0]).dialect
        real = dialect.do_commit
        commits = []
        # The build runs in this thread; other writers of the database
        # (a scheduler's periodic threads) commit as they always do.
        builder = threading.get_ident()

        def do_commit(dbapi_connection):
            real(dbapi_connection)
            if threading.get_ident() != builder:
                return
            commits.append(1)
            if len(commits) % 2:
                self.lost.append(1)
                raise pymysql.err.OperationalError(
                    2013, 'Lost connection to MySQL server during query')

        dialect.do_commit = do_commit
        return lambda: vars(dialect).pop('do_commit', None)

    def test_a_build_ends_active_with_one_event(self):
        instance = self.create_building_instance(self.ctxt, self.manager)
        stop = self.lose_answers()
        self.addCleanup(stop)
        self.build(self.ctxt, self.manager, instance)
        stop()
        # The take and the settle each lost one answer.
        self.assertEqual(2, len(self.lost))
        self.assertEqual(vm_states.ACTIVE, self.reload(instance).vm_state)
        action = instance_action.InstanceAction.get_by_request_id(
            self.ctxt, instance.uuid, self.ctxt.request_id)
        events = instance_action.InstanceActionEvent.get_by_action(
            self.ctxt, action.id)
        self.assertEqual([(build_records.EVENT_BUILD,
                           instance_action.RESULT_SUCCESS)],
                         [(event.event, event.result) for event in events])
        self.assertEqual([instance.uuid], self.manager.driver.spawned)
        self.assertEqual(1, len(self.held(instance.uuid)))

    def test_an_aborted_build_has_one_fault(self):
        self.flags(fail_hosts=['host1'], fail_mode='abort',
                   group='fake_driver')
        instance = self.create_building_instance(self.ctxt, self.manager)
        stop = self.lose_answers()
        self.addCleanup(stop)
        self.build(self.ctxt, self.manager, instance)
        stop()
        self.assertEqual(vm_states.ERROR, self.reload(instance).vm_state)
        with cell_connection.get_engine(
                self.dbs.cell_urls[0]).connect() as conn:
            count = conn.execute(sa.select(sa.func.count()).select_from(
                cell_models.InstanceFault.__table__).where(
                cell_models.InstanceFault.__table__.c.instance_uuid ==
                instance.uuid)).scalar()
        self.assertEqual(1, count)
        self.assertEqual({}, self.held(instance.uuid))


class SQLiteLostCommitTest(_LostCommitTests, base.SQLiteMixin,
                           compute_base.ComputeTestCase):
    pass


class MySQLLostCommitTest(_LostCommitTests, base.MySQLMixin,
                          compute_base.ComputeTestCase):
    pass
