"""Host filters, enabled by name in ``[filter_scheduler] enabled_filters``.

The built-in filters are below; a dotted path names an out-of-tree
``base.BaseHostFilter`` subclass (see ``plugins``).
"""

from cellboot.scheduler.filters import affinity
from cellboot.scheduler.filters import availability_zone
from cellboot.scheduler.filters import base
from cellboot.scheduler.filters import cell
from cellboot.scheduler.filters import compute
from cellboot.scheduler.filters import resource
from cellboot.scheduler.filters import server_group
from cellboot.scheduler.filters import traits
from cellboot.scheduler import plugins

BUILTIN = {cls.__name__: cls for cls in (
    cell.CellFilter,
    availability_zone.AvailabilityZoneFilter,
    compute.ComputeFilter,
    resource.ResourceFilter,
    traits.TraitsFilter,
    affinity.SameHostFilter,
    affinity.DifferentHostFilter,
    server_group.ServerGroupAntiAffinityFilter,
    server_group.ServerGroupAffinityFilter,
)}


def load_filters(names):
    """Instances of the filters named, in order."""
    return plugins.load(names, BUILTIN, base.BaseHostFilter, 'filter')
