"""``cellboot-manage db purge --before DATE``: forget what is over.

Deleted servers, their history and finished flows are kept until an
operator purges them; this is the purge, safe to run while every
service runs:

1. in every cell database, cell0 first: the instances soft-deleted
   before DATE, with their faults, actions and action events, and, in
   the API database, their instance mappings (queued for delete), request
   specs and server group memberships. The API rows go first: a purge
   that stops between the two finds the cell rows again next time. An
   instance whose mapping still points at it without being queued for
   delete is kept: its delete has not finished, and the delete (retried,
   or finished by a sweeper) needs it;
2. in the same cell database, the TaskFlow rows (flow, atoms, logbook)
   of the reschedule flows that ended, SUCCESS or REVERTED, before DATE;
3. in the API database, request specs older than DATE whose mapping is
   gone (servers deleted while they were being built);
4. in the flow database, the boot flows that ended before DATE.

Nothing else is touched: no live instance, no server being built, no
flow that has not ended. Work goes in batches of ``--batch-size`` rows,
one short transaction each, so the services' own transactions never
wait long. A database that fails (a cell that does not answer) is
reported in one ERROR line and the others are still purged; the exit
code then says so. ``--dry-run`` counts, deletes nothing.
"""

import argparse
import collections
import datetime
import sys
import time

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa
from taskflow import exceptions as tf_exc

from cellboot.conf import CONF
from cellboot.console import output
from cellboot.console import parsing
from cellboot import context as cb_context
from cellboot.flowrun import backend as flow_db
from cellboot.db import purge as purge_db
from cellboot import exception
from cellboot.flowrun import tables as flow_tables
from cellboot.objects import cell_mapping as cell_mapping_obj

BATCH_SIZE = 1000
MAX_BATCH_SIZE = 100000

# Seconds between two progress lines of a long run (always, with
# --verbose).
PROGRESS_SECONDS = 10

API_DATABASE = 'API database'
FLOW_DATABASE = 'flow database'

# What a database that fails to be purged raises.
_DATABASE_ERRORS = (db_exc.DBError, sa.exc.SQLAlchemyError,
                    tf_exc.StorageFailure, exception.CellbootException)


def parse_before(text):
    """``--before``: an ISO 8601 date or time, naive UTC; not future.

    A time without a zone is UTC, as every time cellboot stores.
    """
    try:
        moment = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f'{text!r} is not a date: use ISO 8601, e.g. 2026-01-31 or '
            f'2026-01-31T12:00:00Z')
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc).replace(
            tzinfo=None)
    if moment > timeutils.utcnow():
        raise argparse.ArgumentTypeError(
            f'{text} is in the future; purge what was deleted or ended '
            f'before a past moment')
    return moment


def parse_batch_size(text):
    try:
        size = int(text)
    except ValueError:
        size = 0
    if not 1 <= size <= MAX_BATCH_SIZE:
        raise argparse.ArgumentTypeError(
            f'{text!r} is not a whole number from 1 to {MAX_BATCH_SIZE}')
    return size


class Purge:
    """One run: its options, what it purged where, what it kept."""

    def __init__(self, context, before, batch_size, dry_run, verbose):
        self.context = context
        self.before = before
        self.batch_size = batch_size
        self.dry_run = dry_run
        self.verbose = verbose
        # {database: {table: rows}}, in the order databases were done.
        self.rows = collections.OrderedDict()
        # {database: instances kept because their delete is unfinished}
        self.kept = collections.Counter()
        self.failed = []
        self._last_progress = time.monotonic()

    def count(self, database, counts):
        tables = self.rows.setdefault(database, collections.OrderedDict())
        for table, rows in counts.items():
            tables[table] = tables.get(table, 0) + rows

    def progress(self, database, what, done):
        """A progress line on stderr: each batch with --verbose, else
        every PROGRESS_SECONDS."""
        now = time.monotonic()
        if self.verbose or now - self._last_progress >= PROGRESS_SECONDS:
            self._last_progress = now
            verb = 'counted' if self.dry_run else 'purged'
            print(f'{database}: {done} {what} {verb} so far',
                  file=sys.stderr, flush=True)

    def attempt(self, database, fn, *args):
        """Run one database's part; a failure is reported, not raised."""
        try:
            fn(*args)
        except _DATABASE_ERRORS as exc:
            self.failed.append(database)
            output.error(f'{database}: {output.describe(exc)}; the other '
                         f'databases are purged all the same')

    # -- the parts ---------------------------------------------------------

    def cell(self, cell, label):
        with cb_context.target_cell(self.context, cell) as cctxt:
            self._instances(cctxt, cell, label)
        self.flows(label, cell.database_connection)

    def _instances(self, cctxt, cell, label):
        after, done = 0, 0
        while True:
            batch = purge_db.deleted_instances(cctxt, self.before, after,
                                               self.batch_size)
            if not batch:
                return
            after = batch[-1][0]
            queued, unmapped, purged = self._sort(
                cell, label, [uuid for _id, uuid in batch])
            if self.dry_run:
                self.count(API_DATABASE, purge_db.count_api_rows(
                    self.context, queued, unmapped, cell.id))
                self.count(label, purge_db.count_instances(
                    cctxt, purged, self.before))
            else:
                self.count(API_DATABASE, purge_db.delete_api_rows(
                    self.context, queued, unmapped, cell.id))
                self.count(label, purge_db.delete_instances(
                    cctxt, purged, self.before))
            done += len(purged)
            self.progress(label, 'deleted instances', done)

    def _sort(self, cell, label, uuids):
        """``(queued, unmapped, purged)`` of a batch of deleted instances.

        queued: mapped to this cell and queued for delete; unmapped: no
        mapping left; purged: those two, and leftovers whose mapping
        points at another cell. Kept (not in any): mapped here and not
        queued for delete, a delete that has not finished.
        """
        mappings = purge_db.mappings_of(self.context, uuids)
        queued, unmapped, purged = [], [], []
        for uuid in uuids:
            mapping = mappings.get(uuid)
            if mapping is None:
                unmapped.append(uuid)
            elif mapping[0] == cell.id and mapping[1]:
                queued.append(uuid)
            elif mapping[0] == cell.id:
                self.kept[label] += 1
                continue
            purged.append(uuid)
        return queued, unmapped, purged

    def flows(self, label, url):
        engine = flow_db.get_backend(url).engine
        if not flow_tables.has_flow_tables(engine):
            return  # TaskFlow's tables were never made: no flow ran here
        after, done = '', 0
        while True:
            flow_uuids = flow_tables.ended_flows(engine, self.before, after,
                                                 self.batch_size)
            if not flow_uuids:
                return
            after = flow_uuids[-1]
            if self.dry_run:
                self.count(label, flow_tables.count_flows(engine, flow_uuids))
            else:
                self.count(label, flow_tables.delete_flows(
                    engine, flow_uuids, self.before))
            done += len(flow_uuids)
            self.progress(label, 'ended flows', done)

    def orphan_specs(self):
        after, done = 0, 0
        while True:
            spec_ids = purge_db.orphan_specs(self.context, self.before, after,
                                             self.batch_size)
            if not spec_ids:
                return
            after = spec_ids[-1]
            if self.dry_run:
                self.count(API_DATABASE, {'request_specs': len(spec_ids)})
            else:
                self.count(API_DATABASE,
                           purge_db.delete_specs(self.context, spec_ids))
            done += len(spec_ids)
            self.progress(API_DATABASE, 'orphaned request specs', done)

    def run(self, flows_only=False):
        """Purge every database; the exit code.

        ``flows_only``: only the ended flows, in every cell database and
        the flow database (``cellboot-manage flows purge``): the same
        batches, report and failure handling as the whole purge.
        """
        cells = [('cell0' if cell.is_cell0 else f'cell {cell.name}', cell)
                 for cell in cell_mapping_obj.CellMapping.get_all(
                     self.context)]
        if flows_only:
            # cell0 runs no conductor, hence no flow.
            cells = [(label, cell) for label, cell in cells
                     if not cell.is_cell0]
        flow_url = CONF.flow_persistence.connection
        # Reported in this order, whatever order their rows come in.
        for label in [label for label, _cell in cells] + (
                [] if flows_only else [API_DATABASE]) + (
                [FLOW_DATABASE] if flow_url else []):
            self.rows[label] = collections.OrderedDict()
        for label, cell in cells:
            if flows_only:
                self.attempt(label, self.flows, label,
                             cell.database_connection)
            else:
                self.attempt(label, self.cell, cell, label)
        if not flows_only:
            self.attempt(API_DATABASE, self.orphan_specs)
        if flow_url:
            self.attempt(FLOW_DATABASE, self.flows, FLOW_DATABASE, flow_url)
        self.report(purged='ended before' if flows_only
                    else 'deleted or ended before')
        return parsing.EXIT_ERROR if self.failed else parsing.EXIT_OK

    # -- what it says ------------------------------------------------------

    def report(self, purged='deleted or ended before'):
        verb = 'to purge' if self.dry_run else 'purged'
        if self.verbose:
            output.table(['Database', 'Table', f'Rows {verb}'], [
                [database, table, rows]
                for database, tables in self.rows.items()
                for table, rows in tables.items()])
        total = 0
        for database, tables in self.rows.items():
            if database in self.failed:
                continue
            rows = sum(tables.values())
            total += rows
            line = f'{database}: {rows} rows {verb}'
            if self.kept[database]:
                line += (f'; {self.kept[database]} deleted instance(s) '
                         f'kept: their delete has not finished (mapping '
                         f'not queued for delete)')
            output.say(line)
        what = 'Dry run: nothing deleted' if self.dry_run else 'Done'
        output.say(f'{what}: {total} rows {verb} ({purged} '
                   f'{self.before.isoformat()} UTC)')


def purge(context, args):
    return Purge(context, args.before, args.batch_size, args.dry_run,
                 args.verbose).run()


def purge_flows(context, args):
    """``flows purge``: only the flows part of ``db purge``."""
    return Purge(context, args.ended_before, args.batch_size, args.dry_run,
                 args.verbose).run(flows_only=True)


def add_batch_options(command):
    """``--dry-run`` and ``--batch-size``, as both purges take them."""
    command.add_argument(
        '--dry-run', action='store_true',
        help='count what would be purged, delete nothing')
    command.add_argument(
        '--batch-size', type=parse_batch_size, default=BATCH_SIZE,
        metavar='N',
        help=f'instances, flows or request specs per transaction (default '
             f'{BATCH_SIZE})')


def register(commands):
    """Add ``purge`` to the ``db`` group's commands."""
    command = parsing.add_command(
        commands, 'purge', purge,
        'delete soft-deleted servers and ended flows',
        'Delete, in every cell database (cell0 included), the servers '
        'deleted before DATE with their faults, actions and events, and '
        'their instance mappings, request specs and group memberships in '
        'the API database; request specs whose server was deleted while '
        'it was being built; and the ended flows (SUCCESS or REVERTED, '
        'with their atoms and logbooks) in the flow database and every '
        'cell database. Live servers, servers being built and unfinished '
        'flows are never touched, so it is safe while the services run. '
        'Works in batches of short transactions and prints one line per '
        'database (with --verbose, the rows of each table and a progress '
        'line per batch).',
        exit_codes=((1, 'a database could not be purged (the others '
                        'were)'),
                    (2, 'the command line is wrong, e.g. DATE is not a '
                        'date or is in the future')))
    command.add_argument(
        '--before', required=True, type=parse_before, metavar='DATE',
        help='purge what was deleted or ended before this moment: an ISO '
             '8601 date or time, UTC unless it names a zone '
             '(2026-01-31, 2026-01-31T12:00:00+01:00)')
    add_batch_options(command)
