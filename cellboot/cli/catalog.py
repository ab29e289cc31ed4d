"""``cellboot flavor list`` and ``cellboot hypervisor list``.

Read-only lists of what servers are booted from and onto, over the
API's ``/flavors`` and ``/os-hypervisors/detail`` (administrators),
every page of them, printed as ``cellboot.cli.formats`` says.
"""

from cellboot.cli import exit_codes
from cellboot.cli import formats

_FLAVOR_HEADERS = ['ID', 'Name', 'VCPUs', 'RAM', 'Disk', 'Is Public']
_HYPERVISOR_HEADERS = ['ID', 'Hypervisor Hostname', 'Host', 'Cell',
                       'Status', 'State', 'vCPUs Used', 'vCPUs',
                       'Memory MB Used', 'Memory MB']


def list_flavors(client, args):
    formats.emit_list(args, _FLAVOR_HEADERS, [
        [item.get('id'), item.get('name'), item.get('vcpus'),
         item.get('ram'), item.get('disk'),
         item.get('os-flavor-access:is_public')]
        for item in client.get_all('/flavors', 'flavors')])
    return exit_codes.OK


def list_hypervisors(client, args):
    formats.emit_list(args, _HYPERVISOR_HEADERS, [
        [item.get('id'), item.get('hypervisor_hostname'),
         (item.get('service') or {}).get('host'), item.get('cell'),
         item.get('status'), item.get('state'), item.get('vcpus_used'),
         item.get('vcpus'), item.get('memory_mb_used'),
         item.get('memory_mb')]
        for item in client.get_all('/os-hypervisors/detail',
                                   'hypervisors')])
    return exit_codes.OK


def _register_list(subparsers, group, help_text, func):
    parser = subparsers.add_parser(group, help=help_text)
    commands = parser.add_subparsers(dest='command', metavar='COMMAND',
                                     required=True)
    sub = commands.add_parser('list', help=help_text)
    formats.add_arguments(sub)
    sub.set_defaults(func=func)


def register(subparsers):
    _register_list(subparsers, 'flavor', 'the flavors servers boot with',
                   list_flavors)
    _register_list(subparsers, 'hypervisor',
                   'compute hosts, their state and usage (admin)',
                   list_hypervisors)
