"""The one database retry policy: what it retries, how often, and not."""

import logging
from unittest import mock

import fixtures
from oslo_db import exception as db_exc
import pymysql
import sqlalchemy as sa

from cellboot.db import retry
from tests import base
from tests import fixtures as cb_fixtures


def _wrapped(orig):
    """SQLAlchemy's wrapper of a driver error, as a plain engine raises."""
    return sa.exc.OperationalError('UPDATE x', {}, orig)


class _PgError(Exception):
    def __init__(self, pgcode):
        super().__init__(f'SQLSTATE {pgcode}')
        self.pgcode = pgcode


class IsRetriableTest(base.TestCase):

    def test_translated_deadlock_and_consistency_errors(self):
        self.assertTrue(retry.is_retriable(db_exc.DBDeadlock()))
        self.assertTrue(retry.is_retriable(db_exc.DBConsistencyError()))

    def test_sqlite_busy_error(self):
        self.assertTrue(retry.is_retriable(_wrapped(
            Exception('database is locked'))))
        self.assertTrue(retry.is_retriable(db_exc.DBError(
            'database is locked')))

    def test_untranslated_mysql_errnos(self):
        for errno in (1213, 1205, 1020):
            self.assertTrue(retry.is_retriable(_wrapped(
                pymysql.err.OperationalError(errno, 'busy'))), errno)
        self.assertFalse(retry.is_retriable(_wrapped(
            pymysql.err.OperationalError(1062, 'duplicate'))))

    def test_untranslated_postgresql_sqlstates(self):
        for code in ('40001', '40P01'):
            self.assertTrue(retry.is_retriable(_wrapped(_PgError(code))))
        self.assertFalse(retry.is_retriable(_wrapped(_PgError('23505'))))

    def test_an_untranslated_error_under_oslo_db_s_dberror(self):
        self.assertTrue(retry.is_retriable(db_exc.DBError(_wrapped(
            _PgError('40001')))))

    def test_a_lost_connection_is_not_retried(self):
        self.assertFalse(retry.is_retriable(db_exc.DBConnectionError()))
        self.assertFalse(retry.is_retriable(_wrapped(
            pymysql.err.OperationalError(2013, 'Lost connection'))))

    def test_other_errors_are_not_retried(self):
        self.assertFalse(retry.is_retriable(db_exc.DBDuplicateEntry()))
        self.assertFalse(retry.is_retriable(ValueError('database is '
                                                       'locked')))


class OnContentionTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.sleeps = []
        self.useFixture(fixtures.MockPatch(
            'tenacity.nap.time.sleep', side_effect=self.sleeps.append))
        retry.RETRY_COUNT.reset()
        self.addCleanup(retry.RETRY_COUNT.reset)

    def test_runs_again_until_the_database_lets_it_through(self):
        fn = mock.Mock(side_effect=[db_exc.DBDeadlock(),
                                    db_exc.DBDeadlock(), 'done'])
        self.assertEqual('done', retry.on_contention(fn)())
        self.assertEqual(3, fn.call_count)
        self.assertEqual(2, retry.RETRY_COUNT.value)

    def test_gives_up_after_the_policy_s_retries_with_the_last_error(self):
        last = db_exc.DBDeadlock('the last')
        errors = [db_exc.DBDeadlock()] * retry.RETRIES + [last]
        fn = mock.Mock(side_effect=errors)
        raised = self.assertRaises(db_exc.DBDeadlock,
                                   retry.on_contention(fn))
        self.assertIs(last, raised)
        self.assertEqual(retry.RETRIES + 1, fn.call_count)

    def test_pauses_are_jittered_within_a_doubling_capped_window(self):
        fn = mock.Mock(side_effect=[db_exc.DBDeadlock()] * retry.RETRIES
                       + ['done'])
        retry.on_contention(fn)()
        self.assertEqual(retry.RETRIES, len(self.sleeps))
        for n, pause in enumerate(self.sleeps):
            window = min(retry.MAX_PAUSE, retry.FIRST_PAUSE * 2 ** n)
            self.assertTrue(0 <= pause <= window, (n, pause, window))

    def test_other_errors_are_raised_at_once(self):
        fn = mock.Mock(side_effect=ValueError('mine'))
        self.assertRaises(ValueError, retry.on_contention(fn))
        self.assertEqual(1, fn.call_count)
        self.assertEqual([], self.sleeps)

    def test_the_iterable_form_follows_the_same_policy(self):
        fn = mock.Mock(side_effect=[db_exc.DBDeadlock(), 'done'])
        for attempt in retry.attempts():
            with attempt:
                result = fn()
        self.assertEqual('done', result)
        self.assertEqual(1, retry.RETRY_COUNT.value)


class OnDuplicateTest(base.TestCase):

    def test_the_loser_of_a_unique_key_race_runs_again_at_once(self):
        fn = mock.Mock(side_effect=[db_exc.DBDuplicateEntry(), 'found'])
        self.assertEqual('found', retry.on_duplicate(fn)())

    def test_a_lasting_collision_is_the_caller_s(self):
        fn = mock.Mock(side_effect=db_exc.DBDuplicateEntry())
        self.assertRaises(db_exc.DBDuplicateEntry, retry.on_duplicate(fn))
        self.assertEqual(retry.DUPLICATE_RETRIES + 1, fn.call_count)


class _PgConnectionError(Exception):
    """psycopg2's OperationalError of a refused connection: no SQLSTATE."""

    __module__ = 'psycopg2'
    pgcode = None


class IsConnectionLostTest(base.TestCase):
    """What a real cut raises (tests/functional/db/test_outage.py): these."""

    def test_oslo_db_s_connection_error(self):
        self.assertTrue(retry.is_connection_lost(db_exc.DBConnectionError()))

    def test_mysql_client_errors_of_a_lost_or_refused_connection(self):
        for errno in (2002, 2003, 2006, 2013, 2055):
            self.assertTrue(retry.is_connection_lost(_wrapped(
                pymysql.err.OperationalError(errno, 'gone'))), errno)

    def test_an_invalidated_connection(self):
        error = _wrapped(Exception('closed'))
        error.connection_invalidated = True
        self.assertTrue(retry.is_connection_lost(error))

    def test_a_postgresql_error_without_sqlstate(self):
        self.assertTrue(retry.is_connection_lost(sa.exc.OperationalError(
            'SELECT 1', {}, _PgConnectionError('connection refused'))))
        # oslo.db's DBError around SQLAlchemy's.
        self.assertTrue(retry.is_connection_lost(db_exc.DBError(
            sa.exc.OperationalError('SELECT 1', {}, _PgConnectionError()))))

    def test_statement_errors_and_contention_are_not_outages(self):
        self.assertFalse(retry.is_connection_lost(db_exc.DBDeadlock()))
        self.assertFalse(retry.is_connection_lost(_wrapped(
            pymysql.err.OperationalError(1213, 'deadlock'))))
        self.assertFalse(retry.is_connection_lost(_wrapped(
            pymysql.err.OperationalError(1054, 'unknown column'))))
        self.assertFalse(retry.is_connection_lost(sa.exc.OperationalError(
            'SELECT 1', {}, _PgError('40P01'))))
        self.assertFalse(retry.is_connection_lost(db_exc.DBDuplicateEntry()))
        self.assertFalse(retry.is_connection_lost(
            ConnectionError('not a database error')))
        self.assertFalse(retry.is_connection_lost(ValueError('2013')))


class OnOutageTest(base.TestCase):
    """Bounded by [database] outage_retry_seconds; sleeps are instant here,
    and the bound counts the pauses then (``_outage_stop``)."""

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(cb_fixtures.ConfFixture()).conf
        self.sleeps = []
        self.useFixture(fixtures.MockPatch(
            'tenacity.nap.time.sleep', side_effect=self.sleeps.append))
        self.log = self.useFixture(fixtures.FakeLogger(
            name='cellboot.db.retry', level=logging.DEBUG,
            format='%(levelname)s %(message)s'))

    def test_runs_again_until_the_database_answers(self):
        fn = mock.Mock(side_effect=[db_exc.DBConnectionError(),
                                    db_exc.DBConnectionError(), 'done'])
        self.assertEqual('done', retry.on_outage(fn)())
        self.assertEqual(3, fn.call_count)
        self.assertEqual(2, len(self.sleeps))
        for n, pause in enumerate(self.sleeps):
            window = min(retry.OUTAGE_MAX_PAUSE,
                         retry.OUTAGE_FIRST_PAUSE * 2 ** n)
            self.assertTrue(0 <= pause <= window, (n, pause, window))

    def test_gives_up_once_its_pauses_reach_the_bound(self):
        self.conf.config(outage_retry_seconds=10, group='database')
        last = db_exc.DBConnectionError('the last')
        fn = mock.Mock(side_effect=[db_exc.DBConnectionError()] * 1000 +
                       [last])
        raised = self.assertRaises(db_exc.DBConnectionError,
                                   retry.on_outage(fn))
        self.assertIsInstance(raised, db_exc.DBConnectionError)
        # At least 10 s of pauses of at most 2 s each; not one more pause
        # once the bound was reached.
        self.assertGreaterEqual(sum(self.sleeps), 10)
        self.assertLess(sum(self.sleeps) - self.sleeps[-1], 10)
        self.assertGreaterEqual(fn.call_count, 10 // retry.OUTAGE_MAX_PAUSE)
        self.assertLess(fn.call_count, 1000)
        self.assertIn('giving up', self.log.output)

    def test_zero_disables_the_retries(self):
        self.conf.config(outage_retry_seconds=0, group='database')
        fn = mock.Mock(side_effect=db_exc.DBConnectionError())
        self.assertRaises(db_exc.DBConnectionError, retry.on_outage(fn))
        self.assertEqual(1, fn.call_count)
        self.assertEqual([], self.sleeps)

    def test_other_errors_and_contention_are_not_its_business(self):
        for error in (ValueError('mine'), db_exc.DBDeadlock(),
                      db_exc.DBDuplicateEntry()):
            fn = mock.Mock(side_effect=error)
            self.assertRaises(type(error), retry.on_outage(fn))
            self.assertEqual(1, fn.call_count)
        self.assertEqual([], self.sleeps)

    def test_an_outage_is_one_warning_and_one_info_not_one_per_attempt(self):
        fn = mock.Mock(side_effect=[db_exc.DBConnectionError()] * 5 +
                       ['done'])
        retry.on_outage(fn)()
        levels = [line.split(' ', 1)[0] for line in
                  self.log.output.splitlines()]
        self.assertEqual(1, levels.count('WARNING'), self.log.output)
        self.assertEqual(1, levels.count('INFO'), self.log.output)
        self.assertIn('answers again: 1 call(s)', self.log.output)
        self.assertNotIn('Traceback', self.log.output)

    def test_calls_meeting_one_outage_share_its_warning(self):
        inner = mock.Mock(side_effect=[db_exc.DBConnectionError(), 'inner'])

        def outer_fn():
            # A second call starts riding while the first one still does.
            return retry.on_outage(inner)()

        outer = mock.Mock(side_effect=[db_exc.DBConnectionError(),
                                       outer_fn])
        retry.on_outage(lambda: outer()())()
        levels = [line.split(' ', 1)[0] for line in
                  self.log.output.splitlines()]
        self.assertEqual(1, levels.count('WARNING'), self.log.output)
        self.assertIn('answers again: 2 call(s)', self.log.output)

    def test_ride_out_runs_again_for_every_retry(self):
        first = mock.Mock(side_effect=db_exc.DBConnectionError())
        again = mock.Mock(side_effect=[db_exc.DBConnectionError(),
                                       'found done'])
        self.assertEqual('found done', retry.ride_out(first, again))
        self.assertEqual(1, first.call_count)
        self.assertEqual(2, again.call_count)

    def test_ride_out_without_trouble_runs_first_alone(self):
        first = mock.Mock(return_value='done')
        again = mock.Mock()
        self.assertEqual('done', retry.ride_out(first, again))
        again.assert_not_called()

    def test_a_wider_predicate(self):
        remote = RuntimeError('DBConnectionError in the scheduler')
        fn = mock.Mock(side_effect=[remote, 'done'])
        self.assertEqual('done', retry.on_outage(
            fn, should_retry=lambda exc: exc is remote)())
