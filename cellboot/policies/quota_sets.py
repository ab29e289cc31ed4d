"""Rules of ``/os-quota-sets``: a project reads its quotas, admins set them.

Registered ahead of the paths that use them, so that an operator's
policy file can name them from the start.
"""

from oslo_policy import policy

from cellboot.policies import base

PREFIX = 'os_compute_api:os-quota-sets:%s'

SHOW = PREFIX % 'show'
UPDATE = PREFIX % 'update'

rules = [
    policy.DocumentedRuleDefault(
        SHOW, base.RULE_ADMIN_OR_OWNER,
        "Show a project's quotas, checked against that project.",
        [{'method': 'GET', 'path': '/os-quota-sets/{project_id}'}]),
    policy.DocumentedRuleDefault(
        UPDATE, base.RULE_ADMIN_API,
        "Change a project's quotas.",
        [{'method': 'PUT', 'path': '/os-quota-sets/{project_id}'}]),
]


def list_rules():
    return rules
