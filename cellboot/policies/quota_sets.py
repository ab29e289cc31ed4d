"""Rules of ``/os-quota-sets``: a project reads its quotas, admins set them.

Each rule is checked against the project named in the path, so that the
owner rule lets a user read only their own project's limits.
"""

from oslo_policy import policy

from cellboot.policies import base

PREFIX = 'os_compute_api:os-quota-sets:%s'

SHOW = PREFIX % 'show'
DETAIL = PREFIX % 'detail'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'

rules = [
    policy.DocumentedRuleDefault(
        SHOW, base.RULE_ADMIN_OR_OWNER,
        "Show a project's quotas, checked against that project.",
        [{'method': 'GET', 'path': '/os-quota-sets/{project_id}'}]),
    policy.DocumentedRuleDefault(
        DETAIL, base.RULE_ADMIN_OR_OWNER,
        "Show a project's quotas and what it uses, checked against that "
        "project.",
        [{'method': 'GET', 'path': '/os-quota-sets/{project_id}/detail'}]),
    policy.DocumentedRuleDefault(
        UPDATE, base.RULE_ADMIN_API,
        "Change a project's quotas.",
        [{'method': 'PUT', 'path': '/os-quota-sets/{project_id}'}]),
    policy.DocumentedRuleDefault(
        DELETE, base.RULE_ADMIN_API,
        "Give a project the default quotas back.",
        [{'method': 'DELETE', 'path': '/os-quota-sets/{project_id}'}]),
]


def list_rules():
    return rules
