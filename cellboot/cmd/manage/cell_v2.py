"""``cellboot-manage cell_v2``: map cells, hosts and check instances.

The handlers here print and choose exit codes; the work is done by
``cells`` (mappings) and ``discovery`` (host mappings). Exit codes follow
nova-manage where nova-manage has the same command. ``update_cell`` has
a module of its own (``cell_update``), registered here in its place;
what the commands print of a cell and their shared exit codes are in
``cell_view``.
"""

from cellboot.cells import discovery
from cellboot.cells import mappings as cells
from cellboot.cmd.manage import cell_update
from cellboot.cmd.manage import cell_view
from cellboot.cmd.manage import db
from cellboot.conf import CONF
from cellboot.console import output
from cellboot.console import parsing
from cellboot import exception
from cellboot import masking

VERIFY_EXIT_CODES = {
    cells.MAPPED: 0,
    cells.NOT_MAPPED: 1,
    cells.NO_CELL: 2,
    cells.DELETED: 3,
    cells.ARCHIVED: 4,
}

FIRST_CELL_NAME = 'cell1'


def _required(value, option, config):
    if not value:
        raise exception.ConfigurationError(
            reason=f'give {option} or set {config} in the configuration '
                   f'file')
    return value


def _say_mapped_cell0(cell0, created, requested_url=None):
    url = masking.mask_url(cell0.database_connection)
    if created:
        output.say(f'Mapped cell0 to {url}')
        return
    output.say(f'cell0 is already mapped to {url}')
    if requested_url and requested_url != cell0.database_connection:
        output.warning('cell0 was left as it is; --database_connection '
                       'only applies when cell0 is mapped the first time')


def map_cell0(context, args):
    cell0, created = cells.map_cell0(context, args.database_connection)
    _say_mapped_cell0(cell0, created, args.database_connection)
    return parsing.EXIT_OK


def _new_cell_urls(database_connection, transport_url, allow_shared):
    """The URLs of a new cell: the given ones or the configured ones.

    The database defaults to ``[database] connection``. The transport
    has no default: ``[DEFAULT] transport_url`` is the API's bus, which
    a cell may use only when the operator says so
    (``--allow-shared-transport``, which then makes it the default).
    """
    url = _required(database_connection or CONF.database.connection,
                    '--database_connection', '[database] connection')
    if transport_url:
        return url, transport_url
    if not allow_shared:
        raise exception.ConfigurationError(
            reason='give --transport-url, the new cell\'s own bus (e.g. '
                   'rabbit://user:password@host:5672/cell1, a vhost of its '
                   'own); [DEFAULT] transport_url is the API\'s bus, which '
                   'a cell uses only with --allow-shared-transport')
    return url, _required(cells.default_transport_url(), '--transport-url',
                          '[DEFAULT] transport_url')


def create_cell(context, args):
    url, transport_url = _new_cell_urls(args.database_connection,
                                        args.transport_url,
                                        args.allow_shared_transport)
    try:
        cell = cells.create_cell(
            context, args.name, url, transport_url, disabled=args.disabled,
            allow_shared_transport=args.allow_shared_transport,
            zone=args.zone)
    except (exception.CellMappingExists, exception.CellDatabaseInUse,
            exception.CellTransportShared) as exc:
        output.error(str(exc))
        return cell_view.EXIT_CELL_EXISTS
    if args.verbose:
        cell_view.cell_table([cell], verbose=False, context=context)
    else:
        output.say(cell.uuid)
    return parsing.EXIT_OK


def list_cells(context, args):
    cell_view.cell_table(cells.CellMapping.get_all(context), args.verbose,
                         context)
    return parsing.EXIT_OK


def delete_cell(context, args):
    try:
        cell, hosts, instances = cells.delete_cell(context, args.cell_uuid,
                                                   force=args.force)
    except exception.CellHasHostMappings as exc:
        output.error(str(exc))
        return cell_view.EXIT_HOSTS_REMAIN
    except exception.CellHasInstanceMappings as exc:
        output.error(str(exc))
        return cell_view.EXIT_INSTANCES_REMAIN
    except exception.Cell0Protected as exc:
        output.error(str(exc))
        return cell_view.EXIT_CELL0_PROTECTED
    removed = ''
    if hosts or instances:
        removed = (f' with {hosts} host mapping(s) and {instances} instance '
                   f'mapping(s)')
    output.say(f'Deleted cell {cell_view.label(cell)}{removed}')
    return parsing.EXIT_OK


def _report_discovery(reports, verbose):
    """Print what discovery did; the exit code (1 if a cell had trouble)."""
    ok = True
    for report in reports:
        label = cell_view.label(report.cell)
        if report.failure is not None:
            output.error(f'cell {label} was skipped: {report.failure}')
            ok = False
            continue
        for host in report.mapped:
            output.say(f'Mapped host {host} to cell {label}')
        for host, other in report.conflicts.items():
            output.error(f'host {host} of cell {label} is already mapped to '
                         f'cell {cell_view.label(other)}; its compute nodes '
                         f'were left unmapped')
            ok = False
        if verbose and not report.mapped and report.ok:
            output.say(f'Cell {label} has no new hosts')
    total = sum(len(report.mapped) for report in reports)
    output.say(f'Discovered {total} new host(s) in {len(reports)} cell(s)')
    return parsing.EXIT_OK if ok else parsing.EXIT_ERROR


def discover_hosts(context, args):
    reports = discovery.discover_hosts(context, args.cell_uuid)
    return _report_discovery(reports, args.verbose)


def simple_cell_setup(context, args):
    """Everything a first cell needs, each step idempotent.

    The first cell's settings are checked before cell0 is mapped, so that
    a refusal maps nothing.
    """
    code = db.report_sync(db.sync_api_and_flow_databases())
    existing = [cell for cell in cells.CellMapping.get_all(context)
                if not cell.is_cell0]
    if not existing:
        url, transport_url = _new_cell_urls(None, args.transport_url,
                                            args.allow_shared_transport)
        cells.check_new_cell(
            context, FIRST_CELL_NAME, url, transport_url,
            allow_shared_transport=args.allow_shared_transport)
    cell0, created = cells.map_cell0(context)
    _say_mapped_cell0(cell0, created)
    if existing:
        output.say('Cells already mapped: '
                   + ', '.join(cell_view.label(cell) for cell in existing))
    else:
        cell = cells.create_cell(
            context, FIRST_CELL_NAME, url, transport_url,
            allow_shared_transport=args.allow_shared_transport)
        output.say(f'Created cell {cell_view.label(cell)}')
    code = max(code, db.report_sync(db.sync_cell_databases(context)))
    reports = discovery.discover_hosts(context)
    return max(code, _report_discovery(reports, args.verbose))


def verify_instance(context, args):
    status, mapping = cells.verify_instance(context, args.uuid)
    if not args.quiet:
        where = ''
        if mapping is not None and mapping.cell_mapping is not None:
            where = f' in cell {cell_view.label(mapping.cell_mapping)}'
        output.say(f'Instance {args.uuid} is {status}{where}')
    return VERIFY_EXIT_CODES[status]


def _add_transport_options(command):
    command.add_argument(
        '--transport-url', '--transport_url', dest='transport_url',
        metavar='URL',
        help='the cell\'s oslo.messaging URL, a bus of its own (not the '
             'API\'s, not another cell\'s), e.g. rabbit://user:password@'
             'host:5672/cell1 (required, unless --allow-shared-transport, '
             'which makes [DEFAULT] transport_url the default)')
    command.add_argument(
        '--allow-shared-transport', action='store_true',
        help='accept a transport URL that is the API\'s bus ([DEFAULT] '
             'transport_url) or another cell\'s: the cell is then not '
             'confined, since services on one bus can call each other\'s '
             'topics, and on the API\'s bus the scheduler with the API '
             'level\'s rights (a single-cell or test deployment may accept '
             'that)')


def register(groups):
    commands = parsing.add_group(
        groups, 'cell_v2', 'map cells, hosts and instances',
        'Manage the cell mappings of the API database: which cells exist, '
        'where their databases and message buses are, which compute hosts '
        'belong to them, and where an instance lives.')

    command = parsing.add_command(
        commands, 'map_cell0', map_cell0, 'map cell0, the cell of failures',
        'Map cell0, the cell whose database keeps the instances that failed '
        'before reaching a cell. Its database defaults to the API '
        'database\'s, suffixed _cell0 (X.sqlite -> X_cell0.sqlite; database '
        'D -> D_cell0). An existing cell0 is left as it is.')
    command.add_argument(
        '--database_connection', '--database-connection', metavar='URL',
        help='cell0\'s database URL (the database must exist; SQLite files '
             'are created)')

    command = parsing.add_command(
        commands, 'create_cell', create_cell, 'map a new cell',
        'Map a new cell after checking that its database answers and its '
        'transport URL names an installed driver and a bus of its own '
        '(compared as buses: other credentials, host aliases or vhost '
        'spellings of the API\'s or another cell\'s bus are that bus); '
        'nothing is written otherwise. Prints the new cell\'s uuid '
        '(--verbose: the whole mapping). Run `db sync` afterwards to '
        'create its tables.',
        exit_codes=((cell_view.EXIT_CELL_EXISTS,
                     'a cell with that name, database or bus exists '
                     'already (a shared bus needs '
                     '--allow-shared-transport)'),))
    command.add_argument('--name', required=True, help='the cell\'s name')
    command.add_argument(
        '--database_connection', '--database-connection', metavar='URL',
        help='the cell\'s database URL (default: [database] connection)')
    _add_transport_options(command)
    command.add_argument('--disabled', action='store_true',
                         help='map the cell disabled: the scheduler sends '
                              'no new instances to it')
    command.add_argument('--zone', metavar='ZONE',
                         help='the zone the cell sits in (uuid or name; '
                              'default: none, the top level)')

    cell_update.register(commands)

    parsing.add_command(
        commands, 'list_cells', list_cells, 'list the cells',
        'List every cell, cell0 first, with its transport and database URLs '
        '(passwords masked) and the zone it sits in (empty: the top '
        'level). --verbose adds how many hosts and instances '
        'are mapped to each cell and, from the aggregate its schedulers '
        'last published in its database, how many of its hosts are up, '
        'how long ago, and its free room per resource class (and the most '
        'on one host); "no answer" for a cell whose database does not '
        'answer, "no scheduler" for one whose schedulers never published.')

    command = parsing.add_command(
        commands, 'delete_cell', delete_cell, 'unmap a cell',
        'Delete a cell mapping. Refused while hosts or instances are mapped '
        'to the cell, and for cell0, unless --force, which also deletes '
        'those host and instance mappings. The cell\'s database is not '
        'touched.',
        exit_codes=(
            (1, 'no cell has that uuid or name, or another error'),
            (cell_view.EXIT_HOSTS_REMAIN, 'hosts are mapped to the cell'),
            (cell_view.EXIT_INSTANCES_REMAIN,
             'instances are mapped to the cell'),
            (cell_view.EXIT_CELL0_PROTECTED, 'the cell is cell0'),
        ))
    command.add_argument('--cell_uuid', '--cell-uuid', required=True,
                         metavar='UUID', help='the cell\'s uuid (or name)')
    command.add_argument('--force', action='store_true',
                         help='also delete the cell\'s host and instance '
                              'mappings; allow deleting cell0')

    command = parsing.add_command(
        commands, 'discover_hosts', discover_hosts, 'map new compute hosts',
        'Give every compute host that registered in a cell database a host '
        'mapping to that cell, for every enabled cell but cell0 (or only '
        'the given cell), cells in parallel. Safe to run again and to run '
        'concurrently. A cell whose database cannot be read is reported '
        'and skipped; the other cells are still discovered.',
        exit_codes=((1, 'a cell was skipped, or a host is already mapped to '
                        'another cell (the other hosts were mapped)'),))
    command.add_argument('--cell_uuid', '--cell-uuid', metavar='UUID',
                         help='discover only this cell (uuid or name)')

    command = parsing.add_command(
        commands, 'simple_cell_setup', simple_cell_setup,
        'set up cell0 and a first cell in one go',
        'Sync the API and flow databases, map cell0, map a first cell '
        f'named {FIRST_CELL_NAME} on [database] connection and '
        '--transport-url (unless a cell other than cell0 exists), sync '
        'every cell database and discover hosts. Every step is '
        'idempotent, so it can be run again.',
        exit_codes=((1, 'a step failed (see the ERROR lines)'),))
    _add_transport_options(command)

    command = parsing.add_command(
        commands, 'verify_instance', verify_instance,
        'tell where an instance is mapped',
        'Check that an instance is mapped to a cell and exists there.',
        exit_codes=(
            (0, 'the instance is mapped to a cell and exists there'),
            (1, 'the instance has no instance mapping (or an error)'),
            (2, 'the instance is mapped but has no cell yet (it is only a '
                'build request)'),
            (3, 'the instance is deleted in its cell'),
            (4, 'the instance is mapped but its cell no longer has it '
                '(archived)'),
        ))
    command.add_argument('--uuid', required=True, metavar='UUID',
                         help='the instance\'s uuid')
    command.add_argument('--quiet', action='store_true',
                         help='print nothing; only the exit code tells')
