"""A zone's aggregate: the sum of what is below it.

Zones group cells (and other zones) above the cell level. The API level
schedules a zone by the same kind of summary it schedules a cell by
(see ``cellboot.scheduler.aggregate``), so a zone's summary is built
from its children's with ``combine`` -- the one place the rule lives,
used by the admin API that shows zones and by the scheduler that
descends them.

Summing keeps the cell-level promise: ``max_free`` is the largest free
room of any one host below, so a request above it fits no host of the
zone and the whole subtree can be pruned, never one a host could take.
``computed_at`` is the oldest child's, since the summary is no fresher
than its stalest part.
"""

FIGURES = ('capacity', 'free', 'max_free')


def _add_resources(total, resources):
    for rc, figures in resources.items():
        was = total.get(rc)
        if was is None:
            total[rc] = {key: float(figures[key]) for key in FIGURES}
            continue
        was['capacity'] += figures['capacity']
        was['free'] += figures['free']
        was['max_free'] = max(was['max_free'], figures['max_free'])


def _add_traits(total, traits):
    for trait, count in traits.items():
        total[trait] = total.get(trait, 0) + count


def combine(aggregates):
    """The aggregate of a zone whose children have ``aggregates``.

    Children with no aggregate (None: a cell that never published, an
    empty zone) are skipped; None when no child has one. Hosts, up hosts,
    capacity and free room are summed, ``max_free`` is the largest of
    the children's, ``zones`` (host availability zones) is the sorted
    union and ``computed_at`` the oldest. A resource class some child
    does not report is summed over the children that do. ``traits``
    (up hosts with each trait) are summed; None (not known) as soon as
    one child does not say.
    """
    present = [one for one in aggregates if one is not None]
    if not present:
        return None
    resources = {}
    traits = {}
    zones = set()
    for one in present:
        _add_resources(resources, one['resources'])
        zones.update(one['zones'])
        if traits is not None and one.get('traits') is not None:
            _add_traits(traits, one['traits'])
        else:
            traits = None
    return {'hosts': sum(one['hosts'] for one in present),
            'up_hosts': sum(one['up_hosts'] for one in present),
            'resources': resources,
            'zones': sorted(zones),
            'traits': traits,
            'computed_at': min(one['computed_at'] for one in present)}
