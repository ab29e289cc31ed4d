"""Rules of ``/os-flows``: the persisted flows, for administrators."""

from oslo_policy import policy

from cellboot.policies import base

INDEX = 'cellboot:os-flows:index'
SHOW = 'cellboot:os-flows:show'

rules = [
    policy.DocumentedRuleDefault(
        INDEX, base.RULE_ADMIN_API,
        'List the persisted flows of every cell.',
        [{'method': 'GET', 'path': '/os-flows'}]),
    policy.DocumentedRuleDefault(
        SHOW, base.RULE_ADMIN_API,
        "Show one flow with each atom's state, timing and failure.",
        [{'method': 'GET', 'path': '/os-flows/{flow_id}'}]),
]


def list_rules():
    return rules
