"""TraitsFilter: hosts with every required trait and no forbidden one."""

import numpy as np

from cellboot.scheduler.filters import base


class TraitsFilter(base.BaseHostFilter):
    """Passes hosts that have each trait the flavor requires
    (``trait:NAME=required``) and none it forbids (``=forbidden``).

    A trait is one boolean row of the host states (``has_trait``), so a
    request costs one row test per trait it names; the mask depends on
    the traits only and is memoized until a host's traits change. A
    required trait no host has passes no host; a forbidden one no host
    has removes none. Not concerned (None) by a request naming no trait.
    """

    def host_mask(self, states, request):
        required = request.required_traits
        forbidden = request.forbidden_traits
        if not required and not forbidden:
            return None
        return states.memoized(
            ('traits', required, forbidden),
            lambda: _mask(states, required, forbidden))

    def describe(self, request):
        parts = []
        if request.required_traits:
            parts.append('needs the traits '
                         + ', '.join(sorted(request.required_traits)))
        if request.forbidden_traits:
            parts.append('forbids the traits '
                         + ', '.join(sorted(request.forbidden_traits)))
        return '; '.join(parts)


def _mask(states, required, forbidden):
    position = states.trait_position
    if any(trait not in position for trait in required):
        return np.zeros(len(states), dtype=bool)
    mask = np.ones(len(states), dtype=bool)
    for trait in required:
        mask &= states.has_trait[position[trait]]
    for trait in forbidden:
        row = position.get(trait)
        if row is not None:
            mask &= ~states.has_trait[row]
    return mask
