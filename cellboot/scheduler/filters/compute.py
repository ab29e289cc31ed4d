"""ComputeFilter: only hosts whose compute service is enabled and up."""

from cellboot.conf import CONF
from cellboot.scheduler.filters import base


class ComputeFilter(base.BaseHostFilter):
    """Passes hosts whose service is enabled and heartbeating.

    Up means a heartbeat within ``[scheduler] service_down_time`` of the
    moment its cell was last loaded (see ``HostStates.up_mask``). A host
    without a service row has never heartbeated and counts as down.
    """

    def host_mask(self, states, request):
        down_time = CONF.scheduler.service_down_time
        return states.memoized(
            ('compute', down_time),
            lambda: states.enabled & states.up_mask(down_time))

    def describe(self, request):
        return ('needs an enabled compute service that reported within '
                f'{CONF.scheduler.service_down_time} s')
