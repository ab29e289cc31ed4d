"""ResourceFilter: hosts with room for the flavor's VCPU, RAM and disk."""

import numpy as np

from cellboot.scheduler.filters import base


class ResourceFilter(base.BaseHostFilter):
    """Passes hosts where the claim of one instance would succeed.

    Applies the claim's own rules per resource class: free capacity
    ((total - reserved) * allocation_ratio - used) at least the amount,
    and the amount within min_unit..max_unit and a multiple of step_size.
    Per cell, prunes the cells whose summed free capacity cannot hold one
    instance, so their hosts are never looked at.
    """

    def cell_mask(self, states, request):
        mask = None
        for i, amount in _requested(request):
            fits = states.cell_free[i] >= amount
            mask = fits if mask is None else mask & fits
        return mask

    def host_mask(self, states, request):
        mask = None
        for i, amount in _requested(request):
            fits = states.free[i] >= amount
            # The unit rules depend on inventories only: computed once
            # per flavor size until an inventory changes.
            fits &= states.memoized(
                ('units', i, amount),
                lambda i=i, amount=amount: _units_allow(states, i, amount))
            mask = fits if mask is None else mask & fits
        return mask

    def describe(self, request):
        return f'needs {request.describe_resources()} free on one host'


def _units_allow(states, i, amount):
    """Hosts where one consumer may take ``amount`` of class ``i``."""
    allowed = states.max_unit[i] >= amount
    allowed &= states.min_unit[i] <= amount
    # A host without this class has step 0 and already fails max_unit.
    allowed &= np.fmod(amount, np.maximum(states.step_size[i], 1)) == 0
    return allowed


def _requested(request):
    return [(i, amount) for i, amount in enumerate(request.amounts)
            if amount > 0]
