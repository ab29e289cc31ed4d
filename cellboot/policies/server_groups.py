"""Rules of ``/os-server-groups``: a project's own groups."""

from oslo_policy import policy

from cellboot.policies import base

PREFIX = 'os_compute_api:os-server-groups:%s'

CREATE = PREFIX % 'create'
INDEX = PREFIX % 'index'
SHOW = PREFIX % 'show'
DELETE = PREFIX % 'delete'

rules = [
    policy.DocumentedRuleDefault(
        CREATE, base.RULE_ADMIN_OR_OWNER,
        "Create a server group in the caller's project.",
        [{'method': 'POST', 'path': '/os-server-groups'}]),
    policy.DocumentedRuleDefault(
        INDEX, base.RULE_ADMIN_OR_OWNER,
        "List the server groups of the caller's project.",
        [{'method': 'GET', 'path': '/os-server-groups'}]),
    policy.DocumentedRuleDefault(
        SHOW, base.RULE_ADMIN_OR_OWNER,
        'Show a server group (and boot into it with the "group" hint), '
        'checked against the project that owns it: a group the caller '
        'may not see answers 404.',
        [{'method': 'GET', 'path': '/os-server-groups/{group_id}'}]),
    policy.DocumentedRuleDefault(
        DELETE, base.RULE_ADMIN_OR_OWNER,
        'Delete a server group, checked against the project that owns it.',
        [{'method': 'DELETE', 'path': '/os-server-groups/{group_id}'}]),
]


def list_rules():
    return rules
