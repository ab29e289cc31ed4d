"""Which cells might take a request, best first, from their aggregates.

The API level's filters are the cell-level shadows of the host filters:
each keeps a cell only if some host of it could pass the host filter of
the same name, judged from the cell's aggregate, so a cell is never
dropped that could have taken the request (a kept cell may still find
no host: the next one is asked then). In order, cheapest first:

* usable -- the cell answers and has a live scheduler;
* ``CellFilter`` -- the cell named by ``target_cell``;
* ``SameHostFilter`` -- the cells of the hinted instances;
* ``ServerGroupAffinityFilter`` -- the cell of the group's members;
* ``NearFilter``, ``FarFilter`` -- the cells the allocations and servers
  named by ``near`` are reached from, not those of ``far``
  (``colocation``);
* ``AvailabilityZoneFilter`` -- cells with an up host in the zone;
* ``ComputeFilter`` -- cells with an up, enabled host;
* ``ResourceFilter`` -- cells whose largest free room on one host holds
  the flavor, class by class (a class the cell has not is no room,
  unless it may come from a shared pool serving the cell,
  ``pools.view``);
* ``TraitsFilter`` -- cells where some up host has each required trait
  and not every up host has a forbidden one (a cell that publishes no
  traits is kept);
* cells that already refused the request.

The survivors are weighed as the hosts are: ``[filter_scheduler]``'s
RAM, CPU and disk multipliers on the largest free room of each cell
(the room of the best host a spreading scheduler would pick there),
normalized across the candidates.

The same steps judge a zone of the tree (``zones``) from its combined
aggregate: the rules that name cells keep it when one of the cells below
it (its ``cell_uuids``) passes, so a zone is pruned only when no cell
below it would pass.
"""

import math
import random

from oslo_utils import timeutils

from cellboot.conf import CONF
from cellboot.scheduler import candidates as host_candidates

_WEIGHED = (('RAMWeigher', 'ram_weight_multiplier', 'MEMORY_MB'),
            ('CPUWeigher', 'cpu_weight_multiplier', 'VCPU'),
            ('DiskWeigher', 'disk_weight_multiplier', 'DISK_GB'))


def _figure(aggregate, rc, key):
    return aggregate['resources'].get(rc, {}).get(key, 0.0)


def _fits(aggregate, request, count, view=None):
    """How many of ``count`` instances the cell may hold at most."""
    fits = count
    pools = getattr(request, 'pools', None)
    for rc, amount in request.resources.items():
        if request.group_policy == 'affinity':
            room = _figure(aggregate, rc, 'max_free')
        else:
            room = _figure(aggregate, rc, 'free')
        if pools is not None and view is not None:
            room = max(room, pools.room(view, rc))
        fits = min(fits, int(math.floor(room / amount)))
    if request.group_policy == 'anti-affinity':
        fits = min(fits, aggregate['up_hosts'])
    return max(fits, 0)


def steps(request, refused, usable=True):
    """``(name, keep(node), detail)`` in the order they run (``usable``
    False: cells are judged from their last figures, answering or not).

    A node is a cell's view or a zone of the tree (``zones``): both have
    an aggregate, ``max_free``, ``usable`` and ``cell_uuids`` (the cells
    at or below the node), so that the rules naming cells keep a zone
    when some cell below it passes them.
    """
    resources = request.resources
    steps = []
    if usable:
        now = timeutils.utcnow()
        max_age = CONF.scheduler.aggregate_max_age
        steps.append(('usable',
                      lambda node: node.usable(now, max_age) is None,
                      'cells without a live scheduler or not answering'))
    else:
        steps.append(('figures', lambda node: node.aggregate is not None,
                      'cells that never published an aggregate'))
    if request.target_cell or request.target_unknown:
        target = request.target_cell
        steps.append(('CellFilter',
                      lambda node: target in node.cell_uuids,
                      f'target_cell {request.request.target_cell} asked '
                      f'for'))
    if request.request.same_host:
        cells = frozenset(request.same_host.values())
        steps.append(('SameHostFilter',
                      lambda node: not cells.isdisjoint(node.cell_uuids),
                      'same_host: the cells of '
                      f'{", ".join(request.request.same_host)}'))
    if request.group_policy == 'affinity' and request.group_cells():
        group = frozenset(request.group_cells())
        steps.append(('ServerGroupAffinityFilter',
                      lambda node: not group.isdisjoint(node.cell_uuids),
                      f'affinity with the members of server group '
                      f'{request.request.group_uuid}'))
    steps.extend(_colocation_steps(request))
    zone = request.host_zone
    if zone:
        steps.append(('AvailabilityZoneFilter',
                      lambda node: zone in node.aggregate['zones'],
                      f'availability zone {zone!r} asked for'))
    steps.append(('ComputeFilter',
                  lambda node: node.aggregate['up_hosts'] > 0,
                  'needs an enabled compute service that is up'))
    needs = list(resources.items())
    pools = getattr(request, 'pools', None)

    def _room_for_one(node):
        room = node.max_free
        for rc, amount in needs:
            if room.get(rc, 0.0) < amount and (
                    pools is None or pools.room(node, rc) < amount):
                return False
        return True

    steps.append(('ResourceFilter', _room_for_one,
                  f'needs {request.request.describe_resources()} free on '
                  f'one host'))
    required = request.request.required_traits
    forbidden = request.request.forbidden_traits
    if required or forbidden:
        steps.append(('TraitsFilter',
                      lambda node: _traits_allow(node.aggregate, required,
                                                 forbidden),
                      f'traits asked: {request.request.describe_traits()} '
                      f'(!: forbidden)'))
    excluded = getattr(request, 'excluded', None)
    if excluded:
        steps.append(('cells left',
                      lambda node: not node.cell_uuids <= excluded,
                      'cells the build was moved out of'))
    if refused:
        tried = frozenset(refused)
        steps.append(('cells tried',
                      lambda node: not node.cell_uuids <= tried,
                      'cells that refused the request already'))
    return steps


def _colocation_steps(request):
    """The ``near``/``far`` steps: a zone passes when some cell below
    it is near (and not every cell below it is far)."""
    found = getattr(request, 'colocation', None)
    steps = []
    if found is None:
        return steps
    if found.cells_in is not None:
        near = found.cells_in
        steps.append(('NearFilter',
                      lambda node: not near.isdisjoint(node.cell_uuids),
                      'near: the cells reached from '
                      f'{", ".join(request.request.near)}'))
    if found.cells_out:
        far = found.cells_out
        steps.append(('FarFilter',
                      lambda node: not node.cell_uuids <= far,
                      'far: the cells reached from '
                      f'{", ".join(request.request.far)}'))
    return steps


def _traits_allow(aggregate, required, forbidden):
    """Whether some host of the cell might pass ``TraitsFilter``."""
    traits = aggregate.get('traits')
    if traits is None:
        return True
    if any(not traits.get(trait) for trait in required):
        return False
    up = aggregate['up_hosts']
    return not any(traits.get(trait, 0) >= up for trait in forbidden)


def sift(nodes, steps, removed):
    """The ``nodes`` that pass every step; ``removed(name, before, left,
    detail)`` is told of each step that removed some."""
    kept = list(nodes)
    for name, keep, detail in steps:
        if not kept:
            break
        left = [node for node in kept if keep(node)]
        if len(left) < len(kept):
            removed(name, kept, left, detail)
        kept = left
    return kept


def ranked(nodes, weighers=None):
    """``nodes`` best first (``weigh``); equal weights in random order:
    API-level schedulers that see the same figures must not all send
    their requests to the same cell."""
    nodes = list(nodes)
    if len(nodes) < 2:
        return nodes
    random.shuffle(nodes)
    weights = weigh(nodes, weighers)
    order = sorted(zip(nodes, weights), key=lambda pair: -pair[1])
    return [node for node, _weight in order]


def candidates(views, request, refused, count, usable=True):
    """``(ranked, elimination)``: the views best first, and the record of
    what removed the others (``candidates.Elimination``). ``fits`` says
    how many of the ``count`` instances one of them may take.

    ``usable`` False keeps the cells that do not answer (or whose
    schedulers are down) and judges them from their last figures: what
    the API level asks to tell an outage from a request no cell fits.
    """
    views = list(views.values())
    elimination = host_candidates.Elimination(len(views), len(views),
                                              unit='cell')

    def removed(name, before, left, detail):
        if name == 'ResourceFilter':
            detail = _short_of(request, before, detail)
        elimination.removed(name, len(before) - len(left), detail)

    kept = sift(views, steps(request, refused, usable), removed)
    return ranked(kept), elimination


def _short_of(request, nodes, detail):
    """``detail``, naming the classes no cell of ``nodes`` has room for
    on one host (what an operator must add), computed only if shown."""
    def named():
        short = [f'{rc}={amount}'
                 for rc, amount in request.resources.items()
                 if all(node.max_free.get(rc, 0.0) < amount
                        for node in nodes)]
        if not short:
            return detail
        return (f'{detail}; no cell has room for {", ".join(short)} on '
                f'one host')
    return named


def fits(view, request, count):
    """How many of ``count`` instances the cell of ``view`` may hold at
    most, judged from its aggregate."""
    return _fits(view.aggregate, request, count, view)


def weighing():
    """``[(resource class, multiplier)]`` of the enabled weighers: read
    once per request by a descent that weighs at every level (options
    cost more to read than the weighing of ten nodes)."""
    group = CONF.filter_scheduler
    enabled = set(group.enabled_weighers)
    found = []
    for name, option, rc in _WEIGHED:
        multiplier = getattr(group, option)
        if name in enabled and multiplier:
            found.append((rc, multiplier))
    return found


def weigh(views, weighers=None):
    """One weight per view, higher first (see the module docstring);
    ``weighers`` as ``weighing`` returns them, read now if not given."""
    totals = [0.0] * len(views)
    if not views:
        return totals
    for rc, multiplier in weighing() if weighers is None else weighers:
        raw = [view.max_free.get(rc, 0.0) for view in views]
        low, span = min(raw), max(raw) - min(raw)
        if span > 0:
            for i, value in enumerate(raw):
                totals[i] += (value - low) * multiplier / span
    return totals


def tried(refused):
    """``Cells tried: cell1 (why); cell2 (why).`` for NoValidHost."""
    return 'Cells tried: ' + '; '.join(
        f'{name} ({why})' for name, why in refused.values()) + '.'
