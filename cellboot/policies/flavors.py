"""Rules of ``/flavors``: anyone reads them, administrators create them."""

from oslo_policy import policy

from cellboot.policies import base

CREATE = 'os_compute_api:os-flavor-manage:create'

rules = [
    policy.DocumentedRuleDefault(
        CREATE, base.RULE_ADMIN_API, 'Create a flavor.',
        [{'method': 'POST', 'path': '/flavors'}]),
]


def list_rules():
    return rules
