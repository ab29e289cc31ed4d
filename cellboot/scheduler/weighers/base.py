"""What a weigher is, and how weights from several weighers combine.

Each weigher scores the hosts that passed the filters with one raw number
per host (free RAM, free vCPUs, ...). Raw scores of different weighers
are in different units, so before they are added each is normalized to
0..1 across the hosts being weighed (the lowest raw score becomes 0, the
highest 1; all equal becomes all 0) and multiplied by the weigher's
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

    def raw(self, states, positions, request):
        """Raw scores of the hosts at ``positions`` (higher is better
        before the multiplier), or None when all would be equal."""
        raise NotImplementedError


def normalize(values):
    """``values`` scaled to 0..1 (lowest 0, highest 1; all equal: 0)."""
    low = values.min()
    span = values.max() - low
    if span <= 0:
        return np.zeros(len(values))
    return (values - low) / span


def weigh(states, positions, request, weighers):
    """The combined weight of each host at ``positions`` (higher wins)."""
    total = np.zeros(len(positions))
    if not len(positions):
        return total
    for weigher in weighers:
        multiplier = weigher.multiplier()
        if not multiplier:
            continue
        raw = weigher.raw(states, positions, request)
        if raw is None:
            continue
        total += multiplier * normalize(raw)
    return total
