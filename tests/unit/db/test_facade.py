"""URL handling and SQLite writer queues shared by every database."""

import os

import sqlalchemy as sa

from cellboot.db import facade
from cellboot import exception
from tests import base


class ParseUrlTest(base.TestCase):

    def test_unknown_dialect_is_invalid(self):
        self.assertRaises(exception.InvalidDatabaseURL,
                          facade.parse_url, 'nosuchdb://x/y')

    def test_invalid_url_error_does_not_leak_the_password(self):
        err = self.assertRaises(exception.InvalidDatabaseURL,
                                facade.parse_url,
                                'mysql://u:s3cret@db:notaport/api')
        self.assertNotIn('s3cret', str(err))

    def test_invalid_url_error_does_not_leak_a_password_with_a_slash(self):
        err = self.assertRaises(exception.InvalidDatabaseURL,
                                facade.parse_url,
                                'mysql://u:s3/cr,et@db:notaport/api')
        self.assertNotIn('s3/cr,et', str(err))
        self.assertNotIn('cr,et', str(err))

    def test_empty_url_is_invalid(self):
        self.assertRaises(exception.InvalidDatabaseURL, facade.parse_url, '')


class QueueSQLiteWritersTest(base.TestCase):

    def test_in_memory_engine_gets_no_writer_queue(self):
        engine = sa.create_engine('sqlite://')
        self.addCleanup(engine.dispose)
        facade.queue_sqlite_writers(engine)
        self.assertIsNone(getattr(engine, 'cellboot_writer_queue', None))

    def test_file_engine_gets_the_file_writer_queue(self):
        path = os.path.join(self.state_path, 'q.sqlite')
        engine = sa.create_engine('sqlite:///' + path)
        self.addCleanup(engine.dispose)
        facade.queue_sqlite_writers(engine)
        self.assertIs(facade.writer_queue(path),
                      engine.cellboot_writer_queue)


class BoundedWaitsTest(base.TestCase):
    """A database server that is down fails a connection within seconds."""

    URL = 'mysql+pymysql://u:p@db.example/api'

    def test_server_databases_get_a_connect_timeout(self):
        self.assertEqual(
            f'connect_timeout={facade.CONNECT_TIMEOUT_SECONDS}',
            facade.bounded_waits(self.URL, None))

    def test_a_read_timeout_is_added_when_asked_for(self):
        self.assertEqual(
            f'charset=utf8&connect_timeout={facade.CONNECT_TIMEOUT_SECONDS}'
            f'&read_timeout=3',
            facade.bounded_waits(self.URL, 'charset=utf8', read_timeout=3))

    def test_what_the_url_sets_is_left_alone(self):
        self.assertIsNone(facade.bounded_waits(
            self.URL + '?connect_timeout=1', None))

    def test_sqlite_gets_nothing(self):
        self.assertIsNone(facade.bounded_waits('sqlite:///x.sqlite', None))
