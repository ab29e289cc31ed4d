"""Rules of ``/flavors``: anyone reads them, administrators create them."""

from oslo_policy import policy

from cellboot.policies import base

INDEX = 'cellboot:flavors:index'
SHOW = 'cellboot:flavors:show'
CREATE = 'os_compute_api:os-flavor-manage:create'

rules = [
    policy.DocumentedRuleDefault(
        INDEX, '@', 'List the flavors (anyone with a token).',
        [{'method': 'GET', 'path': '/flavors'}]),
    policy.DocumentedRuleDefault(
        SHOW, '@', 'Show a flavor (anyone with a token).',
        [{'method': 'GET', 'path': '/flavors/{flavor_id}'}]),
    policy.DocumentedRuleDefault(
        CREATE, base.RULE_ADMIN_API, 'Create a flavor.',
        [{'method': 'POST', 'path': '/flavors'}]),
]


def list_rules():
    return rules
