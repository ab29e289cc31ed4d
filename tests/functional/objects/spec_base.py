"""What the object specifications share: databases, a context, cells.

Each test module keeps its specification in a mixin-free ``_XxxTests``
class built on ``ObjectTests`` and runs it on SQLite, MariaDB and
PostgreSQL through three small concrete classes on ``ObjectTestCase``.

Creating a server database takes about half a second, so the databases
are made once per test class and emptied after every test, instead of
being made anew for each of the hundreds of object tests.
"""

import datetime

import fixtures
from oslo_utils import timeutils
import sqlalchemy as sa

from cellboot import context
from cellboot.db.api import connection as api_connection
from cellboot.db.cell import connection as cell_connection
from cellboot.objects import cell_mapping
from tests import base
from tests import fixtures as cb_fixtures


def _class_database(cls, schema):
    """A Database fixture living as long as the test class."""
    database = cb_fixtures.Database(cls.BACKEND, schema=schema)
    try:
        database.setUp()
    except fixtures.MultipleExceptions as exc:
        # Re-raise the fixture's own error (a SkipTest when the server is
        # not reachable), not the fixtures wrapper around it.
        raise exc.args[0][1]
    cls.addClassCleanup(database.cleanUp)
    engine = sa.create_engine(database.url)
    cls.addClassCleanup(engine.dispose)  # runs before the drop
    return database.url, engine


class ObjectTestCase(base.TestCase):
    """An API database and ``CELL_DATABASES`` cell databases per class.

    The first cell database is the local ``[database] connection``; the
    others are there for tests that target a cell.
    """

    BACKEND = 'sqlite'
    CELL_DATABASES = 0

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.api_url, api_engine = _class_database(cls, 'api')
        cells = [_class_database(cls, 'cell')
                 for _ in range(cls.CELL_DATABASES)]
        cls.cell_urls = [url for url, _engine in cells]
        cls._emptied = [(api_engine, cb_fixtures.SCHEMAS['api'])] + [
            (engine, cb_fixtures.SCHEMAS['cell']) for _url, engine in cells]

    def setUp(self):
        super().setUp()
        self.flags(connection=self.api_url, group='api_database')
        if self.cell_urls:
            self.flags(connection=self.cell_urls[0], group='database')
        api_connection.reset()
        cell_connection.reset()
        self.addCleanup(self._empty_databases)

    def _empty_databases(self):
        api_connection.reset()
        cell_connection.reset()
        for engine, metadata in self._emptied:
            with engine.begin() as conn:
                for table in reversed(metadata.sorted_tables):
                    # MariaDB checks a row's references as it deletes it:
                    # a tree (zones) is cut loose from itself first.
                    for key in table.foreign_keys:
                        if key.column.table is table:
                            conn.execute(table.update().values(
                                {key.parent.name: None}))
                    conn.execute(table.delete())


class ObjectTests:
    """Spec base: ``self.ctx`` is an admin context."""

    def setUp(self):
        super().setUp()
        self.ctx = context.get_admin_context()

    def make_cell(self, name, database_connection='sqlite://', **kwargs):
        """Map a cell (its database is not used unless given)."""
        return cell_mapping.CellMapping.create(
            self.ctx, name, database_connection, 'fake://', **kwargs)

    def make_remote_cell(self, name):
        """Map a cell on the second cell database (not the local one)."""
        return self.make_cell(name, self.cell_urls[1])

    def assertRecent(self, when):
        """``when`` is a naive UTC time of this test (MySQL: whole s)."""
        self.assertIsNotNone(when)
        self.assertIsNone(when.tzinfo)
        now = timeutils.utcnow()
        self.assertLessEqual(now - datetime.timedelta(seconds=60), when)
        self.assertLessEqual(when, now)
