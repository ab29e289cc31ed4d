"""The database fixtures give each backend a usable, empty schema."""

import sqlalchemy as sa

from tests import base


class _DatabaseFixtureTests:

    def test_api_schema_is_created_and_empty(self):
        engine = sa.create_engine(self.dbs.api_url)
        self.addCleanup(engine.dispose)
        names = sa.inspect(engine).get_table_names()
        self.assertIn('cell_mappings', names)
        with engine.connect() as conn:
            count = conn.execute(
                sa.text('SELECT COUNT(*) FROM cell_mappings')).scalar()
        self.assertEqual(0, count)


class SQLiteDatabaseFixtureTest(_DatabaseFixtureTests, base.SQLiteMixin,
                                base.DatabaseTestCase):
    pass


class MySQLDatabaseFixtureTest(_DatabaseFixtureTests, base.MySQLMixin,
                               base.DatabaseTestCase):
    pass


class PostgreSQLDatabaseFixtureTest(_DatabaseFixtureTests,
                                    base.PostgreSQLMixin,
                                    base.DatabaseTestCase):
    pass
