"""``cellboot-manage db``: create, upgrade and purge every cellboot database.

``db sync`` migrates the API database first, because the cell mappings
that name the cell databases live there, then the flow database, then
every mapped cell database (cell0 included), each with its alembic tree
and TaskFlow's tables. Every step is idempotent: a database already at
the newest revision is left untouched, so running it twice changes
nothing. A flow or cell database that fails is reported and the others
are still synced.

A deployment made before the cell schedulers keeps its host resources in
the API database until ``cellboot-manage scheduler migrate_to_cells``
moves them into the cell databases (``cellboot.scheduler.migrate``): sync
says so after syncing, as long as some are left there, without changing
its exit code.
"""

import itertools

from oslo_db import exception as db_exc
import sqlalchemy as sa

from cellboot.cmd.manage import purge
from cellboot.conf import CONF
from cellboot.console import output
from cellboot.console import parsing
from cellboot import exception
from cellboot import masking
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.scheduler import migrate


def _migration():
    """``cellboot.db.migration``, imported on first use (alembic)."""
    from cellboot.db import migration
    return migration


def _schema():
    """``cellboot.flowrun.schema``, imported on first use.

    It imports TaskFlow, which would add half a second to every command,
    including those that never migrate anything.
    """
    from cellboot.flowrun import schema
    return schema


class Step:
    """One database of a sync or version run, and how it went."""

    def __init__(self, label, url, revision=None, error=None):
        self.label = label
        self.url = url
        self.revision = revision
        self.error = error

    def describe(self):
        where = f'{self.label} database {masking.mask_url(self.url)}'
        if self.error is not None:
            return f'{where}: {self.error}'
        return where


def sync_api_and_flow_databases():
    """Sync the API and flow databases; yield one Step each.

    An API database that fails raises: nothing after it can work.
    """
    api_url = CONF.api_database.connection
    _migration().db_sync('api', api_url)
    yield Step('API', api_url, _migration().db_version('api', api_url))
    flow_url = CONF.flow_persistence.connection
    yield _attempt(Step('flow', flow_url), _schema().sync_flow_database,
                   flow_url)


def sync_cell_databases(context):
    """Sync every mapped cell database; yield one Step per cell."""
    for cell in cell_mapping_obj.CellMapping.get_all(context):
        yield _sync_cell(_cell_label(cell), cell.database_connection)


def sync_local_cell_database():
    """Sync ``[database] connection`` only (a service host's own cell)."""
    url = CONF.database.connection
    if not url:
        raise exception.ConfigurationError(
            reason='--local_cell syncs [database] connection, which is not '
                   'set')
    return _sync_cell('local cell', url)


def _sync_cell(label, url):
    step = _attempt(Step(label, url), _schema().sync_cell_database, url)
    if step.error is None:
        step = _attempt(step, _migration().db_version, 'cell', url)
    return step


def _attempt(step, fn, *args):
    """Run ``fn``; its result becomes the revision, its error the error."""
    try:
        result = fn(*args)
    except exception.CellbootException as exc:
        step.error = str(exc)
    else:
        if isinstance(result, str):
            step.revision = result
    return step


def _cell_label(cell):
    return f'cell {cell.name} ({cell.uuid})'


def report_sync(steps):
    """Print each sync step as it completes; the exit code of the run."""
    return _report_all(steps, _synced_line)


def _report_all(steps, line):
    """Print each step as it completes; the exit code of the whole run.

    ``line(step)`` is what a step that went well prints on stdout.
    """
    ok = True
    for step in steps:
        if step.error is not None:
            output.error(step.describe())
            ok = False
        else:
            output.say(line(step))
    return parsing.EXIT_OK if ok else parsing.EXIT_ERROR


def _synced_line(step):
    revision = f' (revision {step.revision})' if step.revision else ''
    return f'Synced the {step.describe()}{revision}'


def _version_line(step):
    return f'{step.describe()}: {step.revision or "none, not synced yet"}'


def sync(context, args):
    if args.local_cell:
        steps = [sync_local_cell_database()]
    else:
        # Lazy: the cell mappings are read once the API database is synced.
        steps = itertools.chain(sync_api_and_flow_databases(),
                                sync_cell_databases(context))
    code = report_sync(steps)
    if not args.local_cell:
        _notice_pending_providers(context)
    return code


def _notice_pending_providers(context):
    """Say that host resources are left in the API database, if any are.

    A notice, not an error: sync did its work, and the move needs the
    schedulers stopped, which is the operator's to arrange.
    """
    try:
        left = migrate.pending(context)
    except (db_exc.DBError, sa.exc.SQLAlchemyError) as exc:
        output.warning(f'could not count the host resource providers left '
                       f'in the API database: {output.describe(exc)}')
        return
    if left == 1:
        what, where = 'provider is', "it to its cell's database"
    else:
        what, where = 'providers are', "them to their cells' databases"
    if left:
        output.say(f'{left} compute host resource {what} still in the API '
                   f'database: run "cellboot-manage scheduler '
                   f'migrate_to_cells" (with the schedulers stopped) to '
                   f'move {where}.')


def version(context, args):
    api_url = CONF.api_database.connection
    steps = [_attempt(Step('API', api_url), _migration().db_version, 'api',
                      api_url)]
    for cell in cell_mapping_obj.CellMapping.get_all(context):
        url = cell.database_connection
        steps.append(_attempt(Step(_cell_label(cell), url),
                              _migration().db_version, 'cell', url))
    return _report_all(steps, _version_line)


def register(groups):
    commands = parsing.add_group(
        groups, 'db', 'create, upgrade and purge the databases',
        'Create or upgrade the tables of the API database, the flow '
        'database and every cell database, and purge the rows of deleted '
        'servers and ended flows.')
    command = parsing.add_command(
        commands, 'sync', sync, 'create or upgrade every database',
        'Upgrade the API database ([api_database] connection), then the '
        'flow database ([flow_persistence] connection), then the database '
        'of every mapped cell, cell0 included (alembic tree and TaskFlow\'s '
        'tables), printing one line per database. Databases already at the '
        'newest revision are left untouched, so running it again changes '
        'nothing. A server database must exist already; SQLite files are '
        'created. While compute host resource providers are left in the '
        'API database (a deployment made before the cell schedulers), a '
        'last line says so and how to move them (`cellboot-manage '
        'scheduler migrate_to_cells`).',
        exit_codes=((1, 'a database could not be synced (the others still '
                        'were, unless it was the API database)'),))
    command.add_argument(
        '--local_cell', action='store_true',
        help='sync only the cell database of this host ([database] '
             'connection), not the API, flow or mapped cell databases')
    parsing.add_command(
        commands, 'version', version, 'print the schema revisions',
        'Print the alembic revision of the API database and of every mapped '
        'cell database ("none" when not synced yet).',
        exit_codes=((1, 'a database could not be read'),))
    purge.register(commands)
