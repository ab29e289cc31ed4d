"""A zone's aggregate: the aggregates of what is below it, combined.

A zone (region, zone... any level above cells) is filtered and weighed
by the API level exactly as a cell is, from one aggregate of the shape
``cellboot.scheduler.aggregate`` documents. For a zone that aggregate
must never say "no" where some cell below it would say "yes": counts,
capacity and free room add up, the largest free room on one host is the
largest of any child, the host availability zones are every child's,
and the figures are as old as the oldest child's.
"""


def combine(aggregates):
    """The aggregate of a zone whose children have ``aggregates``.

    ``None`` children (no figures) are skipped; None when none is left.
    """
    present = [aggregate for aggregate in aggregates
               if aggregate is not None]
    if not present:
        return None
    resources = {}
    zones = set()
    for aggregate in present:
        for rc, figures in aggregate['resources'].items():
            into = resources.get(rc)
            if into is None:
                resources[rc] = {'capacity': figures['capacity'],
                                 'free': figures['free'],
                                 'max_free': figures['max_free']}
                continue
            into['capacity'] += figures['capacity']
            into['free'] += figures['free']
            if figures['max_free'] > into['max_free']:
                into['max_free'] = figures['max_free']
        zones.update(aggregate['zones'])
    return {'hosts': sum(aggregate['hosts'] for aggregate in present),
            'up_hosts': sum(aggregate['up_hosts'] for aggregate in present),
            'resources': resources, 'zones': sorted(zones),
            'computed_at': min(aggregate['computed_at']
                               for aggregate in present)}
