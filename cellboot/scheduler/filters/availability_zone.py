"""AvailabilityZoneFilter: hosts in the availability zone asked for."""

import numpy as np

from cellboot.scheduler.filters import base


class AvailabilityZoneFilter(base.BaseHostFilter):
    """Passes hosts in the request's zone; any host when it names none.

    A host's zone is the one its compute service reports with its
    resource provider (``[compute] availability_zone``).
    """

    def host_mask(self, states, request):
        if not request.availability_zone:
            return None
        code = states.zones.codes.get(request.availability_zone)
        if code is None:
            return np.zeros(len(states), dtype=bool)
        return states.az == code

    def describe(self, request):
        return f'availability zone {request.availability_zone!r} asked for'
