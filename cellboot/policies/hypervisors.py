"""Rules of ``/os-hypervisors``: the compute hosts, for administrators."""

from oslo_policy import policy

from cellboot.policies import base

LIST_DETAIL = 'os_compute_api:os-hypervisors:list-detail'

rules = [
    policy.DocumentedRuleDefault(
        LIST_DETAIL, base.RULE_ADMIN_API,
        'List the compute hosts with their cell, usage and capacity.',
        [{'method': 'GET', 'path': '/os-hypervisors/detail'}]),
]


def list_rules():
    return rules
