"""``cellboot-manage provider list``: every cell's hosts and the pools.

What ``GET /os-resource-providers`` shows (``cellboot.api.
provider_listing``), as a table: a cell whose database does not answer
within ``[api] cell_timeout`` is named in a warning and left out.
"""

from cellboot.api import provider_listing
from cellboot.conf import CONF
from cellboot.console import output
from cellboot.console import parsing

_HEADERS = ['Kind', 'Name', 'UUID', 'Cell / serves', 'Zone',
            'Resources (used/total)', 'Traits']


def _where(provider):
    if provider['kind'] == 'host':
        return provider['cell']
    serves = provider['serves']
    return ', '.join([f'cell {name}' for name in serves['cells']]
                     + [f'zone {name}' for name in serves['zones']])


def _resources(provider):
    return ', '.join(
        f'{rc} {inventory["used"]}/{inventory["total"]}'
        for rc, inventory in sorted(provider['inventories'].items()))


def list_providers(context, args):
    found, unreachable = provider_listing.find(
        context, CONF.api.cell_timeout, kind=args.kind, cell=args.cell)
    for name in unreachable:
        output.warning(f'cell {name} did not answer: its hosts are not '
                       f'listed')
    output.table(_HEADERS, [
        [provider['kind'], provider['name'], provider['uuid'],
         _where(provider), provider.get('availability_zone') or '',
         _resources(provider), ', '.join(provider['traits'])]
        for provider in found])
    return parsing.EXIT_OK


def register(groups):
    commands = parsing.add_group(
        groups, 'provider', 'list resource providers',
        'Show the resource providers: every cell\'s compute hosts and the '
        'shared pools, with their inventories, what is allocated of them '
        'and their traits.')
    command = parsing.add_command(
        commands, 'list', list_providers, 'list hosts and pools',
        'List every cell\'s hosts and the shared pools, by kind and name. '
        'A cell whose database does not answer is named in a warning on '
        'stderr and its hosts are left out.',
        exit_codes=((1, 'no cell has the --cell name'),))
    command.add_argument('--kind', choices=provider_listing.KINDS,
                         help='hosts or pools only')
    command.add_argument('--cell', metavar='NAME',
                         help='the hosts of one cell and the pools that '
                              'serve it')
