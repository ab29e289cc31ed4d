"""Rules of ``/os-flows``: the persisted flows, for administrators."""

from oslo_policy import policy

from cellboot.policies import base

INDEX = 'cellboot:os-flows:index'
SHOW = 'cellboot:os-flows:show'
ACTION = 'cellboot:os-flows:action'

rules = [
    policy.DocumentedRuleDefault(
        INDEX, base.RULE_ADMIN_API,
        'List the persisted flows of every cell.',
        [{'method': 'GET', 'path': '/os-flows'}]),
    policy.DocumentedRuleDefault(
        SHOW, base.RULE_ADMIN_API,
        "Show one flow with each atom's state, timing and failure.",
        [{'method': 'GET', 'path': '/os-flows/{flow_id}'}]),
    policy.DocumentedRuleDefault(
        ACTION, base.RULE_ADMIN_API,
        'Act on a flow: retry a FAILURE or stuck flow (handed back to '
        'the conductors), or abandon it (ended for good, its instances '
        'settled in ERROR).',
        [{'method': 'POST', 'path': '/os-flows/{flow_id}/action'}]),
]


def list_rules():
    return rules
