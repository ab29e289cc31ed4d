"""Rules of ``/os-zones``: the levels above cells, for administrators."""

from oslo_policy import policy

from cellboot.policies import base

INDEX = 'cellboot:os-zones:index'
SHOW = 'cellboot:os-zones:show'

rules = [
    policy.DocumentedRuleDefault(
        INDEX, base.RULE_ADMIN_API,
        'List the zones, each with its cells, zones and aggregate.',
        [{'method': 'GET', 'path': '/os-zones'}]),
    policy.DocumentedRuleDefault(
        SHOW, base.RULE_ADMIN_API,
        'Show one zone with its cells, zones and aggregate.',
        [{'method': 'GET', 'path': '/os-zones/{zone_id}'}]),
]


def list_rules():
    return rules
