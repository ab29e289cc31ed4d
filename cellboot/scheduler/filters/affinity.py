"""SameHostFilter and DifferentHostFilter: place near or away from servers.

Both read the ``same_host`` / ``different_host`` hints, lists of instance
uuids that ``ScheduleRequest.resolve`` turned into the resource providers
where those instances hold allocations.
"""

from cellboot.scheduler.filters import base


class SameHostFilter(base.BaseHostFilter):
    """Passes only the hosts of the instances named by ``same_host``.

    If none of them holds an allocation anywhere, no host passes: the
    request cannot be honoured.
    """

    def host_mask(self, states, request):
        if not request.same_host:
            return None
        return states.mask_of(states.positions(request.same_host_providers))

    def describe(self, request):
        return f'same_host: on a host of {", ".join(request.same_host)}'


class DifferentHostFilter(base.BaseHostFilter):
    """Passes every host but those of the ``different_host`` instances."""

    def host_mask(self, states, request):
        if not request.different_host:
            return None
        return ~states.mask_of(
            states.positions(request.different_host_providers))

    def describe(self, request):
        return ('different_host: on no host of '
                f'{", ".join(request.different_host)}')
