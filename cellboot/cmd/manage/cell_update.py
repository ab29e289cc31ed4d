"""``cellboot-manage cell_v2 update_cell``: change a cell's mapping.

The command of the ``cell_v2`` group with the most options (name, zone,
buses, database) and the most ways to refuse, kept apart from the group
module; ``cell_v2.register`` calls ``register`` here, in its place among
the group's commands. The checks and the write are
``cellboot.cells.mappings.update_cell``; the handler prints and chooses
the exit code.
"""

from cellboot.cells import mappings as cells
from cellboot.cmd.manage import cell_view
from cellboot.console import output
from cellboot.console import parsing
from cellboot import exception


def update_cell(context, args):
    changes = {}
    if args.zone is not None or args.no_zone:
        changes['zone'] = args.zone
    for option in ('name', 'transport_url', 'database_connection'):
        if getattr(args, option) is not None:
            changes[option] = getattr(args, option)
    if args.disable or args.enable:
        changes['disabled'] = args.disable
    if not changes:
        output.error('nothing to change: give --name, --zone, --no-zone, '
                     '--disable, --enable, --transport-url or '
                     '--database_connection')
        return parsing.EXIT_ERROR
    try:
        cell = cells.update_cell(
            context, args.cell_uuid,
            allow_shared_transport=args.allow_shared_transport, **changes)
    except (exception.CellMappingExists, exception.CellDatabaseInUse,
            exception.CellTransportShared) as exc:
        output.error(str(exc))
        return cell_view.EXIT_CELL_EXISTS
    except exception.Cell0Unchangeable as exc:
        output.error(str(exc))
        return cell_view.EXIT_CELL0_PROTECTED
    if args.verbose:
        cell_view.cell_table([cell], verbose=False, context=context)
    else:
        output.say(f'Updated cell {cell_view.label(cell)}')
    return parsing.EXIT_OK


def register(commands):
    """Add ``update_cell`` to ``commands``, the ``cell_v2`` group's."""
    command = parsing.add_command(
        commands, 'update_cell', update_cell, 'change a cell\'s mapping',
        'Change a cell\'s name, zone, transport URL or database URL, or '
        'disable it (the schedulers send it no new instance; those it '
        'holds keep running) and enable it again; only what is given '
        'changes. The same checks as create_cell run first '
        '(name, database and bus not another cell\'s, database answers, '
        'zone exists), and nothing is written if one fails. cell0 keeps its '
        'name and sits in no zone. Prints the cell (--verbose: the whole '
        'mapping).',
        exit_codes=(
            (1, 'no cell or zone has that uuid or name, nothing to change, '
                'or another error'),
            (cell_view.EXIT_CELL_EXISTS,
             'another cell has that name, database or bus (a shared bus '
             'needs --allow-shared-transport)'),
            (cell_view.EXIT_CELL0_PROTECTED,
             'the change would rename cell0, put it in a zone, or enable '
             'or disable it'),
        ))
    command.add_argument('--cell_uuid', '--cell-uuid', required=True,
                         metavar='UUID', help='the cell\'s uuid (or name)')
    command.add_argument('--name', help='the cell\'s new name')
    where = command.add_mutually_exclusive_group()
    where.add_argument('--zone', metavar='ZONE',
                       help='put the cell in this zone (uuid or name)')
    where.add_argument('--no-zone', action='store_true',
                       help='take the cell out of its zone, back to the '
                            'top level')
    state = command.add_mutually_exclusive_group()
    state.add_argument('--disable', action='store_true',
                       help='send the cell no new instance (the API '
                            'level\'s schedulers skip it at their next '
                            'read of the cells, [scheduler] '
                            'cell_check_interval)')
    state.add_argument('--enable', action='store_true',
                       help='take new instances in the cell again')
    command.add_argument(
        '--database_connection', '--database-connection', metavar='URL',
        help='the cell\'s new database URL (the database must answer)')
    command.add_argument(
        '--transport-url', '--transport_url', dest='transport_url',
        metavar='URL', help='the cell\'s new oslo.messaging URL, a bus of '
                            'its own')
    command.add_argument(
        '--allow-shared-transport', action='store_true',
        help='accept a transport URL that is the API\'s bus or another '
             'cell\'s (see create_cell --help for what that costs)')
