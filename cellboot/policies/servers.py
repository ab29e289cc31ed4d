"""Rules of ``/servers``, and of what a server's views disclose."""

from oslo_policy import policy

from cellboot.policies import base

PREFIX = 'os_compute_api:servers:%s'

INDEX = PREFIX % 'index'
DETAIL = PREFIX % 'detail'
INDEX_ALL_TENANTS = PREFIX % 'index:get_all_tenants'
INDEX_HOST_FILTER = PREFIX % 'allow_all_filters'
SHOW = PREFIX % 'show'
CREATE = PREFIX % 'create'
DELETE = PREFIX % 'delete'
CREATE_TARGET_CELL = 'cellboot:servers:create:target_cell'
EXTENDED_ATTRIBUTES = 'os_compute_api:os-extended-server-attributes'
FAULT_DETAILS = 'cellboot:servers:fault:details'

rules = [
    policy.DocumentedRuleDefault(
        INDEX, base.RULE_ADMIN_OR_OWNER,
        "List the servers of one's project.",
        [{'method': 'GET', 'path': '/servers'}]),
    policy.DocumentedRuleDefault(
        DETAIL, base.RULE_ADMIN_OR_OWNER,
        "List the servers of one's project with their details.",
        [{'method': 'GET', 'path': '/servers/detail'}]),
    policy.DocumentedRuleDefault(
        INDEX_ALL_TENANTS, base.RULE_ADMIN_API,
        'List the servers of every project (all_tenants=1), or of the '
        'one project_id names; others are answered 403.',
        [{'method': 'GET', 'path': '/servers'},
         {'method': 'GET', 'path': '/servers/detail'}]),
    policy.DocumentedRuleDefault(
        INDEX_HOST_FILTER, base.RULE_ADMIN_API,
        'Filter the server lists by compute host (host=); others are '
        'answered 403 rather than have the filter dropped.',
        [{'method': 'GET', 'path': '/servers'},
         {'method': 'GET', 'path': '/servers/detail'}]),
    policy.DocumentedRuleDefault(
        SHOW, base.RULE_ADMIN_OR_OWNER,
        'Show a server. Checked against the project that owns the server: '
        'a server the caller may not see answers 404, as one that does '
        'not exist.',
        [{'method': 'GET', 'path': '/servers/{server_id}'}]),
    policy.DocumentedRuleDefault(
        CREATE, base.RULE_ADMIN_OR_OWNER,
        'Boot servers in the caller\'s project.',
        [{'method': 'POST', 'path': '/servers'}]),
    policy.DocumentedRuleDefault(
        CREATE_TARGET_CELL, base.RULE_ADMIN_API,
        'Boot with the "target_cell" scheduler hint, which chooses the '
        'cell (the topology of the deployment is the administrators\').',
        [{'method': 'POST', 'path': '/servers'}]),
    policy.DocumentedRuleDefault(
        DELETE, base.RULE_ADMIN_OR_OWNER,
        'Delete a server, checked against the project that owns it.',
        [{'method': 'DELETE', 'path': '/servers/{server_id}'}]),
    policy.DocumentedRuleDefault(
        EXTENDED_ATTRIBUTES, base.RULE_ADMIN_API,
        'See where a server runs: OS-EXT-SRV-ATTR:host, '
        'OS-EXT-SRV-ATTR:hypervisor_hostname and cellboot:cell.',
        [{'method': 'GET', 'path': '/servers/{server_id}'},
         {'method': 'GET', 'path': '/servers/detail'}]),
    policy.DocumentedRuleDefault(
        FAULT_DETAILS, base.RULE_ADMIN_API,
        "See a failed server's fault as the services wrote it (host "
        'names, internal errors) and its details; others see a message '
        'fit for users.',
        [{'method': 'GET', 'path': '/servers/{server_id}'},
         {'method': 'GET', 'path': '/servers/detail'}]),
]


def list_rules():
    return rules
