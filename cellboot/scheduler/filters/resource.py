"""ResourceFilter: hosts with room for every resource class asked for."""

import numpy as np

from cellboot.scheduler.filters import base


class ResourceFilter(base.BaseHostFilter):
    """Passes hosts where the claim of one instance would succeed.

    Applies the claim's own rules per resource class: free capacity
    ((total - reserved) * allocation_ratio - used) at least the amount,
    and the amount within min_unit..max_unit and a multiple of step_size.
    Per cell, prunes the cells whose summed free capacity cannot hold one
    instance, so their hosts are never looked at. A class no host of the
    states has (no row) fits nowhere.
    """

    def cell_mask(self, states, request):
        mask = None
        for i, amount in _requested(states, request):
            if i is None:
                return np.zeros(len(states.cells.names), dtype=bool)
            fits = states.cell_free[i] >= amount
            mask = fits if mask is None else mask & fits
        return mask

    def host_mask(self, states, request):
        mask = None
        for i, amount in _requested(states, request):
            if i is None:
                return np.zeros(len(states), dtype=bool)
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

    def explain(self, states, request, candidates):
        """Name the classes no candidate host has room for: the class an
        operator must add capacity of."""
        short = []
        for rc, amount in request.resources.items():
            i = states.rc_position.get(rc)
            if i is None or not np.any(
                    candidates & (states.free[i] >= amount)
                    & _units_allow(states, i, amount)):
                short.append(f'{rc}={amount}')
        detail = self.describe(request)
        if short:
            detail += f'; no host has room for {", ".join(short)}'
        return detail


def _units_allow(states, i, amount):
    """Hosts where one consumer may take ``amount`` of class ``i``."""
    allowed = states.max_unit[i] >= amount
    allowed &= states.min_unit[i] <= amount
    # A host without this class has step 0 and already fails max_unit.
    allowed &= np.fmod(amount, np.maximum(states.step_size[i], 1)) == 0
    return allowed


def _requested(states, request):
    """``(row or None, amount)`` of each class asked for."""
    position = states.rc_position
    return [(position.get(rc), amount)
            for rc, amount in request.resources.items() if amount > 0]
