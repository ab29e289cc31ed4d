"""Fencing tokens on every backend: a run that lost its flow writes nothing.

Real databases (SQLite, MariaDB, PostgreSQL), real engines and
cellboot's runner; two runners of different names stand for two
conductor processes (no jobboard here: ``test_stalled_conductor`` adds
the Redis claims). What is checked is what the database holds.
"""

import threading

from oslo_utils import timeutils
import sqlalchemy as sa
from taskflow import states

from cellboot import context as cb_context
from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import engine as flow_engine
from cellboot.flowrun import fencing
from cellboot.flowrun import kinds
from cellboot.flowrun import records
from cellboot.flowrun import schema as flow_schema
from cellboot.flowrun import tables
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional.fencing import flows

# Seconds a thread of the test is given to finish (never reached unless
# the test fails).
JOIN_SECONDS = 60


class _FenceTests:

    def setUp(self):
        super().setUp()
        self.useFixture(flows.Kind())
        self.url = self.useFixture(cb_fixtures.Database(
            self.BACKEND, reuse='flows')).url
        flow_schema.sync_flow_database(self.url)
        flows.create_effects_table(self.url)
        self.addCleanup(flow_db.reset)
        self.db = flow_db.get_backend(self.url).engine
        self.stalls = flows.Stalls()
        self.addCleanup(self.stalls.release_all)

    # -- helpers -------------------------------------------------------------

    def generation(self, flow_uuid):
        with self.db.connect() as conn:
            return fencing.current(conn, flow_uuid)

    def set_generation(self, flow_uuid, value):
        with self.db.begin() as conn:
            conn.execute(sa.update(fencing.FENCES).where(
                fencing.FENCES.c.flow_uuid == flow_uuid).values(
                generation=value))

    def snapshot(self):
        """Every row of the flow tables, to compare before and after."""
        with self.db.connect() as conn:
            return {table.name: sorted(
                tuple(str(value) for value in row)
                for row in conn.execute(sa.select(table)))
                for table in (tables.FLOWS, tables.ATOMS, fencing.FENCES)}

    def posted_flow(self, key='k1'):
        """A saved ``fencetest`` flow nobody has taken yet (posted)."""
        flow_detail, created = records.create(
            flows.KIND, {}, self.url, uuid_=records.flow_uuid(flows.KIND,
                                                              key),
            meta=records.flow_meta(flows.KIND, [], self.context(),
                                   owner='poster:1', posted=True))
        self.assertTrue(created)
        return flow_detail

    def context(self):
        return cb_context.RequestContext(user_id='u', project_id='p')

    def engine_for(self, flow_detail, token):
        """An engine on ``flow_detail`` whose writes hold ``token``."""
        backend = flow_db.get_backend(self.url)
        engine = flow_engine.CellbootEngine(
            kinds.build(flow_detail, kinds.SUPER), flow_detail, backend, {})
        engine.storage.fence_with(
            fencing.Fence(flow_detail.uuid, token, backend.engine))
        return engine

    def stored_results(self, flow_uuid):
        detail = records.load_detail(self.url, flow_uuid)
        return detail.state, {atom.name: atom.results for atom in detail
                              if atom.name in flows.STEPS}

    def start_stalled(self, name, key, effect_first):
        """Runner ``name`` starts a flow and stalls in ``stall``."""
        self.stalls.hold(name, effect_first=effect_first)
        run = flows.runner(self.url, name, self.stalls)
        thread = threading.Thread(target=flows.start, args=(run, key))
        thread.start()
        self.addCleanup(thread.join, JOIN_SECONDS)
        self.assertTrue(self.stalls.reached[name].wait(JOIN_SECONDS))
        return thread, records.flow_uuid(flows.KIND, key)

    # -- generations ---------------------------------------------------------

    def test_a_creator_runs_its_new_flow_at_the_first_generation(self):
        flow_uuid = flows.start(flows.runner(self.url, 'a:1', self.stalls),
                                'k1')
        self.assertEqual(
            ([('before', 'a:1', 1), ('stall', 'a:1', 1),
              ('after', 'a:1', 1)], fencing.FIRST, states.SUCCESS),
            (flows.effects(self.url), self.generation(flow_uuid),
             self.stored_results(flow_uuid)[0]))

    def test_every_take_over_advances_the_generation(self):
        flow_detail = self.posted_flow()
        tokens = [records.take_over(self.url, flow_detail, owner=name).token
                  for name in ('a:1', 'b:2', 'a:1')]
        self.assertEqual(([2, 3, 4], 4),
                         (tokens, self.generation(flow_detail.uuid)))

    # -- writes with an old token --------------------------------------------

    def test_a_write_with_an_old_token_changes_nothing(self):
        flow_detail = self.posted_flow()
        old = records.take_over(self.url, flow_detail,
                                owner='a:1').token
        engine = self.engine_for(flow_detail, old)
        engine.compile()
        engine.prepare()    # the flow's atoms, to be inserted
        engine.storage.set_flow_state(states.RUNNING)
        new = records.take_over(self.url, flow_detail,
                                owner='b:2').token
        before = self.snapshot()

        error = self.assertRaises(fencing.FencedOut, engine.storage.flush)

        self.assertEqual(before, self.snapshot())
        self.assertEqual((flow_detail.uuid, old, new),
                         (error.flow_uuid, error.token, error.current))
        self.assertIn(f'generation {old}', str(error))
        self.assertIn(f'generation {new}', str(error))

    def test_a_write_with_the_current_token_is_made(self):
        flow_detail = self.posted_flow()
        token = records.take_over(self.url, flow_detail,
                                  owner='a:1').token
        engine = self.engine_for(flow_detail, token)
        engine.compile()
        engine.prepare()
        engine.storage.set_flow_state(states.RUNNING)
        engine.storage.flush()
        detail = records.load_detail(self.url, flow_detail.uuid)
        self.assertEqual((states.RUNNING, set(flows.STEPS), token),
                         (detail.state, {atom.name for atom in detail} -
                          {'_TaskFlow_INJECTOR'},
                          self.generation(flow_detail.uuid)))

    # -- a run taken over while it stalls ------------------------------------

    def test_a_stale_step_cannot_make_its_side_effect(self):
        # ``a`` stalls in ``stall`` before its side effect; ``b`` takes
        # the flow over and finishes it; ``a``'s side effect, made under
        # its fence, is refused: nothing is done twice.
        thread, flow_uuid = self.start_stalled('a:1', 'k1',
                                               effect_first=False)
        b = flows.runner(self.url, 'b:2', self.stalls)
        self.assertEqual(flows.flow_runner.RAN, b.run_saved(
            records.load_detail(self.url, flow_uuid)))
        with self.assertLogs('cellboot.flowrun.runner', 'WARNING') as log:
            self.stalls.release('a:1')
            thread.join(JOIN_SECONDS)
        self.assertEqual(
            [('before', 'a:1', 1), ('stall', 'b:2', 2), ('after', 'b:2', 2)],
            flows.effects(self.url))
        self.assertEqual(
            (states.SUCCESS, {'before': {'by': 'a:1', 'token': 1},
                              'stall': {'by': 'b:2', 'token': 2},
                              'after': {'by': 'b:2', 'token': 2}}),
            self.stored_results(flow_uuid))
        (line,) = log.output
        self.assertIn(flow_uuid, line)
        self.assertIn('holds generation 1', line)
        self.assertIn('at generation 2', line)

    def test_a_stale_run_records_nothing_and_starts_no_further_step(self):
        # ``a`` stalls in ``stall`` after its side effect (made while it
        # had the flow); ``b`` takes over and finishes. When ``a`` goes
        # on, its step's result and the start of ``after`` are one
        # write, which its fence refuses: ``a`` stops there.
        thread, flow_uuid = self.start_stalled('a:1', 'k1',
                                               effect_first=True)
        b = flows.runner(self.url, 'b:2', self.stalls)
        b.run_saved(records.load_detail(self.url, flow_uuid))
        done = self.snapshot()
        with self.assertLogs('cellboot.flowrun', 'WARNING') as log:
            self.stalls.release('a:1')
            thread.join(JOIN_SECONDS)
        self.assertEqual(done, self.snapshot())
        self.assertEqual(
            [('before', 'a:1', 1), ('stall', 'a:1', 1), ('stall', 'b:2', 2),
             ('after', 'b:2', 2)], flows.effects(self.url))
        self.assertEqual(states.SUCCESS, self.stored_results(flow_uuid)[0])
        self.assertEqual({'by': 'b:2', 'token': 2},
                         self.stored_results(flow_uuid)[1]['stall'])
        (line,) = log.output
        self.assertIn(f'{flow_uuid} was taken over', line)

    def test_a_take_over_reads_what_the_previous_run_wrote_before_it(self):
        # ``b`` read the flow while ``a`` was in ``stall``; ``a`` then
        # ended the flow before ``b`` took it over (and fenced ``a``
        # out): ``b`` runs none of the steps ``a`` recorded.
        thread, flow_uuid = self.start_stalled('a:1', 'k1',
                                               effect_first=False)
        read_by_b = records.load_detail(self.url, flow_uuid)
        self.stalls.release('a:1')
        thread.join(JOIN_SECONDS)
        b = flows.runner(self.url, 'b:2', self.stalls)
        self.assertEqual(flows.flow_runner.RAN, b.run_saved(read_by_b))
        self.assertEqual(
            [('before', 'a:1', 1), ('stall', 'a:1', 1), ('after', 'a:1', 1)],
            flows.effects(self.url))
        self.assertEqual((states.SUCCESS, 'a:1'),
                         (self.stored_results(flow_uuid)[0],
                          self.stored_results(flow_uuid)[1]['after']['by']))

    # -- hostile fences ------------------------------------------------------

    def test_a_missing_fence_refuses_every_write(self):
        flow_detail = self.posted_flow()
        token = records.take_over(self.url, flow_detail,
                                  owner='a:1').token
        engine = self.engine_for(flow_detail, token)
        engine.compile()
        engine.prepare()
        with self.db.begin() as conn:
            conn.execute(sa.delete(fencing.FENCES))
        before = self.snapshot()

        error = self.assertRaises(fencing.FencedOut, engine.storage.flush)

        self.assertEqual(before, self.snapshot())
        self.assertIsNone(error.current)
        self.assertIn('has no fence any more', str(error))

    def test_a_flow_of_an_earlier_version_gets_its_fence_when_taken(self):
        # A database of a version without fences, holding a flow: the
        # next sync adds the table, the flow's first take-over its row.
        flow_detail = self.posted_flow()
        with self.db.begin() as conn:
            conn.execute(sa.text('DROP TABLE flowfences'))
        flow_schema.sync_flow_database(self.url)
        self.assertIsNone(self.generation(flow_detail.uuid))

        run = flows.runner(self.url, 'a:1', self.stalls)
        self.assertEqual(flows.flow_runner.RAN, run.run_saved(
            records.load_detail(self.url, flow_detail.uuid)))

        self.assertEqual(
            ({('a:1', fencing.FIRST)}, fencing.FIRST, states.SUCCESS),
            ({(by, token) for _step, by, token in flows.effects(self.url)},
             self.generation(flow_detail.uuid),
             self.stored_results(flow_detail.uuid)[0]))

    def test_a_garbage_generation_makes_the_flow_refused(self):
        flow_detail = self.posted_flow()
        for garbage in (0, -7):
            self.set_generation(flow_detail.uuid, garbage)
            meta = records.load_detail(self.url, flow_detail.uuid).meta
            self.assertRaises(fencing.CorruptFence, records.take_over,
                              self.url, flow_detail, owner='a:1')
            # Rolled back with the take-over: nothing of it written.
            self.assertEqual(
                (garbage, meta),
                (self.generation(flow_detail.uuid),
                 records.load_detail(self.url, flow_detail.uuid).meta))
        run = flows.runner(self.url, 'a:1', self.stalls)
        with self.assertLogs('cellboot.flowrun.runner', 'WARNING') as log:
            run.run_saved(records.load_detail(self.url, flow_detail.uuid))
        self.assertIn('corrupt fence', '\n'.join(log.output))
        self.assertEqual([], flows.effects(self.url))

    def test_a_garbage_token_holds_nothing(self):
        flow_detail = self.posted_flow()
        for garbage in (None, '1', 1.0, True, 0, -1, [1]):
            self.assertRaises(ValueError, fencing.Fence, flow_detail.uuid,
                              garbage, self.db)
            with self.db.begin() as conn:
                error = self.assertRaises(fencing.FencedOut, fencing.hold,
                                          conn, flow_detail.uuid, garbage)
            self.assertEqual(fencing.FIRST, error.current)

    # -- purging -------------------------------------------------------------

    def test_purging_an_ended_flow_deletes_its_fence(self):
        flow_uuid = flows.start(flows.runner(self.url, 'a:1', self.stalls),
                                'k1')
        later = timeutils.utcnow() + timeutils.datetime.timedelta(days=1)
        self.assertEqual(1, tables.count_flows(self.db, [flow_uuid])[
            'flowfences'])
        counts = tables.delete_flows(self.db, [flow_uuid], later)
        self.assertEqual((1, None), (counts['flowfences'],
                                     self.generation(flow_uuid)))


class SQLiteFenceTest(_FenceTests, base.SQLiteMixin, base.TestCase):

    def test_a_text_generation_makes_the_flow_refused(self):
        # SQLite stores what it is given; ``'x' + 1`` is 1 there.
        flow_detail = self.posted_flow()
        self.set_generation(flow_detail.uuid, 'garbage')
        self.assertRaises(fencing.CorruptFence, records.take_over,
                          self.url, flow_detail, owner='a:1')
        with self.db.begin() as conn:
            error = self.assertRaises(fencing.FencedOut, fencing.hold, conn,
                                      flow_detail.uuid, 1)
        self.assertEqual('garbage', error.current)


class _ServerFenceTests(_FenceTests):
    """What only a database server with row locks can show."""

    # Transactions of this database waiting for a lock (None: the test
    # does not wait for the second run to be blocked before the first
    # commits; both orders must give the same tokens).
    LOCK_WAITS = None

    def lock_waits(self):
        with self.db.connect() as conn:
            return conn.execute(sa.text(self.LOCK_WAITS)).scalar()

    def test_two_runs_creating_a_missing_fence_get_two_tokens(self):
        # A flow of an earlier version, taken by two conductors at once:
        # the second waits for the first's row, then goes past it.
        flow_detail = self.posted_flow()
        with self.db.begin() as conn:
            conn.execute(sa.delete(fencing.FENCES))
        tokens = {}

        def second():
            with self.db.begin() as conn:
                tokens['second'] = fencing.advance(conn, flow_detail.uuid)

        with self.db.begin() as conn:
            tokens['first'] = fencing.advance(conn, flow_detail.uuid)
            thread = threading.Thread(target=second)
            thread.start()
            self.addCleanup(thread.join, JOIN_SECONDS)
            if self.LOCK_WAITS is not None:
                deadline = timeutils.utcnow() + \
                    timeutils.datetime.timedelta(seconds=JOIN_SECONDS)
                while not self.lock_waits() and \
                        timeutils.utcnow() < deadline:
                    threading.Event().wait(0.02)
                self.assertEqual(1, self.lock_waits())
        thread.join(JOIN_SECONDS)
        self.assertEqual(({'first': 1, 'second': 2}, 2),
                         (tokens, self.generation(flow_detail.uuid)))


class MySQLFenceTest(_ServerFenceTests, base.MySQLMixin, base.TestCase):
    # MariaDB's second UPDATE waits for the first run's uncommitted row
    # and increments it (PostgreSQL's does not see it, and its INSERT
    # is the one that waits, then fails); information_schema.innodb_trx
    # did not show that wait reliably on a shared server.
    pass


class PostgreSQLFenceTest(_ServerFenceTests, base.PostgreSQLMixin,
                          base.TestCase):

    LOCK_WAITS = ("SELECT COUNT(*) FROM pg_stat_activity WHERE "
                  "wait_event_type = 'Lock' AND datname = current_database()")
