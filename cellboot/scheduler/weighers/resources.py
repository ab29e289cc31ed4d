"""RAMWeigher, CPUWeigher, DiskWeigher: prefer free room, or the reverse.

Each scores a host by its free amount of one resource class (capacity
with allocation ratio, minus what is allocated). With a positive
multiplier the emptiest host wins (spread); with a negative one the
fullest host that still fits wins (pack).
"""

from cellboot.scheduler import host_state
from cellboot.scheduler.weighers import base


class _FreeResourceWeigher(base.BaseWeigher):
    resource = None

    def raw(self, states, request):
        return states.free[self.resource]


class RAMWeigher(_FreeResourceWeigher):
    """Free MEMORY_MB; ``ram_weight_multiplier``."""

    multiplier_option = 'ram_weight_multiplier'
    resource = host_state.MEMORY_MB


class CPUWeigher(_FreeResourceWeigher):
    """Free VCPU; ``cpu_weight_multiplier``."""

    multiplier_option = 'cpu_weight_multiplier'
    resource = host_state.VCPU


class DiskWeigher(_FreeResourceWeigher):
    """Free DISK_GB; ``disk_weight_multiplier``."""

    multiplier_option = 'disk_weight_multiplier'
    resource = host_state.DISK_GB
