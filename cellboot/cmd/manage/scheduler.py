"""``cellboot-manage scheduler``: the cell schedulers' host resources.

``migrate_to_cells`` moves the resource providers, inventories and
allocations that a deployment made before the cell schedulers keeps in
its API database into the database of each provider's cell (the work is
``cellboot.scheduler.migrate``'s); the handler here prints and chooses the
exit code.
"""

import sys

from cellboot.cmd.manage import purge
from cellboot.console import output
from cellboot.console import parsing
from cellboot import masking
from cellboot.scheduler import migrate

MIGRATE_HELP = (
    'Move the resource providers of the compute hosts, their inventories '
    'and the allocations of their servers from the API database, where '
    'deployments made before the cell schedulers keep them, into the '
    'database of each provider\'s cell, where the cell schedulers read '
    'them. Run it once after `cellboot-manage db sync` has upgraded the '
    'cell databases, with cellboot-scheduler, the super conductors and '
    'the API stopped (each runs a scheduler; an all-in-one process runs '
    'them all); the compute hosts may keep running. Prints a line per '
    'cell (and a progress line on stderr per batch of a cell with more '
    'than one batch, or with --verbose), then a summary. Safe to run '
    'again and to interrupt: a provider leaves the API database only '
    'once its copy is committed in its cell, and nothing is copied '
    'twice. A provider the cell has '
    'already (its host reported to a new scheduler) keeps its row and '
    'inventories and gets the allocations it lacks. Left in the API '
    'database, each reported: providers whose name another provider has '
    'in the cell or that changed while they were moved (exit 1), those '
    'of a cell whose database fails (exit 1; the other cells are moved), '
    'and providers without a mapped cell (a WARNING; no cell database '
    'takes them).')


def _label(cell):
    return f'cell {cell.name} ({cell.uuid})'


def _cell_line(move):
    if not move.total:
        return f'{_label(move.cell)}: nothing to move'
    present = (f' ({move.present} already in the cell)' if move.present
               else '')
    return (f'{_label(move.cell)}: moved {move.providers} of {move.total} '
            f'resource provider(s){present}, {move.inventories} '
            f'inventories, {move.allocations} allocation(s)')


def _report_cell(move):
    output.say(_cell_line(move))
    for uuid, reason in move.skipped.items():
        output.error(f'resource provider {uuid} of {_label(move.cell)} was '
                     f'left in the API database: {reason}')
    if move.failure is not None:
        left = move.total - move.providers - len(move.skipped)
        url = masking.mask_url(move.cell.database_connection)
        output.error(f'{_label(move.cell)}, database {url}: '
                     f'{move.failure}; {left} of its resource '
                     f'provider(s) were left in the API database; run the '
                     f'command again once this is fixed')


def _final_line(summary):
    moved = sum(move.providers for move in summary.cells)
    allocations = sum(move.allocations for move in summary.cells)
    left = (f'{summary.left} host resource provider(s) left in the API '
            f'database' if summary.left else 'none left in the API database')
    return (f'Moved {moved} resource provider(s) and {allocations} '
            f'allocation(s) into {len(summary.cells)} cell(s); {left}')


def migrate_to_cells(context, args):
    def progress(move):
        if move.done:
            _report_cell(move)
        elif move.total > args.batch or args.verbose:
            print(f'{_label(move.cell)}: {move.providers} of {move.total} '
                  f'resource provider(s) moved so far', file=sys.stderr,
                  flush=True)

    summary = migrate.migrate_to_cells(context, progress=progress,
                                       batch=args.batch)
    for uuid, reason in summary.unplaced.items():
        output.warning(f'resource provider {uuid} was left in the API '
                       f'database: {reason}, so no cell database takes it '
                       f'(the cell schedulers never read it there)')
    output.say(_final_line(summary))
    return parsing.EXIT_OK if summary.ok else parsing.EXIT_ERROR


def register(groups):
    commands = parsing.add_group(
        groups, 'scheduler', "manage the cell schedulers' host resources",
        'Commands for the resource providers, inventories and allocations '
        'that each cell\'s schedulers keep in the cell database.')
    command = parsing.add_command(
        commands, 'migrate_to_cells', migrate_to_cells,
        'move host resources from the API database to the cells',
        MIGRATE_HELP,
        exit_codes=((0, 'every provider that has a mapped cell was moved '
                        '(providers without one may be left: see the '
                        'WARNING lines)'),
                    (1, 'a cell database could not be reached, or a '
                        'provider\'s name is taken in its cell or it '
                        'changed while it was moved: those providers were '
                        'left in the API database, the others were moved; '
                        'or the API database failed')))
    command.add_argument(
        '--batch', type=purge.parse_batch_size, default=migrate.BATCH,
        metavar='N',
        help=f'resource providers per transaction (default '
             f'{migrate.BATCH})')
