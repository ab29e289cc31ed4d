"""``cellboot-manage cell_v2``: map cells, hosts and check instances.

The handlers here print and choose exit codes; the work is done by
``cells`` (mappings) and ``discovery`` (host mappings). Exit codes follow
nova-manage where nova-manage has the same command.
"""

from cellboot.cells import discovery
from cellboot.cells import mappings as cells
from cellboot.cmd.manage import db
from cellboot.conf import CONF
from cellboot.console import output
from cellboot.console import parsing
from cellboot import exception
from cellboot import masking
from cellboot.objects import zone as zone_obj
from cellboot.scheduler import cell_aggregates

EXIT_CELL_EXISTS = 2
EXIT_HOSTS_REMAIN = 3
EXIT_INSTANCES_REMAIN = 4
EXIT_CELL0_PROTECTED = 5

VERIFY_EXIT_CODES = {
    cells.MAPPED: 0,
    cells.NOT_MAPPED: 1,
    cells.NO_CELL: 2,
    cells.DELETED: 3,
    cells.ARCHIVED: 4,
}

FIRST_CELL_NAME = 'cell1'


def _label(cell):
    return f'{cell.name} ({cell.uuid})'


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
        return EXIT_CELL_EXISTS
    if args.verbose:
        _cell_table([cell], verbose=False, context=context)
    else:
        output.say(cell.uuid)
    return parsing.EXIT_OK


def update_cell(context, args):
    changes = {}
    if args.zone is not None or args.no_zone:
        changes['zone'] = args.zone
    for option in ('name', 'transport_url', 'database_connection'):
        if getattr(args, option) is not None:
            changes[option] = getattr(args, option)
    if not changes:
        output.error('nothing to change: give --name, --zone, --no-zone, '
                     '--transport-url or --database_connection')
        return parsing.EXIT_ERROR
    try:
        cell = cells.update_cell(
            context, args.cell_uuid,
            allow_shared_transport=args.allow_shared_transport, **changes)
    except (exception.CellMappingExists, exception.CellDatabaseInUse,
            exception.CellTransportShared) as exc:
        output.error(str(exc))
        return EXIT_CELL_EXISTS
    except exception.Cell0Unchangeable as exc:
        output.error(str(exc))
        return EXIT_CELL0_PROTECTED
    if args.verbose:
        _cell_table([cell], verbose=False, context=context)
    else:
        output.say(f'Updated cell {_label(cell)}')
    return parsing.EXIT_OK


def _figures(view):
    """A cell's aggregate in two columns: what is up, and free room."""
    if view is None:
        return ['', '']
    if view.silent:
        return ['no answer', '']
    aggregate = view.aggregate
    if aggregate is None:
        return ['no scheduler', '']
    room = aggregate['resources']
    free = ', '.join(
        f'{rc} {room[rc]["free"]:g} (one host {room[rc]["max_free"]:g})'
        for rc in ('VCPU', 'MEMORY_MB', 'DISK_GB') if rc in room)
    state = '' if view.usable() is None else ' (scheduler down)'
    return [f'{aggregate["up_hosts"]} of {aggregate["hosts"]}, '
            f'{view.age:.0f} s ago{state}', free]


def _cell_table(cell_list, verbose, context=None):
    headers = ['Name', 'UUID', 'Transport URL', 'Database Connection',
               'Disabled', 'Zone']
    zone_names = {zone.uuid: zone.name
                  for zone in zone_obj.get_all(context)}
    figures = {}
    if verbose:
        headers += ['Hosts', 'Instances', 'Up hosts (aggregate)', 'Free']
        figures = cell_aggregates.read_all(
            context, [cell for cell in cell_list if not cell.is_cell0])
    rows = []
    for cell in cell_list:
        row = [cell.name, cell.uuid,
               masking.mask_url(cell.transport_url),
               masking.mask_url(cell.database_connection),
               cell.disabled, zone_names.get(cell.zone_uuid, '')]
        if verbose:
            row += [cells.HostMapping.count_by_cell(context, cell.uuid),
                    cells.InstanceMapping.count_by_cell(context, cell.uuid)]
            row += _figures(figures.get(cell.uuid))
        rows.append(row)
    output.table(headers, rows)


def list_cells(context, args):
    _cell_table(cells.CellMapping.get_all(context), args.verbose, context)
    return parsing.EXIT_OK


def delete_cell(context, args):
    try:
        cell, hosts, instances = cells.delete_cell(context, args.cell_uuid,
                                                   force=args.force)
    except exception.CellHasHostMappings as exc:
        output.error(str(exc))
        return EXIT_HOSTS_REMAIN
    except exception.CellHasInstanceMappings as exc:
        output.error(str(exc))
        return EXIT_INSTANCES_REMAIN
    except exception.Cell0Protected as exc:
        output.error(str(exc))
        return EXIT_CELL0_PROTECTED
    removed = ''
    if hosts or instances:
        removed = (f' with {hosts} host mapping(s) and {instances} instance '
                   f'mapping(s)')
    output.say(f'Deleted cell {_label(cell)}{removed}')
    return parsing.EXIT_OK


def _report_discovery(reports, verbose):
    """Print what discovery did; the exit code (1 if a cell had trouble)."""
    ok = True
    for report in reports:
        label = _label(report.cell)
        if report.failure is not None:
            output.error(f'cell {label} was skipped: {report.failure}')
            ok = False
            continue
        for host in report.mapped:
            output.say(f'Mapped host {host} to cell {label}')
        for host, other in report.conflicts.items():
            output.error(f'host {host} of cell {label} is already mapped to '
                         f'cell {_label(other)}; its compute nodes were left '
                         f'unmapped')
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
                   + ', '.join(_label(cell) for cell in existing))
    else:
        cell = cells.create_cell(
            context, FIRST_CELL_NAME, url, transport_url,
            allow_shared_transport=args.allow_shared_transport)
        output.say(f'Created cell {_label(cell)}')
    code = max(code, db.report_sync(db.sync_cell_databases(context)))
    reports = discovery.discover_hosts(context)
    return max(code, _report_discovery(reports, args.verbose))


def verify_instance(context, args):
    status, mapping = cells.verify_instance(context, args.uuid)
    if not args.quiet:
        where = ''
        if mapping is not None and mapping.cell_mapping is not None:
            where = f' in cell {_label(mapping.cell_mapping)}'
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
        exit_codes=((EXIT_CELL_EXISTS, 'a cell with that name, database or '
                                       'bus exists already (a shared bus '
                                       'needs --allow-shared-transport)'),))
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

    command = parsing.add_command(
        commands, 'update_cell', update_cell, 'change a cell\'s mapping',
        'Change a cell\'s name, zone, transport URL or database URL; only '
        'what is given changes. The same checks as create_cell run first '
        '(name, database and bus not another cell\'s, database answers, '
        'zone exists), and nothing is written if one fails. cell0 keeps its '
        'name and sits in no zone. Prints the cell (--verbose: the whole '
        'mapping).',
        exit_codes=(
            (1, 'no cell or zone has that uuid or name, nothing to change, '
                'or another error'),
            (EXIT_CELL_EXISTS, 'another cell has that name, database or '
                               'bus (a shared bus needs '
                               '--allow-shared-transport)'),
            (EXIT_CELL0_PROTECTED, 'the change would rename cell0 or put '
                                   'it in a zone'),
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
            (EXIT_HOSTS_REMAIN, 'hosts are mapped to the cell'),
            (EXIT_INSTANCES_REMAIN, 'instances are mapped to the cell'),
            (EXIT_CELL0_PROTECTED, 'the cell is cell0'),
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
