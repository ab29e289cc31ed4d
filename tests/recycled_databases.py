"""Migrated server databases handed to the next test, emptied.

A test deployment (``tests.functional.cluster``) migrates each of its
databases (the API's, the flows', every cell's) from nothing: cellboot's
alembic revisions, then TaskFlow's. On MariaDB and PostgreSQL those
migrations, with creating and dropping the databases, took some 4 s of
each such test. A database whose fixture names what it becomes (its
``reuse`` key: 'api', 'flows', 'cell') is instead emptied at
clean-up and kept, in this process, for the next fixture of the same
key, which migrates it again: at head already, nothing to do.

Emptying keeps the version tables (their rows say the schema is at
head) and empties every other table, identity counters included, so
the next test starts where a new database would. A database is dropped,
as any other, when it cannot be emptied within ``LOCK_TIMEOUT`` seconds
(a connection of the test still holds a lock) or when its tables are not
those the first database of its key had: a test that changed the schema
never passes it on. Those kept are dropped when the process exits.
"""

import atexit
import threading

import sqlalchemy as sa

from cellboot.db.api import models as api_models
from cellboot.db.cell import models as cell_models

# Tables that say which migrations ran: kept, rows and all.
VERSION_TABLES = frozenset({'alembic_version', api_models.VERSION_TABLE,
                            cell_models.VERSION_TABLE})

# Seconds emptying may wait for a lock before the database is dropped.
LOCK_TIMEOUT = 5

_LOCK = threading.Lock()
# {(backend, key): [database name]}: emptied, ready to hand out.
_IDLE = {}
# {(backend, key): (table names, version rows)} of the first one emptied.
_SHAPES = {}
# {backend: provisioning backend} of the databases to drop at exit.
_BACKENDS = {}


def take(backend, key):
    """The name of an emptied database of ``key``, or None."""
    with _LOCK:
        idle = _IDLE.get((backend, key))
        return idle.pop() if idle else None


def give_back(be, backend, key, name, url):
    """Empty database ``name`` and keep it; False when it must be dropped."""
    try:
        shape = _empty(backend, url)
    except sa.exc.SQLAlchemyError:
        return False
    if not shape[1]:
        return False        # never migrated: nothing worth keeping
    with _LOCK:
        if _SHAPES.setdefault((backend, key), shape) != shape:
            return False
        if not _BACKENDS:
            atexit.register(_drop_idle)
        _BACKENDS[backend] = be
        _IDLE.setdefault((backend, key), []).append(name)
    return True


def _empty(backend, url):
    """Empty every table but the version tables; the database's shape."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as conn:
            tables = sorted(sa.inspect(conn).get_table_names())
            versions = tuple(
                (table, tuple(sorted(conn.execute(sa.text(
                    f'SELECT version_num FROM {table}')).scalars())))
                for table in tables if table in VERSION_TABLES)
            emptied = [t for t in tables if t not in VERSION_TABLES]
            if backend == 'mysql':
                conn.exec_driver_sql(
                    f'SET SESSION lock_wait_timeout = {LOCK_TIMEOUT}')
                conn.exec_driver_sql('SET FOREIGN_KEY_CHECKS = 0')
                for table in emptied:
                    conn.exec_driver_sql(f'TRUNCATE TABLE `{table}`')
                conn.exec_driver_sql('SET FOREIGN_KEY_CHECKS = 1')
            elif emptied:
                conn.exec_driver_sql(f"SET LOCAL lock_timeout = "
                                     f"'{LOCK_TIMEOUT}s'")
                conn.exec_driver_sql(
                    'TRUNCATE TABLE ' + ', '.join(f'"{t}"' for t in emptied)
                    + ' RESTART IDENTITY CASCADE')
        return tuple(tables), versions
    finally:
        engine.dispose()


def _drop_idle():
    with _LOCK:
        idle = [(backend, name) for (backend, _key), names in _IDLE.items()
                for name in names]
        _IDLE.clear()
    for backend, name in idle:
        try:
            _BACKENDS[backend].drop_named_database(name, conditional=True)
        except sa.exc.SQLAlchemyError:
            pass    # the server is gone: nothing left to clean
