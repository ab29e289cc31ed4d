"""Host weighers, enabled by name in ``[filter_scheduler] enabled_weighers``.

The built-in weighers are below; a dotted path names an out-of-tree
``base.BaseWeigher`` subclass (see ``plugins``).
"""

from cellboot.scheduler import plugins
from cellboot.scheduler.weighers import base
from cellboot.scheduler.weighers import build_failure
from cellboot.scheduler.weighers import resources

BUILTIN = {cls.__name__: cls for cls in (
    resources.RAMWeigher,
    resources.CPUWeigher,
    resources.DiskWeigher,
    build_failure.BuildFailureWeigher,
)}


def load_weighers(names):
    """Instances of the weighers named, in order."""
    return plugins.load(names, BUILTIN, base.BaseWeigher, 'weigher')
