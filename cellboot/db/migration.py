"""Schema migrations of cellboot's databases (``cellboot-manage db sync``).

A cellboot database holds up to three schemas, each migrated on its own:

* the API tree (``cellboot/db/api/migrations``), in the API database;
* the cell tree (``cellboot/db/cell/migrations``), in every cell database,
  cell0 included;
* TaskFlow's persistence tables, migrated by TaskFlow itself, in the flow
  database and, for the cells' reschedule flows, in every cell database
  (``cellboot.flowrun.schema``, which builds on this module).

TaskFlow's alembic keeps its revision in the default ``alembic_version``
table, so each of our trees records its revision in a version table of its
own (``models.VERSION_TABLE``) and the three can share one database.

Every entry point checks the URL and connects, with a short timeout,
before it writes anything: a typo or a dead server fails in seconds with
one line an operator can act on, and leaves nothing half-written.

Alembic is configured in code, there is no ``alembic.ini``. To draft a new
revision of a tree from the models (then edit it by hand)::

    engine = sqlalchemy.create_engine(url_of_a_database_at_head)
    with engine.connect() as conn:
        alembic.command.revision(migration.alembic_config('cell', conn),
                                 message='add foo', autogenerate=True)
"""

import contextlib
import os

from alembic import command
from alembic import config as alembic_config_module
from alembic import util as alembic_util
from alembic.runtime import migration as alembic_runtime
from alembic.script import ScriptDirectory
from alembic.script import revision as alembic_revision
from oslo_log import log as logging
import sqlalchemy as sa
from sqlalchemy import pool

from cellboot.db.api import models as api_models
from cellboot.db.cell import models as cell_models
from cellboot.db import facade
from cellboot.db import tls
from cellboot import exception
from cellboot import masking

LOG = logging.getLogger(__name__)

# Each tree lives next to the models it creates; the models module also
# names the tree's version table.
TREES = {
    'api': api_models,
    'cell': cell_models,
}


def alembic_config(database, connection=None):
    """The alembic configuration of one tree ('api' or 'cell').

    ``connection`` is an open SQLAlchemy connection the tree's ``env.py``
    runs on (see ``run_environment``).
    """
    models = _models(database)
    config = alembic_config_module.Config()
    config.set_main_option(
        'script_location',
        os.path.join(os.path.dirname(models.__file__), 'migrations'))
    config.attributes['connection'] = connection
    return config


def run_environment(context, metadata, version_table):
    """The body of each tree's ``env.py``: migrate on the given connection.

    SQLite cannot ALTER most things, so its migrations run in alembic's
    batch mode (copy and move tables), which later revisions rely on.
    """
    connection = context.config.attributes.get('connection')
    if connection is None:
        raise exception.ConfigurationError(
            reason='cellboot migrations run through cellboot.db.migration '
                   '(`cellboot-manage db sync`), not the alembic command')
    context.configure(
        connection=connection,
        target_metadata=metadata,
        version_table=version_table,
        render_as_batch=connection.dialect.name == 'sqlite',
        compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


def db_sync(database, connection, version=None):
    """Upgrade the ``database`` tree ('api' or 'cell') at a URL.

    Upgrades to ``version`` (a revision id) or to the newest revision;
    a database already there is left untouched. Only our tree: a cell
    database also needs TaskFlow's tables, see ``sync_cell_database``.
    """
    models = _models(database)
    config = alembic_config(database)
    target = _target_revision(config, database, version)
    with checked_engine(connection) as engine:
        masked = masking.mask_url(connection)
        try:
            with engine.begin() as conn:
                current = _current_revision(conn, models.VERSION_TABLE)
                if current == target:
                    LOG.info('The %(db)s database %(url)s is already at '
                             'revision %(rev)s.',
                             {'db': database, 'url': masked, 'rev': current})
                    return
                LOG.info('Upgrading the %(db)s database %(url)s from '
                         '%(from)s to %(to)s.',
                         {'db': database, 'url': masked,
                          'from': current or 'an empty schema',
                          'to': target})
                config.attributes['connection'] = conn
                command.upgrade(config, target)
        except (sa.exc.SQLAlchemyError, alembic_util.CommandError) as exc:
            raise exception.DatabaseMigrationFailed(
                database=database, url=masked, reason=one_line(exc))


def db_version(database, connection):
    """The revision of the ``database`` tree at a URL, None if not synced."""
    models = _models(database)
    with checked_engine(connection) as engine, engine.connect() as conn:
        return _current_revision(conn, models.VERSION_TABLE)


def _models(database):
    try:
        return TREES[database]
    except KeyError:
        raise exception.InvalidDatabaseKind(
            database=database, expected=', '.join(sorted(TREES)))


def _target_revision(config, database, version):
    """The revision id ``version`` names (the newest when None)."""
    script = ScriptDirectory.from_config(config)
    try:
        found = script.get_revision(version or 'head')
    except (alembic_util.CommandError,
            alembic_revision.RevisionError) as exc:
        raise exception.InvalidMigrationVersion(
            version=version, database=database, reason=one_line(exc))
    if found is None:
        raise exception.InvalidMigrationVersion(
            version=version, database=database, reason='no such revision')
    return found.revision


def _current_revision(conn, version_table):
    context = alembic_runtime.MigrationContext.configure(
        conn, opts={'version_table': version_table})
    return context.get_current_revision()


@contextlib.contextmanager
def checked_engine(connection):
    """An engine on ``connection``, once a probe has connected.

    Raises InvalidDatabaseURL or DatabaseConnectionError otherwise. The
    engine keeps no pool, so nothing stays connected once we are done
    (a test can drop the database at once).
    """
    url = facade.parse_url(connection)
    masked = masking.mask_url(connection)
    if url.get_backend_name() == 'sqlite':
        _make_sqlite_directory(url, masked)
    _probe(url, masked)
    engine = _create_engine(url, masked, _connect_args(url, probe=False))
    try:
        yield engine
    finally:
        engine.dispose()


def probe(connection):
    """Connect once to ``connection``, every wait bounded; or raise
    DatabaseConnectionError with the reason (password masked).

    What the API's ``/healthcheck`` asks of its database: a fresh
    connection, not one of the pool (which would say only that the
    database answered once), and none of oslo.db's retries at start-up.
    """
    _probe(facade.parse_url(connection), masking.mask_url(connection))


def _probe(url, masked):
    """Connect once, with every wait bounded, or raise the reason."""
    engine = _create_engine(url, masked, _connect_args(url, probe=True))
    try:
        with engine.connect():
            pass
    except sa.exc.DBAPIError as exc:
        raise exception.DatabaseConnectionError(
            url=masked, reason=one_line(exc))
    finally:
        engine.dispose()


def _connect_args(url, probe):
    """DB-API connect() arguments that bound the waits on a server.

    The probe also bounds its reads (the server's greeting); migrations
    run without a read timeout, as a DDL on a big table can take long.
    """
    return facade.timeout_args(
        url, facade.CONNECT_TIMEOUT_SECONDS if probe else None)


def _create_engine(url, masked, connect_args):
    try:
        # The URL's TLS options mean what they mean to the services.
        return sa.create_engine(url, poolclass=pool.NullPool,
                                plugins=[tls.PLUGIN],
                                connect_args=connect_args)
    except ImportError as exc:
        raise exception.InvalidDatabaseURL(
            url=masked,
            reason=f'its driver is not installed ({exc}); install it or '
                   f'name an installed driver in the URL, e.g. '
                   f'mysql+pymysql:// or postgresql+psycopg2://')


def _make_sqlite_directory(url, masked):
    """Create the directory of an SQLite file, as SQLite will not."""
    path = url.database
    if not path or path == ':memory:' or path.startswith('file:'):
        return
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise exception.DatabaseConnectionError(
            url=masked,
            reason=f'cannot create directory {directory}: {exc.strerror}')


def one_line(exc):
    """The first line of what the driver (or alembic) said."""
    cause = getattr(exc, 'orig', None) or exc
    lines = str(cause).strip().splitlines()
    return lines[0] if lines else type(cause).__name__
