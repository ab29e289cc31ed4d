"""Rules of ``/os-allocations``: a project's requests that are not
servers. Users act on their own project's; administrators on any
(``?all_tenants=1`` lists every project's)."""

from oslo_policy import policy

from cellboot.policies import base

PREFIX = 'cellboot:os-allocations:%s'

CREATE = PREFIX % 'create'
INDEX = PREFIX % 'index'
INDEX_ALL = PREFIX % 'index:all_tenants'
SHOW = PREFIX % 'show'
DELETE = PREFIX % 'delete'

_PATH = '/os-allocations'

rules = [
    policy.DocumentedRuleDefault(
        CREATE, base.RULE_ADMIN_OR_OWNER,
        "Place resources (no server) for the caller's project.",
        [{'method': 'POST', 'path': _PATH}]),
    policy.DocumentedRuleDefault(
        INDEX, base.RULE_ADMIN_OR_OWNER,
        "List the allocations of the caller's project.",
        [{'method': 'GET', 'path': _PATH}]),
    policy.DocumentedRuleDefault(
        INDEX_ALL, base.RULE_ADMIN_API,
        "List every project's allocations (all_tenants=1).",
        [{'method': 'GET', 'path': _PATH}]),
    policy.DocumentedRuleDefault(
        SHOW, base.RULE_ADMIN_OR_OWNER,
        'Show an allocation, checked against the project that owns it: '
        'one the caller may not see answers 404.',
        [{'method': 'GET', 'path': _PATH + '/{allocation_id}'}]),
    policy.DocumentedRuleDefault(
        DELETE, base.RULE_ADMIN_OR_OWNER,
        'Delete an allocation (its resources are released), checked '
        'against the project that owns it.',
        [{'method': 'DELETE', 'path': _PATH + '/{allocation_id}'}]),
]


def list_rules():
    return rules
