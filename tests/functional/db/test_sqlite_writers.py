"""Writers to one SQLite file take turns in this process.

Each outermost writer transaction holds its file's ``WriterQueue`` from
before ``BEGIN IMMEDIATE`` until its connection is back in the pool;
these tests check that every way out of a transaction gives the turn
back, that readers and nested transactions take none, and that nothing
that does not queue (TaskFlow's engine, a reader that writes) can wait
on it.
"""

import os
import threading

from taskflow.persistence import models as taskflow_models
import sqlalchemy as sa

from cellboot import context as cb_context
from cellboot.db import facade
from cellboot.flowrun import backend as flow_db
from tests import base

_METADATA = sa.MetaData()
_ROWS = sa.Table('rows', _METADATA,
                 sa.Column('id', sa.Integer, primary_key=True),
                 sa.Column('name', sa.String(36)))

# Long enough for a thread to reach a wait, short against the timeouts.
_SETTLE_SECONDS = 0.2
_JOIN_SECONDS = 10


class Boom(Exception):
    """Raised inside a transaction to abandon it."""


class _SQLiteWritersTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.path = os.path.join(self.state_path, 'writers.sqlite')
        self.url = 'sqlite:///' + self.path
        self.manager = facade.new_context_manager(self.url)
        self.addCleanup(self.manager.dispose_pool)
        _METADATA.create_all(self.manager.writer.get_engine())
        self.queue = facade.writer_queue(self.path)
        self.writer = facade.transactional(lambda ctx: self.manager,
                                           'writer')
        self.reader = facade.transactional(lambda ctx: self.manager,
                                           'reader')

    def context(self):
        return cb_context.get_admin_context()

    def insert(self, ctx, name):
        ctx.session.execute(_ROWS.insert().values(name=name))

    def names(self):
        engine = self.manager.writer.get_engine()
        with engine.connect() as conn:
            return sorted(conn.execute(sa.select(_ROWS.c.name)).scalars())

    def start(self, fn):
        thread = threading.Thread(target=fn, daemon=True)
        thread.start()
        self.addCleanup(thread.join, _JOIN_SECONDS)
        return thread


class TurnTest(_SQLiteWritersTest):

    def test_writer_holds_the_turn_inside_its_transaction(self):
        seen = []
        self.writer(lambda ctx: seen.append(self.queue.held))(self.context())
        self.assertEqual([True], seen)

    def test_commit_gives_the_turn_back(self):
        self.writer(lambda ctx: self.insert(ctx, 'a'))(self.context())
        self.assertFalse(self.queue.held)
        self.assertEqual(['a'], self.names())

    def test_exception_gives_the_turn_back(self):
        def fail(ctx):
            self.insert(ctx, 'a')
            raise Boom()
        self.assertRaises(Boom, self.writer(fail), self.context())
        self.assertFalse(self.queue.held)
        self.assertEqual([], self.names())

    def test_nested_writer_takes_no_second_turn(self):
        seen = []

        def inner(ctx):
            seen.append(self.queue.held)
            self.insert(ctx, 'inner')

        def outer(ctx):
            self.writer(inner)(ctx)
            seen.append(self.queue.held)
        self.writer(outer)(self.context())
        self.assertEqual([True, True], seen)
        self.assertFalse(self.queue.held)
        self.assertEqual(['inner'], self.names())

    def test_reader_takes_no_turn(self):
        seen = []
        self.reader(lambda ctx: seen.append(self.queue.held))(self.context())
        self.assertEqual([False], seen)

    def test_pooled_connection_keeps_no_turn(self):
        self.writer(lambda ctx: self.insert(ctx, 'a'))(self.context())
        engine = self.manager.writer.get_engine()
        with engine.connect() as conn:
            info = conn.connection.info
        self.assertNotIn('cellboot_writer_turn', info)

    def test_invalidated_connection_gives_the_turn_back(self):
        def invalidate(ctx):
            ctx.session.connection().invalidate()
        self.assertRaises(Exception, self.writer(invalidate), self.context())
        self.assertFalse(self.queue.held)


class QueueingTest(_SQLiteWritersTest):

    def hold_writer(self, ctx, inside, release):
        def body(ctx):
            self.insert(ctx, 'first')
            inside.set()
            release.wait(_JOIN_SECONDS)
        self.writer(body)(ctx)

    def test_second_writer_waits_for_the_first_to_commit(self):
        inside, release, second_done = (threading.Event(),
                                        threading.Event(),
                                        threading.Event())
        self.start(lambda: self.hold_writer(self.context(), inside,
                                            release))
        self.assertTrue(inside.wait(_JOIN_SECONDS))

        def second():
            self.writer(lambda ctx: self.insert(ctx, 'second'))(
                self.context())
            second_done.set()
        self.start(second)
        self.assertFalse(second_done.wait(_SETTLE_SECONDS))
        release.set()
        self.assertTrue(second_done.wait(_JOIN_SECONDS))
        self.assertEqual(['first', 'second'], self.names())
        self.assertFalse(self.queue.held)

    def test_reader_runs_while_a_writer_holds_the_turn(self):
        inside, release = threading.Event(), threading.Event()
        self.start(lambda: self.hold_writer(self.context(), inside,
                                            release))
        self.assertTrue(inside.wait(_JOIN_SECONDS))
        try:
            counted = self.reader(lambda ctx: ctx.session.execute(
                sa.select(sa.func.count()).select_from(_ROWS)).scalar())(
                    self.context())
        finally:
            release.set()
        self.assertEqual(0, counted)

    def test_writer_is_not_held_up_by_a_reader_that_writes(self):
        in_reader, writer_done = threading.Event(), threading.Event()

        def upgrading_reader(ctx):
            ctx.session.execute(sa.select(_ROWS.c.id)).all()
            in_reader.set()
            writer_done.wait(_JOIN_SECONDS)
            self.insert(ctx, 'reader')
        outcome = []

        def run_reader():
            try:
                self.reader(upgrading_reader)(self.context())
            except Exception as exc:  # a stale snapshot may not upgrade
                outcome.append(exc)
        reader_thread = self.start(run_reader)
        self.assertTrue(in_reader.wait(_JOIN_SECONDS))
        self.writer(lambda ctx: self.insert(ctx, 'writer'))(self.context())
        writer_done.set()
        reader_thread.join(_JOIN_SECONDS)
        self.assertFalse(self.queue.held)
        self.assertIn('writer', self.names())

    def test_flow_db_write_completes_beside_a_queued_writer(self):
        flow_db.sync(self.url)
        self.addCleanup(flow_db.reset)
        inside, release, saved = (threading.Event(), threading.Event(),
                                  threading.Event())
        self.start(lambda: self.hold_writer(self.context(), inside,
                                            release))
        self.assertTrue(inside.wait(_JOIN_SECONDS))

        def save_logbook():
            flow_db.get_connection(self.url).save_logbook(
                taskflow_models.LogBook('book'))
            saved.set()
        self.start(save_logbook)
        release.set()
        self.assertTrue(saved.wait(_JOIN_SECONDS))
        self.assertFalse(self.queue.held)

    def test_flow_db_engine_does_not_queue(self):
        engine = flow_db.get_backend(self.url).engine
        self.addCleanup(flow_db.reset)
        self.assertIsNone(getattr(engine, 'cellboot_writer_queue', None))


class WriterQueueTest(base.TestCase):

    def test_waiters_get_the_turn_in_arrival_order(self):
        queue = facade.WriterQueue()
        queue.acquire()
        order, threads = [], []
        for n in range(3):
            ready = threading.Event()

            def wait(n=n, ready=ready):
                ready.set()
                queue.acquire()
                order.append(n)
                queue.release()
            thread = threading.Thread(target=wait, daemon=True)
            thread.start()
            ready.wait(_JOIN_SECONDS)
            # The thread is about to wait; let it get in line.
            threading.Event().wait(_SETTLE_SECONDS / 4)
            threads.append(thread)
        queue.release()
        for thread in threads:
            thread.join(_JOIN_SECONDS)
        self.assertEqual([0, 1, 2], order)

    def test_wait_gives_up_after_its_timeout(self):
        queue = facade.WriterQueue()
        queue.acquire()
        result = []
        thread = threading.Thread(
            target=lambda: result.append(queue.acquire(timeout=0.05)))
        thread.start()
        thread.join(_JOIN_SECONDS)
        self.assertEqual([False], result)
        queue.release()
        self.assertFalse(queue.held)

    def test_one_file_has_one_queue_whatever_the_path_spelling(self):
        base_dir = self.state_path
        self.assertIs(
            facade.writer_queue(os.path.join(base_dir, 'x.sqlite')),
            facade.writer_queue(os.path.join(base_dir, '.', 'x.sqlite')))
