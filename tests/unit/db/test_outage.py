"""Riding out a database outage: what counts as one, how long, the log."""

import logging
from unittest import mock

import fixtures
from oslo_db import exception as db_exc
import pymysql
import sqlalchemy as sa

from cellboot.db import outage
from tests import base
from tests import fixtures as cb_fixtures
from tests.unit.db.test_retry import _PgError
from tests.unit.db.test_retry import _wrapped


class _PgConnectionError(Exception):
    """psycopg2's OperationalError of a refused connection: no SQLSTATE."""

    __module__ = 'psycopg2'
    pgcode = None


class IsConnectionLostTest(base.TestCase):
    """What a real cut raises (tests/functional/db/test_outage.py): these."""

    def test_oslo_db_s_connection_error(self):
        self.assertTrue(outage.is_connection_lost(db_exc.DBConnectionError()))

    def test_mysql_client_errors_of_a_lost_or_refused_connection(self):
        for errno in (2002, 2003, 2006, 2013, 2055):
            self.assertTrue(outage.is_connection_lost(_wrapped(
                pymysql.err.OperationalError(errno, 'gone'))), errno)

    def test_an_invalidated_connection(self):
        error = _wrapped(Exception('closed'))
        error.connection_invalidated = True
        self.assertTrue(outage.is_connection_lost(error))

    def test_a_postgresql_error_without_sqlstate(self):
        self.assertTrue(outage.is_connection_lost(sa.exc.OperationalError(
            'SELECT 1', {}, _PgConnectionError('connection refused'))))
        # oslo.db's DBError around SQLAlchemy's.
        self.assertTrue(outage.is_connection_lost(db_exc.DBError(
            sa.exc.OperationalError('SELECT 1', {}, _PgConnectionError()))))

    def test_statement_errors_and_contention_are_not_outages(self):
        self.assertFalse(outage.is_connection_lost(db_exc.DBDeadlock()))
        self.assertFalse(outage.is_connection_lost(_wrapped(
            pymysql.err.OperationalError(1213, 'deadlock'))))
        self.assertFalse(outage.is_connection_lost(_wrapped(
            pymysql.err.OperationalError(1054, 'unknown column'))))
        self.assertFalse(outage.is_connection_lost(sa.exc.OperationalError(
            'SELECT 1', {}, _PgError('40P01'))))
        self.assertFalse(outage.is_connection_lost(db_exc.DBDuplicateEntry()))
        self.assertFalse(outage.is_connection_lost(
            ConnectionError('not a database error')))
        self.assertFalse(outage.is_connection_lost(ValueError('2013')))


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
            name='cellboot.db', level=logging.DEBUG,
            format='%(levelname)s %(message)s'))

    def test_runs_again_until_the_database_answers(self):
        fn = mock.Mock(side_effect=[db_exc.DBConnectionError(),
                                    db_exc.DBConnectionError(), 'done'])
        self.assertEqual('done', outage.on_outage(fn)())
        self.assertEqual(3, fn.call_count)
        self.assertEqual(2, len(self.sleeps))
        for n, pause in enumerate(self.sleeps):
            window = min(outage.OUTAGE_MAX_PAUSE,
                         outage.OUTAGE_FIRST_PAUSE * 2 ** n)
            self.assertTrue(0 <= pause <= window, (n, pause, window))

    def test_gives_up_once_its_pauses_reach_the_bound(self):
        self.conf.config(outage_retry_seconds=10, group='database')
        last = db_exc.DBConnectionError('the last')
        fn = mock.Mock(side_effect=[db_exc.DBConnectionError()] * 1000 +
                       [last])
        raised = self.assertRaises(db_exc.DBConnectionError,
                                   outage.on_outage(fn))
        self.assertIsInstance(raised, db_exc.DBConnectionError)
        # At least 10 s of pauses of at most 2 s each; not one more pause
        # once the bound was reached.
        self.assertGreaterEqual(sum(self.sleeps), 10)
        self.assertLess(sum(self.sleeps) - self.sleeps[-1], 10)
        self.assertGreaterEqual(fn.call_count, 10 // outage.OUTAGE_MAX_PAUSE)
        self.assertLess(fn.call_count, 1000)
        self.assertIn('giving up', self.log.output)

    def test_zero_disables_the_retries(self):
        self.conf.config(outage_retry_seconds=0, group='database')
        fn = mock.Mock(side_effect=db_exc.DBConnectionError())
        self.assertRaises(db_exc.DBConnectionError, outage.on_outage(fn))
        self.assertEqual(1, fn.call_count)
        self.assertEqual([], self.sleeps)

    def test_other_errors_and_contention_are_not_its_business(self):
        for error in (ValueError('mine'), db_exc.DBDeadlock(),
                      db_exc.DBDuplicateEntry()):
            fn = mock.Mock(side_effect=error)
            self.assertRaises(type(error), outage.on_outage(fn))
            self.assertEqual(1, fn.call_count)
        self.assertEqual([], self.sleeps)

    def test_an_outage_is_one_warning_and_one_info_not_one_per_attempt(self):
        fn = mock.Mock(side_effect=[db_exc.DBConnectionError()] * 5 +
                       ['done'])
        outage.on_outage(fn)()
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
            return outage.on_outage(inner)()

        outer = mock.Mock(side_effect=[db_exc.DBConnectionError(),
                                       outer_fn])
        outage.on_outage(lambda: outer()())()
        levels = [line.split(' ', 1)[0] for line in
                  self.log.output.splitlines()]
        self.assertEqual(1, levels.count('WARNING'), self.log.output)
        self.assertIn('answers again: 2 call(s)', self.log.output)

    def test_ride_out_runs_again_for_every_retry(self):
        first = mock.Mock(side_effect=db_exc.DBConnectionError())
        again = mock.Mock(side_effect=[db_exc.DBConnectionError(),
                                       'found done'])
        self.assertEqual('found done', outage.ride_out(first, again))
        self.assertEqual(1, first.call_count)
        self.assertEqual(2, again.call_count)

    def test_ride_out_without_trouble_runs_first_alone(self):
        first = mock.Mock(return_value='done')
        again = mock.Mock()
        self.assertEqual('done', outage.ride_out(first, again))
        again.assert_not_called()

    def test_a_wider_predicate(self):
        remote = RuntimeError('DBConnectionError in the scheduler')
        fn = mock.Mock(side_effect=[remote, 'done'])
        self.assertEqual('done', outage.on_outage(
            fn, should_retry=lambda exc: exc is remote)())


class LogFailureTest(base.TestCase):
    """A periodic task's failure: one line for an outage, a traceback
    for anything else."""

    def _logged(self, exc):
        logger = logging.getLogger('cellboot.test.log_failure')
        with self.assertLogs(logger, 'DEBUG') as seen:
            try:
                raise exc
            except Exception as raised:
                outage.log_failure(logger, raised, '%s failed; again in %s s',
                                   'heartbeat', 10)
        return seen.records

    def test_a_lost_database_is_one_warning_line_without_traceback(self):
        records = self._logged(db_exc.DBConnectionError(
            'connection refused\n(Background on this error at: ...)'))
        self.assertEqual([logging.WARNING],
                         [record.levelno for record in records])
        self.assertIsNone(records[0].exc_info)
        message = records[0].getMessage()
        self.assertIn('heartbeat failed; again in 10 s', message)
        self.assertIn('the database cannot be reached', message)
        self.assertNotIn('\n', message)

    def test_anything_else_is_an_error_with_its_traceback(self):
        records = self._logged(ValueError('a bug'))
        self.assertEqual([logging.ERROR],
                         [record.levelno for record in records])
        self.assertIsNotNone(records[0].exc_info)
