"""Server group filters: keep a group's servers together, or apart.

The group's hosts are those of its members (their allocations, resolved
once per request) and of the request's own instances placed so far, so
the instances of one multi-create request honour the policy among
themselves too.
"""

import numpy as np

from cellboot.scheduler.filters import base


def _group_positions(states, request):
    return np.union1d(states.positions(request.group_providers),
                      states.positions_of_service_hosts(request.group_hosts))


class ServerGroupAffinityFilter(base.BaseHostFilter):
    """Affinity: once a member has a host, only that host passes."""

    def host_mask(self, states, request):
        if request.group_policy != 'affinity':
            return None
        positions = _group_positions(states, request)
        if not (request.group_hosts or request.group_providers):
            return None  # the first member may go anywhere
        return states.mask_of(positions)

    def describe(self, request):
        return (f'affinity with the members of server group '
                f'{request.group_uuid}')


class ServerGroupAntiAffinityFilter(base.BaseHostFilter):
    """Anti-affinity: hosts that hold a member of the group fail."""

    def host_mask(self, states, request):
        if request.group_policy != 'anti-affinity':
            return None
        positions = _group_positions(states, request)
        if not len(positions):
            return None
        return ~states.mask_of(positions)

    def describe(self, request):
        return (f'anti-affinity with the members of server group '
                f'{request.group_uuid}')
