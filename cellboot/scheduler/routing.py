"""What the API level knows of a request before it picks a cell.

A cell's scheduler has its cell's database and nothing else, so the API
level reads, once per request, what only the API database says
(``CellsRequest.resolve``): the cell named by ``target_cell``; the cells
of the instances named by ``same_host`` and ``different_host`` (those of
the request's own project only); the server group named by ``group``
and the cells of its members; where the allocations and servers named
by ``near`` and ``far`` are (``colocation``). It then sends each cell
it asks a spec of that cell's own (``spec_for``): the hints and members
that are in that cell, the request's own instances already placed there,
the group whole (``instance_group``), no ``target_cell`` (the cell is
chosen), no ``near``/``far`` but the hosts found near in that cell
(``preferred_providers``). Members and hinted instances of other cells
never leave the API level.

Zones of the API level's tree (``zones``) are the API level's alone:
``name_zones`` reads which zone, if any, the request names (the
``zone`` hint, else an ``availability_zone`` that is a tree zone's
name), and a cell is sent neither the hint nor such an
``availability_zone`` -- its hosts know only host availability zones.
"""

import copy
import time

from cellboot.builds import handback
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import instance_mapping
from cellboot.objects import server_group
from cellboot.scheduler import colocation
from cellboot.scheduler import request as request_mod

CELL0 = cell_mapping.CELL0_UUID


def _cells_of(context, uuids):
    """``{instance uuid: cell uuid}`` of those mapped to a real cell."""
    if not uuids:
        return {}
    mappings = instance_mapping.InstanceMapping.get_by_instance_uuids(
        context, list(uuids))
    return {uuid: mapping.cell_mapping.uuid
            for uuid, mapping in mappings.items()
            if mapping.cell_mapping is not None
            and mapping.cell_mapping.uuid != CELL0}


class CellsRequest:
    """A request spec, with what the API level resolved of it."""

    def __init__(self, spec):
        # Parsed (and checked) as a cell will parse it.
        self.request = request_mod.ScheduleRequest(spec)
        self.spec = spec
        # When it arrived: what the cells published before then counts.
        self.asked_at = time.monotonic()
        self.target_cell = None       # a cell uuid, or None
        self.target_unknown = False   # target_cell names no cell
        self.same_host = {}           # hinted instance -> its cell
        self.different_host = {}
        self.members = {}             # group member -> its cell
        # The request's own instances placed so far: uuid -> (cell, host).
        self.placed = {}
        # The zone of the tree the request is confined to (a name), and
        # the host availability zone its hosts must be in (name_zones).
        self.tree_zone = None
        self.host_zone = self.request.availability_zone
        # The shared pools that may give what a cell's hosts lack
        # (``pools.view.PoolPlan``); None when there is no pool.
        self.pools = None
        # What ``near``/``far`` allow (``colocation.Constraints``).
        self.colocation = colocation.NOTHING
        # The whole request on one provider (an allocation request):
        # no class is taken from the shared pools (``cells``).
        self.one_provider = bool(spec.get('one_provider'))
        # The cells a build moved out of (the cross-cell flow's record,
        # ``builds.handback``): never chosen again.
        self.excluded = frozenset(
            cell['uuid'] for cell in handback.cells_tried(spec))

    @property
    def resources(self):
        return self.request.resources

    @property
    def availability_zone(self):
        return self.request.availability_zone

    @property
    def group_policy(self):
        return self.request.group_policy if self.request.has_group else None

    def name_zones(self, is_tree_zone):
        """Read the zone names against the tree's (``is_tree_zone(name)``).

        The ``zone`` hint names a tree zone (whether or not one has that
        name: a name no zone has confines the request to nothing); the
        ``availability_zone`` then stays a host availability zone.
        Without the hint, an ``availability_zone`` that is a tree zone's
        name confines the request to that zone instead of naming a host
        availability zone.
        """
        hint = self.request.zone
        zone = self.request.availability_zone
        if hint:
            self.tree_zone = hint
        elif zone and is_tree_zone(zone):
            self.tree_zone, self.host_zone = zone, None

    def resolve(self, context, instance_uuids):
        request = self.request
        if request.target_cell:
            try:
                self.target_cell = cell_mapping.CellMapping \
                    .get_by_uuid_or_name(context, request.target_cell).uuid
            except exception.CellMappingNotFound:
                self.target_unknown = True
        hinted = request.same_host + request.different_host
        own = instance_mapping.InstanceMapping.owned_by(
            context, request.project_id, hinted) if hinted else set()
        cells = _cells_of(context, [uuid for uuid in hinted if uuid in own])
        self.same_host = {uuid: cells[uuid] for uuid in request.same_host
                          if uuid in cells}
        self.different_host = {uuid: cells[uuid]
                               for uuid in request.different_host
                               if uuid in cells}
        if request.near or request.far:
            self.colocation = colocation.constraints(
                context, request.project_id, request.near, request.far)
        if request.group_uuid and not request._group_given:
            try:
                group = server_group.ServerGroup.get_by_uuid(
                    context, request.group_uuid)
            except exception.ServerGroupNotFound:
                raise exception.NoValidHost(
                    reason=f'Server group {request.group_uuid} named by the '
                           f'"group" scheduler hint does not exist.')
            request.group_policy = group.policy
            request.group_members = list(group.members or ())
        if request.has_group:
            scheduling = set(instance_uuids)
            self.members = _cells_of(context, [
                uuid for uuid in request.group_members
                if uuid not in scheduling])

    def group_cells(self):
        """The cells holding a member or a placed sibling of the group."""
        cells = set(self.members.values())
        cells.update(cell for cell, _host in self.placed.values())
        return cells

    def place(self, instance_uuid, cell_uuid, host):
        self.placed[instance_uuid] = (cell_uuid, host)

    def spec_for(self, cell_uuid):
        """The spec a cell's scheduler is sent (see the module docstring)."""
        spec = copy.copy(self.spec)
        hints = dict(spec.get('scheduler_hints') or {})
        hints.pop('target_cell', None)
        hints.pop('zone', None)
        hints.pop('near', None)
        hints.pop('far', None)
        if self.colocation.hosts_in:
            spec['preferred_providers'] = sorted(self.colocation.hosts_in)
        if self.host_zone != self.request.availability_zone:
            spec['availability_zone'] = None  # a tree zone's name
        for name, found in (('same_host', self.same_host),
                            ('different_host', self.different_host)):
            if name in hints:
                in_cell = [uuid for uuid, cell in found.items()
                           if cell == cell_uuid]
                if in_cell:
                    hints[name] = in_cell
                elif name == 'same_host':
                    # Asked for, and none here: no host of this cell
                    # passes (the API level sends none such; see cells).
                    hints[name] = ['00000000-0000-0000-0000-000000000000']
                else:
                    hints.pop(name)
        spec['scheduler_hints'] = hints
        if self.pools is not None and self.pools.classes_for(cell_uuid):
            spec['resources_elsewhere'] = self.pools.classes_for(cell_uuid)
        if self.request.group_uuid:
            placed = [(uuid, host) for uuid, (cell, host)
                      in self.placed.items() if cell == cell_uuid]
            spec['instance_group'] = {
                'uuid': self.request.group_uuid,
                'policy': self.request.group_policy,
                'members': sorted(
                    [uuid for uuid, cell in self.members.items()
                     if cell == cell_uuid] + [uuid for uuid, _h in placed]),
                'hosts': sorted({host for _uuid, host in placed}),
            }
        return spec
