"""``cellboot-manage zone``: the levels above cells.

Zones group cells (region -> zone -> cells, as deep as wanted); a cell
is put in a zone by ``cell_v2 create_cell --zone`` or ``cell_v2
update_cell --zone``. The work is done by ``cellboot.objects.zone``;
the handlers here print and choose exit codes.
"""

import collections

from cellboot.console import output
from cellboot.console import parsing
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import zone as zone_obj

EXIT_ZONE_EXISTS = 2
EXIT_ZONE_IN_USE = 3

# How far each level of the tree is indented in ``zone list``.
INDENT = '  '


def create(context, args):
    try:
        zone = zone_obj.create(context, args.name, parent=args.parent)
    except exception.ZoneExists as exc:
        output.error(str(exc))
        return EXIT_ZONE_EXISTS
    output.say(zone.uuid)
    return parsing.EXIT_OK


def list_zones(context, args):
    zones = zone_obj.get_all(context)
    names = {zone.uuid: zone.name for zone in zones}
    cells = collections.Counter(
        cell.zone_uuid for cell in cell_mapping.CellMapping.get_all(context))
    children = collections.Counter(zone.parent_uuid for zone in zones)
    output.table(
        ['Name', 'UUID', 'Parent', 'Cells', 'Zones'],
        [[INDENT * depth + zone.name, zone.uuid,
          names.get(zone.parent_uuid, ''), cells[zone.uuid],
          children[zone.uuid]]
         for depth, zone in zone_obj.depth_first(zones)])
    return parsing.EXIT_OK


def delete(context, args):
    try:
        zone = zone_obj.get(context, args.zone)
        zone_obj.destroy(context, zone.uuid)
    except exception.ZoneInUse as exc:
        output.error(str(exc))
        return EXIT_ZONE_IN_USE
    output.say(f'Deleted zone {zone.name} ({zone.uuid})')
    return parsing.EXIT_OK


def register(groups):
    commands = parsing.add_group(
        groups, 'zone', 'create, list and delete zones',
        'Manage zones, optional levels above cells (a region, then zones, '
        'then cells; as deep as wanted). A zone\'s aggregate is that of '
        'the cells and zones below it. Cells that are in no zone sit at '
        'the top level, as every cell did before zones existed.')
    command = parsing.add_command(
        commands, 'create', create, 'create a zone',
        'Create a zone, at the top level or under --parent, and print its '
        'uuid. A name is 1 to 255 printable characters, with no space at '
        'either end, and must not look like a uuid (zones are named by '
        'either).',
        exit_codes=((1, 'the name is not valid, or no zone is --parent'),
                    (EXIT_ZONE_EXISTS, 'a zone with that name exists '
                                       'already')))
    command.add_argument('name', metavar='NAME', help='the zone\'s name')
    command.add_argument('--parent', metavar='ZONE',
                         help='the zone it sits in (uuid or name; default: '
                              'none, the top level)')
    parsing.add_command(
        commands, 'list', list_zones, 'list the zones',
        'List every zone as a tree (each zone indented under its parent), '
        'with its parent and how many cells and zones it holds directly.')
    command = parsing.add_command(
        commands, 'delete', delete, 'delete an empty zone',
        'Delete a zone. Refused while cells or zones are in it: move its '
        'cells out (cell_v2 update_cell --no-zone or --zone) and delete '
        'its zones first.',
        exit_codes=((1, 'no zone has that uuid or name'),
                    (EXIT_ZONE_IN_USE, 'the zone still holds cells or '
                                       'zones')))
    command.add_argument('zone', metavar='ZONE',
                         help='the zone\'s uuid or name')
