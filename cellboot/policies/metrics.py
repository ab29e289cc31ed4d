"""The rule of ``GET /metrics`` on cellboot-api: administrators only.

The metrics name cells and count every project's boots together: what
an operator reads, not a tenant.
"""

from oslo_policy import policy

from cellboot.policies import base

SHOW = 'cellboot:metrics:show'

rules = [
    policy.DocumentedRuleDefault(
        SHOW, base.RULE_ADMIN_API,
        'Read the API process\'s Prometheus metrics (outside /v2.1).',
        [{'method': 'GET', 'path': '/metrics'}]),
]


def list_rules():
    return rules
