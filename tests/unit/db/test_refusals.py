"""A connection refused at a server's connection limit: ridden out, named.

The errors are raised where the driver's connect() would raise them (the
engine's ``do_connect`` event), so they travel through SQLAlchemy's and
oslo.db's error handling as a real refusal does
(tests/functional/db/test_connection_limit.py meets a real one).
"""

import logging
from unittest import mock

import fixtures
from oslo_db import exception as db_exc
import psycopg2
import pymysql
import sqlalchemy as sa

from cellboot.db import facade
from cellboot.db import outage
from cellboot.db import refusals
from tests import base
from tests import fixtures as cb_fixtures

MYSQL = 'mysql+pymysql://u:p@db.example/api'
POSTGRESQL = 'postgresql+psycopg2://u:p@db.example/api'

# What the servers say (MariaDB 10.11, PostgreSQL 15 through libpq 15).
TOO_MANY_CONNECTIONS = (1040, 'Too many connections')
USER_LIMIT = (1226, "User 'cb' has exceeded the 'max_user_connections' "
                    "resource (current value: 2)")
GLOBAL_USER_LIMIT = (1203, "User cb already has more than "
                           "'max_user_connections' active connections")
QUESTIONS_LIMIT = (1226, "User 'cb' has exceeded the 'max_questions' "
                         "resource (current value: 10)")
PG_TOO_MANY = ('connection to server at "127.0.0.1", port 5432 failed: '
               'FATAL:  sorry, too many clients already\n')
PG_RESERVED = ('connection to server at "127.0.0.1", port 5432 failed: '
               'FATAL:  remaining connection slots are reserved for '
               'non-replication superuser connections\n')
PG_ROLE = ('connection to server at "127.0.0.1", port 5432 failed: '
           'FATAL:  too many connections for role "cb"\n')


def refused_connect(url, error, facade_engine=True):
    """What connecting through an engine on ``url`` raises for ``error``."""
    if facade_engine:
        manager = facade.new_context_manager(url, max_retries=0)
        engine = manager.writer.get_engine()
    else:
        engine = sa.create_engine(url)

    def refuse(dialect, conn_rec, cargs, cparams):
        raise error

    sa.event.listen(engine, 'do_connect', refuse)
    try:
        engine.connect()
    except Exception as exc:
        return exc
    finally:
        engine.dispose()
    raise AssertionError('the connection was not refused')


class ClassificationTest(base.TestCase):
    """Which errors are refusals, which limit, and what oslo.db makes
    of them on our engines."""

    def test_mysql_refusals_become_connection_errors(self):
        for args, limit in ((TOO_MANY_CONNECTIONS, 'max_connections'),
                            (USER_LIMIT, 'max_user_connections'),
                            (GLOBAL_USER_LIMIT, 'max_user_connections')):
            exc = refused_connect(MYSQL, pymysql.err.OperationalError(*args))
            self.assertIsInstance(exc, db_exc.DBConnectionError, args)
            self.assertEqual(limit, refusals.refused_for(exc).name)
            self.assertTrue(outage.is_connection_lost(exc))

    def test_another_user_resource_is_no_refusal(self):
        exc = refused_connect(
            MYSQL, pymysql.err.OperationalError(*QUESTIONS_LIMIT))
        self.assertNotIsInstance(exc, db_exc.DBConnectionError)
        self.assertIsNone(refusals.refused_for(exc))
        self.assertFalse(outage.is_connection_lost(exc))

    def test_postgresql_refusals_are_connection_errors(self):
        for message, limit in ((PG_TOO_MANY, 'max_connections'),
                               (PG_RESERVED, 'max_connections'),
                               (PG_ROLE, 'CONNECTION LIMIT')):
            exc = refused_connect(POSTGRESQL,
                                  psycopg2.OperationalError(message))
            self.assertIsInstance(exc, db_exc.DBConnectionError, message)
            self.assertEqual(limit, refusals.refused_for(exc).name)
            self.assertTrue(outage.is_connection_lost(exc))

    def test_refusals_on_the_flow_engine(self):
        # TaskFlow's engine is a plain SQLAlchemy one: no oslo.db filter.
        for url, error in (
                (MYSQL, pymysql.err.OperationalError(*TOO_MANY_CONNECTIONS)),
                (MYSQL, pymysql.err.OperationalError(*USER_LIMIT)),
                (POSTGRESQL, psycopg2.OperationalError(PG_TOO_MANY))):
            exc = refused_connect(url, error, facade_engine=False)
            self.assertIsInstance(exc, sa.exc.OperationalError)
            self.assertTrue(outage.is_connection_lost(exc), error)
            self.assertIsNotNone(refusals.refused_for(exc))

    def test_other_errors_are_no_refusals(self):
        self.assertIsNone(refusals.refused_for(ValueError('1040')))
        self.assertIsNone(refusals.refused_for(
            pymysql.err.OperationalError(1213, 'Deadlock found')))
        self.assertIsNone(refusals.refused_for(
            psycopg2.OperationalError('could not connect: refused')))


class WarningTest(base.TestCase):

    def setUp(self):
        super().setUp()
        refusals.WARNINGS.reset()
        self.addCleanup(refusals.WARNINGS.reset)
        self.log = self.useFixture(fixtures.FakeLogger(
            name='cellboot.db', level=logging.DEBUG,
            format='%(levelname)s %(message)s'))

    def warnings(self):
        return [line for line in self.log.output.splitlines()
                if line.startswith('WARNING')]

    def test_one_warning_per_limit_naming_it(self):
        for _ in range(5):
            self.assertTrue(refusals.warn(
                pymysql.err.OperationalError(*TOO_MANY_CONNECTIONS), 'x'))
        refusals.warn(pymysql.err.OperationalError(*USER_LIMIT), 'x')
        lines = self.warnings()
        self.assertEqual(2, len(lines), lines)
        self.assertIn('max_connections limit is reached', lines[0])
        self.assertIn("raise the server's max_connections", lines[0])
        self.assertIn('max_user_connections limit is reached', lines[1])
        self.assertIn('MAX_USER_CONNECTIONS', lines[1])

    def test_said_again_after_the_interval(self):
        error = pymysql.err.OperationalError(*TOO_MANY_CONNECTIONS)
        with mock.patch('time.monotonic', return_value=1000.0):
            refusals.warn(error, 'x')
        with mock.patch('time.monotonic', return_value=1001.0):
            refusals.warn(error, 'x')
        with mock.patch(
                'time.monotonic',
                return_value=1000.0 + refusals.WARNING_INTERVAL_SECONDS):
            refusals.warn(error, 'x')
        self.assertEqual(2, len(self.warnings()))

    def test_no_warning_for_other_errors(self):
        self.assertFalse(refusals.warn(ValueError('x'), 'x'))
        self.assertEqual([], self.warnings())


class RiddenOutTest(base.TestCase):
    """The outage policy waits a refusal out, with the limit's WARNING
    instead of the outage's."""

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(cb_fixtures.ConfFixture()).conf
        self.useFixture(fixtures.MockPatch('tenacity.nap.time.sleep'))
        refusals.WARNINGS.reset()
        self.addCleanup(refusals.WARNINGS.reset)
        self.log = self.useFixture(fixtures.FakeLogger(
            name='cellboot.db', level=logging.INFO,
            format='%(levelname)s %(message)s'))

    def test_a_refused_write_runs_again_with_one_warning(self):
        refused = refused_connect(
            MYSQL, pymysql.err.OperationalError(*TOO_MANY_CONNECTIONS))
        for _ in range(3):
            fn = mock.Mock(side_effect=[refused, refused, 'done'])
            fn.__qualname__ = 'write'
            self.assertEqual('done', outage.on_outage(fn)())
        warnings = [line for line in self.log.output.splitlines()
                    if line.startswith('WARNING')]
        self.assertEqual(1, len(warnings), warnings)
        self.assertIn('max_connections limit is reached', warnings[0])
        self.assertIn('write and every write that meets the refusal are '
                      'run again for up to 30 s', warnings[0])
        self.assertNotIn('cannot be reached', self.log.output)
