"""Server databases handed to the next test emptied, not dropped.

On MariaDB and PostgreSQL, creating a test's databases, making their
tables and dropping them afterwards cost more than most tests: some
0.3 s a database with the models' tables, and some 4 s for the five
databases of a test deployment (``tests.functional.cluster``), which
migrates each from nothing, cellboot's revisions then TaskFlow's. A
database fixture with a ``reuse`` key instead has its database emptied
at clean-up and kept, in this process, for the next fixture of the same
key:

* ``schema-api``, ``schema-cell``: the models' tables, made by the
  fixture; a database is kept only when its tables are exactly those;
* ``api``, ``flows``, ``cell``: what a caller migrates to head itself;
  the next one's migration finds it at head. A database is kept only
  when it was migrated and its tables and revisions are those of the
  first one of its key.

Emptying deletes every row but the version tables' (their rows say the
schema is at head) and restarts identities, so the next test starts
where a new database would; foreign keys are not checked meanwhile
(MySQL's ``foreign_key_checks``, PostgreSQL's replication role: the
``openstack_citest`` user is a superuser there). A database is dropped,
as any other, when it cannot be emptied within ``LOCK_TIMEOUT`` seconds
(a connection of the test still holds a lock) or is not of its key's
shape: a test that changed a schema never passes it on. Those kept are
dropped when the process exits.
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
# {(backend, key): (table names, version rows)} a database must have.
_SHAPES = {}
# {backend: provisioning backend} of the databases to drop at exit.
_BACKENDS = {}


def schema_key(schema):
    """The key of databases holding ``schema``'s model tables."""
    return f'schema-{schema}'


def take(backend, key):
    """The name of an emptied database of ``key``, or None."""
    with _LOCK:
        idle = _IDLE.get((backend, key))
        return idle.pop() if idle else None


def give_back(be, backend, key, name, url, metadata=None):
    """Empty database ``name`` and keep it; False when it must be dropped.

    ``metadata``: the models whose tables, and no others, it must hold
    (None: a migrated database, shaped like the first of its key).
    """
    try:
        shape = _empty(backend, url)
    except sa.exc.SQLAlchemyError:
        return False
    with _LOCK:
        if metadata is not None:
            wanted = (tuple(sorted(metadata.tables)), ())
        elif not shape[1]:
            return False        # never migrated: nothing worth keeping
        else:
            wanted = _SHAPES.setdefault((backend, key), shape)
        if shape != wanted:
            return False
        if not _BACKENDS:
            atexit.register(_drop_idle)
        _BACKENDS[backend] = be
        _IDLE.setdefault((backend, key), []).append(name)
    return True


def _empty(backend, url):
    """Delete every row but the version tables'; the database's shape."""
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
                _empty_mysql(conn, emptied)
            else:
                _empty_postgresql(conn, emptied)
        return tuple(tables), versions
    finally:
        engine.dispose()


def _empty_mysql(conn, tables):
    conn.exec_driver_sql(f'SET SESSION innodb_lock_wait_timeout = '
                         f'{LOCK_TIMEOUT}')
    conn.exec_driver_sql(f'SET SESSION lock_wait_timeout = {LOCK_TIMEOUT}')
    conn.exec_driver_sql('SET SESSION foreign_key_checks = 0')
    for table in tables:
        conn.exec_driver_sql(f'DELETE FROM `{table}`')
    counted = conn.exec_driver_sql(
        'SELECT table_name FROM information_schema.tables WHERE '
        'table_schema = DATABASE() AND auto_increment > 1').scalars().all()
    for table in counted:
        conn.exec_driver_sql(f'ALTER TABLE `{table}` AUTO_INCREMENT = 1')
    conn.exec_driver_sql('SET SESSION foreign_key_checks = 1')


def _empty_postgresql(conn, tables):
    conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}s'")
    conn.exec_driver_sql('SET LOCAL session_replication_role = replica')
    for table in tables:
        conn.exec_driver_sql(f'DELETE FROM "{table}"')
    conn.exec_driver_sql(
        "SELECT setval(c.oid, 1, false) FROM pg_class c JOIN pg_namespace "
        "n ON n.oid = c.relnamespace WHERE c.relkind = 'S' AND "
        "n.nspname = current_schema()").all()


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
