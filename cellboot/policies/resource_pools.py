"""Rules of ``/os-resource-pools``: shared pools, for administrators."""

from oslo_policy import policy

from cellboot.policies import base

INDEX = 'cellboot:os-resource-pools:index'
SHOW = 'cellboot:os-resource-pools:show'
CREATE = 'cellboot:os-resource-pools:create'
DELETE = 'cellboot:os-resource-pools:delete'

_PATH = '/os-resource-pools'

rules = [
    policy.DocumentedRuleDefault(
        INDEX, base.RULE_ADMIN_API,
        'List the shared resource pools with their usage.',
        [{'method': 'GET', 'path': _PATH}]),
    policy.DocumentedRuleDefault(
        SHOW, base.RULE_ADMIN_API, 'Show one shared resource pool.',
        [{'method': 'GET', 'path': _PATH + '/{pool_id}'}]),
    policy.DocumentedRuleDefault(
        CREATE, base.RULE_ADMIN_API, 'Create a shared resource pool.',
        [{'method': 'POST', 'path': _PATH}]),
    policy.DocumentedRuleDefault(
        DELETE, base.RULE_ADMIN_API,
        'Delete a shared resource pool that nothing uses.',
        [{'method': 'DELETE', 'path': _PATH + '/{pool_id}'}]),
]


def list_rules():
    return rules
