"""Default rules of cellboot's API, in code, one module per resource.

``list_rules()`` is the ``oslo.policy.policies`` entry point: what
``cellboot.policy`` registers on its enforcer, and what
``oslopolicy-sample-generator --namespace cellboot`` writes into the
sample policy file. A rule's name says what it guards
(``os_compute_api:...`` where Nova has the same API, ``cellboot:...``
where it does not); a policy file overrides any of them.
"""

import itertools

from cellboot.policies import allocations
from cellboot.policies import base
from cellboot.policies import cells
from cellboot.policies import flavors
from cellboot.policies import flows
from cellboot.policies import hypervisors
from cellboot.policies import instance_actions
from cellboot.policies import metrics
from cellboot.policies import quota_sets
from cellboot.policies import resource_catalog
from cellboot.policies import resource_pools
from cellboot.policies import server_groups
from cellboot.policies import servers
from cellboot.policies import zones

MODULES = (base, servers, flavors, server_groups, hypervisors, cells,
           zones, resource_pools, flows, quota_sets, resource_catalog,
           allocations, instance_actions, metrics)


def list_rules():
    return list(itertools.chain.from_iterable(
        module.list_rules() for module in MODULES))
