"""What a weigher is, and how weights from several weighers combine.

Each weigher scores every host with one raw number (free RAM, free vCPUs,
...). Raw scores of different weighers are in different units, so before
they are added each is normalized to 0..1 across the hosts that passed
the filters (the lowest raw score becomes 0, the highest 1; all equal
becomes all 0) and multiplied by the weigher's
multiplier from ``[filter_scheduler]``. The host with the highest sum
wins: a positive multiplier on free resources therefore spreads, a
negative one packs.
"""

import numpy as np

from cellboot.conf import CONF


class BaseWeigher:
    """A weigher; subclasses set ``multiplier_option`` and ``raw``."""

    #: The [filter_scheduler] option holding this weigher's multiplier.
    multiplier_option = None

    @property
    def name(self):
        return type(self).__name__

    def multiplier(self):
        return getattr(CONF.filter_scheduler, self.multiplier_option)

    def raw(self, states, request):
        """Raw scores of every host (higher is better before the
        multiplier), or None when all would be equal."""
        raise NotImplementedError


def weigh(states, mask, request, weighers):
    """The combined weight of every host; -inf where ``mask`` is False.

    Works on whole columns (no copies of the candidates' rows): each
    weigher is normalized over the candidates with masked min/max.
    """
    total = np.zeros(len(mask))
    candidates = int(np.count_nonzero(mask))
    # Masked reductions cost twice plain ones; skip the mask if it is
    # all True, as it is while a fleet has room everywhere.
    where = True if candidates == len(mask) else mask
    if candidates:
        for weigher in weighers:
            multiplier = weigher.multiplier()
            raw = weigher.raw(states, request) if multiplier else None
            if raw is None:
                continue
            low = raw.min(where=where, initial=np.inf)
            span = raw.max(where=where, initial=-np.inf) - low
            if span > 0:
                # multiplier * normalize(raw), in two passes.
                total += (raw - low) * (multiplier / span)
    total[~mask] = -np.inf
    return total
