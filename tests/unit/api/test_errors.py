"""The API's last line: a database that does not answer is a 503.

A request whose database is down must not look like a bug of ours (a
500 "Unexpected API error" with a traceback in the log): it answers 503
with Retry-After, in the shape of every other error, and the operator
reads one WARNING line.
"""

import logging

import fixtures
from oslo_db import exception as db_exc
import pymysql
import sqlalchemy as sa
import testtools
import webob
import webob.dec

from cellboot.api import errors


def _lost_connection():
    """What oslo.db raises for a refused connection, wrapped as it is."""
    orig = pymysql.err.OperationalError(
        2003, "Can't connect to MySQL server on '127.0.0.1' "
              "([Errno 111] Connection refused)")
    wrapped = sa.exc.OperationalError(
        'INSERT INTO build_requests (secret) VALUES (%s)', ('user data',),
        orig)
    return db_exc.DBConnectionError(wrapped)


class FaultWrapperTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name='cellboot.api.errors', level=logging.INFO))

    def call(self, exc):
        @webob.dec.wsgify
        def failing(request):
            raise exc

        wrapper = errors.FaultWrapper(failing)
        request = webob.Request.blank('/v2.1/servers', method='POST')
        return wrapper, request.get_response(wrapper)

    def test_a_database_that_does_not_answer_is_a_503(self):
        wrapper, response = self.call(_lost_connection())
        self.assertEqual(503, response.status_int)
        self.assertEqual(str(errors.DATABASE_RETRY_AFTER),
                         response.headers['Retry-After'])
        self.assertEqual({'serviceUnavailable': {
            'code': 503, 'message': errors.DATABASE_UNAVAILABLE}},
            response.json)
        self.assertEqual(0, wrapper.unexpected)

    def test_the_operator_reads_one_warning_line_without_sql(self):
        self.call(_lost_connection())
        lines = self.log.output.splitlines()
        self.assertEqual(1, len(lines), self.log.output)
        self.assertIn('POST /v2.1/servers', lines[0])
        self.assertIn('Connection refused', lines[0])
        self.assertNotIn('Traceback', self.log.output)
        self.assertNotIn('user data', self.log.output)

    def test_other_errors_are_still_a_500(self):
        wrapper, response = self.call(RuntimeError('bug'))
        self.assertEqual(500, response.status_int)
        self.assertEqual(1, wrapper.unexpected)
