"""BuildFailureWeigher: keep away from hosts that keep failing builds.

A host whose builds fail (a broken hypervisor, a full image cache) looks
empty to the resource weighers precisely because its builds fail, so
without this weigher it would attract every new server. The count is of
consecutive failures reported to the scheduler; a successful build on
the host resets it.
"""

from cellboot.scheduler.weighers import base


class BuildFailureWeigher(base.BaseWeigher):
    """Minus the host's failed builds; ``build_failure_weight_multiplier``."""

    multiplier_option = 'build_failure_weight_multiplier'

    def raw(self, states, request):
        if not states.failed_builds.any():
            return None
        return -states.failed_builds.astype(float)
