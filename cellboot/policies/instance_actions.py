"""Rules of ``/servers/{id}/os-instance-actions``: a server's history.

Reading the actions is the owner's right, like reading the server; the
events' ``host``, ``details`` and ``traceback`` name hosts and the
services' errors, so only administrators read them, as a fault's
details (``cellboot:servers:fault:details``).
"""

from oslo_policy import policy

from cellboot.policies import base

PREFIX = 'os_compute_api:os-instance-actions:%s'

LIST = PREFIX % 'list'
SHOW = PREFIX % 'show'
EVENTS_DETAILS = PREFIX % 'events:details'

_ACTIONS = '/servers/{server_id}/os-instance-actions'

rules = [
    policy.DocumentedRuleDefault(
        LIST, base.RULE_ADMIN_OR_OWNER,
        "List a server's actions. Checked against the project that owns "
        'the server: a server the caller may not see answers 404.',
        [{'method': 'GET', 'path': _ACTIONS}]),
    policy.DocumentedRuleDefault(
        SHOW, base.RULE_ADMIN_OR_OWNER,
        "Show one of a server's actions with its events, from every cell "
        'the server went through.',
        [{'method': 'GET', 'path': _ACTIONS + '/{request_id}'}]),
    policy.DocumentedRuleDefault(
        EVENTS_DETAILS, base.RULE_ADMIN_API,
        "See an event's host, details and traceback: the failure as the "
        'services wrote it. Others read a sentence fit for users.',
        [{'method': 'GET', 'path': _ACTIONS + '/{request_id}'}]),
]


def list_rules():
    return rules
