"""What the ``cell_v2`` commands show of a cell: label, table, exit codes.

Several ``cell_v2`` commands print the same things — a cell as
``name (uuid)``, the cells table of ``list_cells`` and of ``--verbose``
after ``create_cell`` and ``update_cell`` — and refuse with the same exit
codes. They live here, below the command modules, so that a command kept
in a module of its own (``cell_update``) shares them with ``cell_v2``
rather than copying them or importing the group module that registers it.
"""

from cellboot.cells import mappings as cells
from cellboot.console import output
from cellboot import masking
from cellboot.objects import zone as zone_obj
from cellboot.scheduler import cell_aggregates

# One set of numbers for the whole group, so that no two refusals of
# cell_v2 commands share a code by accident.
EXIT_CELL_EXISTS = 2
EXIT_HOSTS_REMAIN = 3
EXIT_INSTANCES_REMAIN = 4
EXIT_CELL0_PROTECTED = 5


def label(cell):
    return f'{cell.name} ({cell.uuid})'


# The classes every cell has, shown in ``Free``; any other class a
# cell's hosts report (VGPU, CUSTOM_FPGA, ...) is shown in ``Other``.
_USUAL = ('VCPU', 'MEMORY_MB', 'DISK_GB')
# Traits named in the ``Traits`` column; the rest are counted.
_TRAITS_SHOWN = 3


def _room(room, names):
    return ', '.join(
        f'{rc} {room[rc]["free"]:g} (one host {room[rc]["max_free"]:g})'
        for rc in names if rc in room)


def _traits(counts):
    """``CUSTOM_SSD 1, HW_CPU_X86_AVX2 3, +2 more``: up hosts with each
    trait, the most common first, the rest counted."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    shown = ', '.join(f'{name} {count}'
                      for name, count in ranked[:_TRAITS_SHOWN])
    more = len(ranked) - _TRAITS_SHOWN
    return shown + (f', +{more} more' if more > 0 else '')


def _figures(view):
    """A cell's aggregate in four columns: what is up, free room of the
    usual classes and of the others, and the up hosts' traits."""
    if view is None:
        return ['', '', '', '']
    if view.silent:
        return ['no answer', '', '', '']
    aggregate = view.aggregate
    if aggregate is None:
        return ['no scheduler', '', '', '']
    room = aggregate['resources']
    state = '' if view.usable() is None else ' (scheduler down)'
    return [f'{aggregate["up_hosts"]} of {aggregate["hosts"]}, '
            f'{view.age:.0f} s ago{state}', _room(room, _USUAL),
            _room(room, sorted(set(room) - set(_USUAL))),
            _traits(aggregate.get('traits') or {})]


def cell_table(cell_list, verbose, context=None):
    headers = ['Name', 'UUID', 'Transport URL', 'Database Connection',
               'Disabled', 'Zone']
    zone_names = {zone.uuid: zone.name
                  for zone in zone_obj.get_all(context)}
    figures = {}
    if verbose:
        headers += ['Hosts', 'Instances', 'Up hosts (aggregate)', 'Free',
                    'Other (free)', 'Traits (up hosts)']
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
