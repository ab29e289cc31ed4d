"""Columns that hold what a user sent take any request the API accepts.

``build_requests.instance``, ``request_specs.spec`` (API database) and
``instances.metadata`` (cell databases) hold a server's metadata and
hints as JSON, escaped: up to a few hundred KB for a request body the
API accepts. On MariaDB/MySQL, TEXT stops at 64 KiB; revisions
237bf1d57ee6 (API) and 9cdf91a8ceab (cell) make these MEDIUMTEXT there.
Checked on every backend, from a database at the revision before, the
way an existing deployment is upgraded.
"""

import json

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy import pool

from cellboot.db import migration
from tests import base
from tests import fixtures as cb_fixtures

# About 1 MB of escaped JSON: past TEXT, well within MEDIUMTEXT.
DOCUMENT = json.dumps({'metadata': {f'k{index}': '\U0001F600' * 255
                                    for index in range(300)}})

# (tree, revision before, table, column, other columns of a row)
COLUMNS = (
    ('api', '55420de898bd', 'build_requests', 'instance',
     {'instance_uuid': 'u' * 36, 'project_id': 'p'}),
    ('api', '55420de898bd', 'request_specs', 'spec',
     {'instance_uuid': 'u' * 36}),
    ('cell', 'c84b45172373', 'instances', 'metadata',
     {'uuid': 'u' * 36, 'project_id': 'p', 'vm_state': 'building',
      'deleted': False}),
)


class _LargeDocumentTests:

    def setUp(self):
        super().setUp()
        # A database per tree: both have tables of the same names.
        self.urls = {tree: self.useFixture(
            cb_fixtures.Database(self.BACKEND)).url
            for tree in ('api', 'cell')}
        self.engines = {}
        for tree, url in self.urls.items():
            self.engines[tree] = sa.create_engine(url,
                                                  poolclass=pool.NullPool)
            self.addCleanup(self.engines[tree].dispose)

    def write(self, tree, table, column, values):
        """Insert a row holding DOCUMENT in ``column``; read it back."""
        engine = self.engines[tree]
        metadata = sa.MetaData()
        rows = sa.Table(table, metadata, autoload_with=engine)
        with engine.begin() as conn:
            conn.execute(sa.delete(rows))
            conn.execute(sa.insert(rows).values(
                **dict(values, **{column: DOCUMENT})))
        with engine.connect() as conn:
            return conn.execute(sa.select(rows.c[column])).scalar()

    def test_an_upgraded_database_holds_the_largest_documents(self):
        for tree, before, _table, _column, _values in COLUMNS:
            migration.db_sync(tree, self.urls[tree], version=before)
        if self.BACKEND == 'mysql':
            # What the upgrade is for: TEXT refuses them.
            for tree, _before, table, column, values in COLUMNS:
                self.assertRaises(sa_exc.DBAPIError, self.write, tree, table,
                                  column, values)
        for tree, _before, table, column, values in COLUMNS:
            migration.db_sync(tree, self.urls[tree])
            stored = self.write(tree, table, column, values)
            self.assertTrue(stored == DOCUMENT, f'{table}.{column}: '
                            f'{len(stored)} of {len(DOCUMENT)} characters')


class SQLiteLargeDocumentTest(_LargeDocumentTests, base.SQLiteMixin,
                              base.TestCase):
    pass


class MySQLLargeDocumentTest(_LargeDocumentTests, base.MySQLMixin,
                             base.TestCase):
    pass


class PostgreSQLLargeDocumentTest(_LargeDocumentTests,
                                  base.PostgreSQLMixin, base.TestCase):
    pass
