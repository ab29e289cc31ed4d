"""Rules of ``/os-cells``: the cell mappings, for administrators."""

from oslo_policy import policy

from cellboot.policies import base

INDEX = 'cellboot:os-cells:index'

rules = [
    policy.DocumentedRuleDefault(
        INDEX, base.RULE_ADMIN_API, 'List the cells.',
        [{'method': 'GET', 'path': '/os-cells'}]),
]


def list_rules():
    return rules
