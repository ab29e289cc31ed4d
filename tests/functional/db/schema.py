"""Looking at a database's schema, for the migration tests."""

from alembic import autogenerate
from alembic.runtime import migration as alembic_runtime
import sqlalchemy as sa
from sqlalchemy import pool

# The newest revision of each of our trees; a new revision updates these.
API_HEAD = 'b7d4f0a2c6e8'
CELL_HEAD = 'f3b8d1c2a7e6'


def table_names(url):
    engine = sa.create_engine(url, poolclass=pool.NullPool)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def schema_snapshot(url):
    """Tables with their columns, indexes and unique constraints."""
    engine = sa.create_engine(url, poolclass=pool.NullPool)
    try:
        inspector = sa.inspect(engine)
        return {
            table: (
                [c['name'] for c in inspector.get_columns(table)],
                sorted(i['name'] for i in inspector.get_indexes(table)),
                sorted(str(u['name'])
                       for u in inspector.get_unique_constraints(table)),
            )
            for table in inspector.get_table_names()
        }
    finally:
        engine.dispose()


def schema_differences(url, metadata):
    """What alembic's autogenerate would change to make ``url`` match.

    Tables that are not in ``metadata`` (version tables, TaskFlow's, the
    other tree's) are not ours to compare.
    """
    names = set(metadata.tables)

    def include(obj, name, type_, reflected, compare_to):
        table = obj if type_ == 'table' else getattr(obj, 'table', None)
        return table is None or table.name in names

    engine = sa.create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            context = alembic_runtime.MigrationContext.configure(
                conn, opts={'compare_type': True,
                            'include_object': include})
            return autogenerate.compare_metadata(context, metadata)
    finally:
        engine.dispose()


def recorded_revision(url, version_table='alembic_version'):
    """The revision an alembic version table holds, None if none."""
    engine = sa.create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            context = alembic_runtime.MigrationContext.configure(
                conn, opts={'version_table': version_table})
            return context.get_current_revision()
    finally:
        engine.dispose()
