"""The contention retry policy: what it retries, how often, and not."""

from unittest import mock

import fixtures
from oslo_db import exception as db_exc
import pymysql
import sqlalchemy as sa

from cellboot.db import retry
from tests import base


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
