"""``cellboot-manage flavor``: the server sizes users can boot.

Flavors live in the API database, with their extra specs
(``--property``); the REST API can create them too, but
a fresh deployment needs one before anybody can boot, so the operator's
command creates and lists them without the API running.
"""

from cellboot.api import extra_specs
from cellboot.console import output
from cellboot.console import parsing
from cellboot import exception
from cellboot.objects import flavor as flavor_obj

EXIT_FLAVOR_EXISTS = 2

_HEADERS = ['ID', 'Name', 'VCPUs', 'RAM (MB)', 'Disk (GB)', 'Public',
            'Disabled', 'Description', 'Properties']


def _row(flavor):
    return [flavor.flavorid, flavor.name, flavor.vcpus, flavor.memory_mb,
            flavor.root_gb, flavor.is_public, flavor.disabled,
            flavor.description, ', '.join(
                f'{key}={value}' for key, value in
                sorted((flavor.extra_specs or {}).items()))]


def _properties(given):
    """``{key: value}`` of the ``--property KEY=VALUE`` arguments."""
    found = {}
    for text in given or ():
        key, sign, value = text.partition('=')
        if not sign or not key:
            raise exception.Invalid(
                reason=f'--property {text[:80]!r} is not KEY=VALUE')
        if key in found:
            raise exception.Invalid(
                reason=f'--property {key[:80]} is given twice')
        found[key] = value
    return found


def create(context, args):
    specs = extra_specs.check(context, _properties(args.property))
    try:
        flavor = flavor_obj.Flavor.create(
            context, args.name, args.vcpus, args.ram, root_gb=args.disk,
            flavorid=args.id, is_public=not args.private,
            description=args.description, extra_specs=specs)
    except exception.FlavorExists as exc:
        output.error(str(exc))
        return EXIT_FLAVOR_EXISTS
    output.table(_HEADERS, [_row(flavor)])
    return parsing.EXIT_OK


def list_flavors(context, args):
    output.table(_HEADERS, [_row(flavor) for flavor in
                            flavor_obj.Flavor.get_all(context)])
    return parsing.EXIT_OK


def register(groups):
    commands = parsing.add_group(
        groups, 'flavor', 'create and list flavors',
        'Manage flavors, the server sizes (VCPUs, RAM, disk) users boot '
        'with.')
    command = parsing.add_command(
        commands, 'create', create, 'create a flavor',
        'Create a flavor and print it. VCPUs and RAM must be positive, the '
        'disk zero or more (0: the size of the image). Each --property is '
        'an extra spec: resources:CLASS=N asks for N units of a resource '
        'class, trait:NAME=required|forbidden for a trait (a custom class '
        'or trait must be created first: resource_class create, trait '
        'create); other keys are kept as they are.',
        exit_codes=((1, 'a value is out of range, or a property is not '
                        'valid'),
                    (EXIT_FLAVOR_EXISTS, 'a flavor with that name or id '
                                         'exists already')))
    command.add_argument('name', metavar='NAME', help='the flavor\'s name')
    command.add_argument('--vcpus', type=int, required=True,
                         help='number of virtual CPUs')
    command.add_argument('--ram', type=int, required=True, metavar='MB',
                         help='memory in MiB')
    command.add_argument('--disk', type=int, required=True, metavar='GB',
                         help='root disk in GiB (0: the size of the image)')
    command.add_argument('--id', metavar='ID',
                         help='the flavor id users refer to (default: a new '
                              'uuid)')
    command.add_argument('--private', action='store_true',
                         help='hide the flavor from non-admin users')
    command.add_argument('--description', metavar='TEXT',
                         help='a free-text description')
    command.add_argument('--property', action='append', metavar='KEY=VALUE',
                         help='an extra spec, e.g. resources:VGPU=1 or '
                              'trait:CUSTOM_SSD=required (repeatable)')
    parsing.add_command(
        commands, 'list', list_flavors, 'list the flavors',
        'List every flavor, by name.')
