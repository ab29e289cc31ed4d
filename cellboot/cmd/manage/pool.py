"""``cellboot-manage pool``: shared resource pools.

A pool gives its inventory to every host of the cells (or of the cells
below the zones) it serves: a shared storage pool's ``DISK_GB``, a
public address pool's ``CUSTOM_PUBLIC_IPV4``. The work is done by
``cellboot.scheduler.pools.records``; the handlers here read the
command line, print and choose exit codes.
"""

from cellboot.console import output
from cellboot.console import parsing
from cellboot import exception
from cellboot.scheduler.pools import records

EXIT_POOL_EXISTS = 2
EXIT_POOL_IN_USE = 3


def _pairs(values, option, convert):
    """``{CLASS: value}`` of ``CLASS=VALUE`` arguments; Invalid naming
    the option and the argument at fault."""
    found = {}
    for value in values or ():
        rc, sep, amount = value.partition('=')
        try:
            if not sep or not rc or rc in found:
                raise ValueError
            found[rc] = convert(amount)
        except ValueError:
            raise exception.Invalid(
                reason=f'{option} takes CLASS=NUMBER once per class, not '
                       f'{value[:80]!r}')
    return found


def _inventories(args):
    totals = _pairs(args.inventory, '--inventory', int)
    extras = (('reserved', _pairs(args.reserved, '--reserved', int)),
              ('allocation_ratio', _pairs(args.allocation_ratio,
                                          '--allocation-ratio', float)))
    inventories = {rc: {'total': total} for rc, total in totals.items()}
    for field, values in extras:
        for rc, value in values.items():
            if rc not in inventories:
                raise exception.Invalid(
                    reason=f'--{field.replace("_", "-")} {rc}= names a '
                           f'class with no --inventory')
            inventories[rc][field] = value
    return inventories


def _figures(pool):
    return ', '.join(
        f'{rc} {pool["usages"][rc]}/{pool["capacity"][rc]}'
        for rc in sorted(pool['inventories']))


def create(context, args):
    try:
        pool = records.create_pool(
            context, args.name, _inventories(args), traits=args.trait or [],
            cells=args.cell or [], zones=args.zone or [])
    except exception.PoolExists as exc:
        output.error(str(exc))
        return EXIT_POOL_EXISTS
    output.say(pool['uuid'])
    return parsing.EXIT_OK


def list_pools(context, args):
    output.table(
        ['Name', 'UUID', 'Used/capacity', 'Traits', 'Cells', 'Zones'],
        [[pool['name'], pool['uuid'], _figures(pool),
          ', '.join(pool['traits']), ', '.join(pool['cells']),
          ', '.join(pool['zones'])]
         for pool in records.list_pools(context)])
    return parsing.EXIT_OK


def show(context, args):
    pool = records.get_pool(context, args.pool)
    rows = [['name', pool['name']], ['uuid', pool['uuid']],
            ['generation', pool['generation']],
            ['traits', ', '.join(pool['traits'])],
            ['cells', ', '.join(pool['cells'])],
            ['zones', ', '.join(pool['zones'])]]
    for rc, inv in sorted(pool['inventories'].items()):
        rows.append([rc, f'used {pool["usages"][rc]} of capacity '
                         f'{pool["capacity"][rc]} (total {inv["total"]}, '
                         f'reserved {inv["reserved"]}, allocation_ratio '
                         f'{inv["allocation_ratio"]:g})'])
    output.table(['Field', 'Value'], rows)
    return parsing.EXIT_OK


def delete(context, args):
    try:
        pool = records.get_pool(context, args.pool)
        records.delete_pool(context, pool['uuid'])
    except exception.PoolInUse as exc:
        output.error(str(exc))
        return EXIT_POOL_IN_USE
    output.say(f'Deleted pool {pool["name"]} ({pool["uuid"]})')
    return parsing.EXIT_OK


def register(groups):
    commands = parsing.add_group(
        groups, 'pool', 'create, list, show and delete shared pools',
        'Manage shared resource pools: providers that are not hosts, whose '
        'inventory every host of the cells (or of the cells below the '
        'zones) they serve draws from, such as a shared storage pool '
        '(DISK_GB) or a public address pool (CUSTOM_PUBLIC_IPV4). A '
        'request\'s class that a cell\'s hosts do not provide at all is '
        'taken from a pool serving that cell.')
    command = parsing.add_command(
        commands, 'create', create, 'create a pool',
        'Create a pool and print its uuid. Each --inventory CLASS=N adds '
        'a resource class (a standard class or CUSTOM_*); --reserved and '
        '--allocation-ratio refine a class given by --inventory. At '
        'least one --cell or --zone says what the pool serves.',
        exit_codes=((1, 'bad input: a class, a number, a trait, an '
                        'unknown cell or zone, or nothing served'),
                    (EXIT_POOL_EXISTS, 'a provider with that name exists '
                                       'already')))
    command.add_argument('name', metavar='NAME', help='the pool\'s name')
    command.add_argument('--inventory', action='append', required=True,
                         metavar='CLASS=N', help='a class and its total')
    command.add_argument('--reserved', action='append', metavar='CLASS=N',
                         help='how much of a class is kept back')
    command.add_argument('--allocation-ratio', action='append',
                         metavar='CLASS=R',
                         help='how far a class may be over-committed')
    command.add_argument('--trait', action='append', metavar='TRAIT',
                         help='a trait of the pool (repeatable)')
    command.add_argument('--cell', action='append', metavar='CELL',
                         help='a cell served (uuid or name; repeatable)')
    command.add_argument('--zone', action='append', metavar='ZONE',
                         help='a zone served, with every cell below it '
                              '(uuid or name; repeatable)')
    parsing.add_command(
        commands, 'list', list_pools, 'list the pools',
        'List every pool with its usage and capacity per class, its '
        'traits and the cells and zones it serves.')
    command = parsing.add_command(
        commands, 'show', show, 'show one pool',
        'Show a pool: its inventories, usage, traits and scopes.',
        exit_codes=((1, 'no pool has that uuid or name'),))
    command.add_argument('pool', metavar='POOL',
                         help='the pool\'s uuid or name')
    command = parsing.add_command(
        commands, 'delete', delete, 'delete an unused pool',
        'Delete a pool. Refused while any server holds resources of it.',
        exit_codes=((1, 'no pool has that uuid or name'),
                    (EXIT_POOL_IN_USE, 'servers still hold resources of '
                                       'the pool')))
    command.add_argument('pool', metavar='POOL',
                         help='the pool\'s uuid or name')
