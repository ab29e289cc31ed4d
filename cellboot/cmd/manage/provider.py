"""``cellboot-manage provider list`` and ``provider trait``.

``list``: what ``GET /os-resource-providers`` shows (``cellboot.api.
provider_listing``), as a table: a cell whose database does not answer
within ``[api] cell_timeout`` is named in a warning and left out.

``trait show|add|remove|set``: an operator's traits of one compute host,
as ``/os-resource-providers/{uuid}/traits`` has them (``cellboot.api.
host_traits``). A host whose ``[compute] traits`` is set replaces them
at its next report.
"""

from cellboot.api import host_traits
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


def _say_traits(cell, uuid, name, traits):
    output.say(f'{name} ({uuid}, cell {cell.name}): '
               f'{", ".join(traits) if traits else "no traits"}')


def show_traits(context, args):
    _say_traits(*host_traits.show(context, args.host, CONF.api.cell_timeout))
    return parsing.EXIT_OK


def change_traits(context, args):
    _say_traits(*host_traits.change(context, args.host, args.how,
                                    args.traits, CONF.api.cell_timeout))
    return parsing.EXIT_OK


_CHANGE_HELP = {
    'add': ('give a host traits', 'Give a compute host these traits '
            'besides those it has.'),
    'remove': ('take traits from a host', 'Take these traits from a '
               'compute host; one it does not have is no error.'),
    'set': ('make a host\'s traits exactly these', 'Replace the traits of '
            'a compute host with these (none: take them all).'),
}
_NOTE = (' Custom traits must have been created (cellboot-manage trait '
         'create). A host whose [compute] traits is set replaces its '
         'traits at its next report: change that option there instead.')


def _register_traits(commands):
    traits = parsing.add_group(
        commands, 'trait', 'show or change the traits of a compute host',
        'Show or change the traits of one compute host.' + _NOTE)
    command = parsing.add_command(
        traits, 'show', show_traits, 'show a host\'s traits',
        'Show the traits of one compute host.',
        exit_codes=((1, 'no such host, or a shared pool'),))
    command.add_argument('host', metavar='HOST_OR_UUID')
    for how in host_traits.CHANGES:
        summary, description = _CHANGE_HELP[how]
        command = parsing.add_command(
            traits, how, change_traits, summary, description + _NOTE,
            exit_codes=((1, 'no such host, a shared pool, or a trait that '
                            'is not standard nor created'),))
        command.add_argument('host', metavar='HOST_OR_UUID',
                             help='the host\'s provider name or uuid')
        command.add_argument('traits', metavar='TRAIT',
                             nargs='*' if how == 'set' else '+')
        command.set_defaults(how=how)


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
    _register_traits(commands)
