"""The API level's tree of zones: regions, zones... down to cells.

Zones are optional levels above cells, any depth (``zones`` in the API
database, each with its parent; a cell mapping names its zone). The API
level's scheduler does not filter and weigh every cell on every
request: it filters and weighs the top-level nodes (zones, and cells in
no zone), then the children of the best zone, and so down to a cell
(``ZoneTree.descend``). At 1,000 cells in three levels of ten, that is
thirty nodes judged instead of a thousand.

A zone is judged by the same rules as a cell (``cell_filters.steps``),
from its aggregate, the ``combine`` of its children's
(``zone_aggregate``), so it is never pruned while a cell below it could
take the request (never a false "no"):

* the largest free room on one host, hosts up and host availability
  zones of a zone are the largest, sum and union of its children's;
* a silent cell adds nothing to its zone's figures, and a zone is
  usable while a cell below it that answers has figures not older than
  ``[scheduler] aggregate_max_age``: a zone of silent or stale cells is
  never chosen over a usable sibling; a zone with no cell is never seen;
* the rules that name cells (``target_cell``, same-host and affinity
  cells, the cells that refused) keep a zone when one of the cells
  below it (``cell_uuids``) passes them.

A zone may pass where none of its cells does (the figures are summed
across cells): the descent then tries the zone's next sibling, and so
on, in memory. Only cells that are asked count against ``[scheduler]
max_cells_per_request``. With the default weighers the best zone holds
the cell a flat pass would have chosen: a zone's largest free room is
its best cell's.

The tree is built when cell mappings and zones are read
(``cell_aggregates.CellAggregates.refresh``) and kept current
incrementally: when a cell's figures change (a placement's answer, a
cell going silent), only its ancestors are combined again
(``changed``: depth times fan-out).

Naming a zone (see ``routing.CellsRequest.name_zones``): the ``zone``
scheduler hint, or else an ``availability_zone`` that is a tree zone's
name, confines the descent to the zones of that name.
"""

import collections

from cellboot.scheduler import cell_filters
from cellboot.scheduler import zone_aggregate

# Zones named in a NoValidHost message at most.
NAMED_IN_REASON = 10


class ZoneNode:
    """A zone: its children (zones and cells' views, those with a cell
    below), the cells below it, and the aggregate of its children."""

    def __init__(self, uuid, name):
        self.uuid = uuid
        self.name = name
        self.parent = None
        self.children = []
        self.cell_uuids = set()
        self.aggregate = None
        self.max_free = {}
        # The newest publication of a cell below that answers; None:
        # some cell's figures carry no time, they never grow old.
        self.newest = None

    def __repr__(self):
        return f'<ZoneNode {self.name} ({len(self.cell_uuids)} cells)>'

    def recompute(self):
        """The aggregate again, from the children's (a silent cell's
        figures are left out)."""
        parts = []
        stamps = []
        for child in self.children:
            if isinstance(child, ZoneNode):
                aggregate, stamp = child.aggregate, child.newest
            else:
                aggregate = None if child.silent else child.aggregate
                stamp = child.published_at
            if aggregate is not None:
                parts.append(aggregate)
                stamps.append(stamp)
        aggregate = zone_aggregate.combine(parts)
        self.newest = None if None in stamps or not stamps else max(stamps)
        self.max_free = {} if aggregate is None else {
            rc: figures['max_free']
            for rc, figures in aggregate['resources'].items()}
        self.aggregate = aggregate

    def usable(self, now, max_age):
        """Why no request may go below this zone now; None when one may
        (a cell below answers with figures young enough)."""
        if self.aggregate is None:
            return 'no cell below it answers with figures'
        if self.newest is not None:
            age = (now - self.newest).total_seconds()
            if age > max_age:
                return (f'the newest aggregate of its cells is {age:.0f} s '
                        f'old')
        return None


def _in_loop(uuid, parents):
    """Whether going up from zone ``uuid`` comes back to it (bad rows:
    such a zone hangs at the top, which breaks the loop)."""
    seen = set()
    up = parents.get(uuid)
    while up in parents and up not in seen:
        if up == uuid:
            return True
        seen.add(up)
        up = parents[up]
    return False


class ZoneTree:
    """Zones and cells' views as a tree; see the module docstring.

    ``zones`` are objects with ``uuid``, ``name`` and ``parent_uuid``
    (None at the top); ``views`` maps a cell uuid to its ``CellView``,
    whose cell's ``zone_uuid`` names its zone (None, or a zone that is
    not in ``zones``: the cell is at the top).
    """

    def __init__(self, zones=(), views=None):
        parents = {zone.uuid: zone.parent_uuid for zone in zones}
        self._zones = {zone.uuid: ZoneNode(zone.uuid, zone.name)
                       for zone in zones}
        self._named = collections.defaultdict(list)
        for zone in zones:
            node = self._zones[zone.uuid]
            self._named[zone.name].append(node)
            if not _in_loop(zone.uuid, parents):
                node.parent = self._zones.get(zone.parent_uuid)
        self.top = []
        self._cells = {}  # cell uuid -> (view, its zone or None)
        for view in (views or {}).values():
            self._attach(view)
        for node in self._post_order():
            node.recompute()

    def _post_order(self):
        order = []
        stack = [(node, False) for node in self.top
                 if isinstance(node, ZoneNode)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            stack.append((node, True))
            stack.extend((child, False) for child in node.children
                         if isinstance(child, ZoneNode))
        return order

    def _attach(self, view):
        uuid = view.cell.uuid
        zone = self._zones.get(getattr(view.cell, 'zone_uuid', None))
        self._cells[uuid] = (view, zone)
        child, node = view, zone
        while node is not None:
            if child not in node.children:
                node.children.append(child)
            node.cell_uuids.add(uuid)
            child, node = node, node.parent
        if child not in self.top:
            self.top.append(child)

    # -- keeping the figures current ------------------------------------------

    def changed(self, view):
        """``view``'s figures (or silence) changed: its ancestors combine
        theirs again. A view the tree does not hold replaces the one it
        held of that cell, or joins the tree."""
        known = self._cells.get(view.cell.uuid)
        if known is not None and known[0] is not view:
            self._detach(known)
            known = None
        if known is None:
            self._attach(view)
            known = self._cells[view.cell.uuid]
        node = known[1]
        while node is not None:
            node.recompute()
            node = node.parent

    def _detach(self, known):
        view, zone = known
        siblings = self.top if zone is None else zone.children
        siblings.remove(view)
        del self._cells[view.cell.uuid]

    # -- reading it -----------------------------------------------------------

    def is_zone(self, name):
        return name in self._named

    def roots(self, zone_name=None):
        """Where a descent starts: the top, or the zones called
        ``zone_name`` that have a cell below them."""
        return self.top if zone_name is None else self.zones_named(zone_name)

    def zones_named(self, name):
        """The zones called ``name`` that have a cell below them."""
        return [node for node in self._named.get(name, ())
                if node.cell_uuids]

    def cells_below(self, nodes):
        """``{cell uuid: view}`` of the cells at or below ``nodes``."""
        found = {}
        for node in nodes:
            if isinstance(node, ZoneNode):
                for uuid in node.cell_uuids:
                    found[uuid] = self._cells[uuid][0]
            else:
                found[node.cell.uuid] = node
        return found

    def descend(self, roots, steps):
        """``(view, pruned)``: the best cell at or below ``roots`` that
        passes ``steps`` (``cell_filters.steps``) or None, and the
        ``(zone name, why)`` of the zones pruned on the way."""
        pruned = []
        weighers = cell_filters.weighing()

        def removed(name, before, left, detail):
            kept = set(map(id, left))
            pruned.extend((node.name, name) for node in before
                          if isinstance(node, ZoneNode)
                          and id(node) not in kept)

        def visit(nodes):
            for node in cell_filters.ranked(cell_filters.sift(
                    nodes, steps, removed), weighers):
                if not isinstance(node, ZoneNode):
                    return node
                found = visit(node.children)
                if found is not None:
                    return found
                pruned.append((node.name, 'no cell below it passes'))
            return None

        return visit(roots), pruned


def pruned_reason(pruned):
    """``Zones pruned: eu (ResourceFilter); ...`` for NoValidHost, or ''."""
    if not pruned:
        return ''
    named = '; '.join(f'{name} ({why})'
                      for name, why in pruned[:NAMED_IN_REASON])
    more = len(pruned) - NAMED_IN_REASON
    if more > 0:
        named += f' and {more} more'
    return f' Zones pruned: {named}.'
