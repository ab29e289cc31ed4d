"""``/os-zones``: the levels above cells, with the aggregate of each.

A zone's aggregate is ``zone_aggregate.combine`` of the latest aggregate
published by every cell below it, at any depth: the rows ``/os-cells``
shows, read from the cells' databases. It counts what the API level's
scheduler may send requests to (``CellView.usable``), so that the figures
an operator reads are the ones the descent judges: a disabled cell, a
cell whose database does not answer, whose schedulers never published
or whose newest figures are older than ``[scheduler] aggregate_max_age``
(no scheduler of the cell runs) adds nothing; a zone with no such cell
below has a null aggregate. Administrators only, by default
(``cellboot.policies.zones``).
"""

import collections

from oslo_utils import timeutils

from cellboot.api import errors
from cellboot.api import pagination
from cellboot.api import views
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import zone as zone_obj
from cellboot.scheduler import cell_aggregates
from cellboot.scheduler import zone_aggregate


class _Tree:
    """Every zone and cell, and what each zone holds directly."""

    def __init__(self, context):
        self.zones = zone_obj.get_all(context)
        self.cells = collections.defaultdict(list)
        for cell in cell_mapping.CellMapping.get_all(context):
            if cell.zone_uuid is not None:
                self.cells[cell.zone_uuid].append(cell)
        self.children = collections.defaultdict(list)
        for zone in self.zones:
            if zone.parent_uuid is not None:
                self.children[zone.parent_uuid].append(zone)

    def cells_below(self, zone):
        """The cells in ``zone`` and in the zones below it, at any depth.

        The walk remembers where it has been: a cycle (rows edited by
        hand) ends it instead of looping.
        """
        found, seen, stack = [], set(), [zone.uuid]
        while stack:
            uuid = stack.pop()
            if uuid in seen:
                continue
            seen.add(uuid)
            found.extend(self.cells[uuid])
            stack.extend(child.uuid for child in self.children[uuid])
        return found


def _counted(context, cells):
    """``{cell uuid: aggregate}`` of the cells a request may go to."""
    enabled = [cell for cell in cells if not cell.disabled]
    views = cell_aggregates.read_all(context, enabled)
    now = timeutils.utcnow()
    return {uuid: view.aggregate for uuid, view in views.items()
            if view.usable(now) is None}


def _shown(context, tree, page):
    below = {zone.uuid: tree.cells_below(zone) for zone in page}
    cells = {cell.uuid: cell for found in below.values() for cell in found}
    figures = _counted(context, list(cells.values()))
    shown = []
    for zone in page:
        aggregate = zone_aggregate.combine([
            figures.get(cell.uuid) for cell in below[zone.uuid]])
        shown.append(views.zone(zone, tree.cells[zone.uuid],
                                tree.children[zone.uuid], aggregate))
    return shown


def index(api, request, context):
    """The zones by name, a page at a time; the marker is a zone uuid."""
    page = pagination.from_request(request)
    tree = _Tree(context)
    found, more = pagination.of_list(
        tree.zones, lambda zone: zone.name, lambda zone: zone.uuid, page)
    last = found[-1].uuid if found else None
    return errors.json_response(200, dict(
        {'zones': _shown(context, tree, found)},
        **pagination.links(request, 'zones', page, last, more)))


def show(api, request, context, zone_id):
    """One zone, named by uuid or name."""
    tree = _Tree(context)
    try:
        found = zone_obj.get(context, zone_id)
    except exception.ZoneNotFound:
        raise errors.NotFound(f'Zone {zone_id[:255]} could not be found.')
    return errors.json_response(200, {'zone': _shown(context, tree,
                                                     [found])[0]})
