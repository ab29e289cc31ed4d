"""What a host filter is: a test that answers for every host at once.

A filter never sees one host at a time. ``host_mask`` returns a boolean
array over all host positions (True: the host may take one instance of
the request), computed with vectorized operations on the ``HostStates``
columns. A filter that can rule out whole cells from per-cell data
(``cell_mask``) lets the scheduler prune those cells before any per-host
work. Either may return None: "this request does not concern me", which
costs nothing.

Filters must not read databases: ``ScheduleRequest.resolve`` has already
turned the request's hints into provider uuids and host names.
"""


class BaseHostFilter:
    """A filter; subclasses override ``host_mask`` and/or ``cell_mask``."""

    @property
    def name(self):
        return type(self).__name__

    def cell_mask(self, states, request):
        """Booleans over cell codes (False prunes the cell), or None."""
        return None

    def host_mask(self, states, request):
        """Booleans over host positions, or None when not concerned."""
        return None

    def describe(self, request):
        """What the request asked of this filter, for NoValidHost."""
        return ''

    def explain(self, states, request, candidates):
        """Why the ``candidates`` (a host mask: those this filter was
        given) all failed, for NoValidHost; ``describe`` unless a filter
        can say more from the states."""
        return self.describe(request)
