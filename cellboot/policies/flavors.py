"""Rules of ``/flavors`` and their extra specs: anyone reads them,
administrators create and change them."""

from oslo_policy import policy

from cellboot.policies import base

INDEX = 'cellboot:flavors:index'
SHOW = 'cellboot:flavors:show'
CREATE = 'os_compute_api:os-flavor-manage:create'
EXTRA_SPECS_INDEX = 'os_compute_api:os-flavor-extra-specs:index'
EXTRA_SPECS_SHOW = 'os_compute_api:os-flavor-extra-specs:show'
EXTRA_SPECS_CREATE = 'os_compute_api:os-flavor-extra-specs:create'
EXTRA_SPECS_UPDATE = 'os_compute_api:os-flavor-extra-specs:update'
EXTRA_SPECS_DELETE = 'os_compute_api:os-flavor-extra-specs:delete'

_SPECS = '/flavors/{flavor_id}/os-extra_specs'
_SPEC = _SPECS + '/{key}'

rules = [
    policy.DocumentedRuleDefault(
        INDEX, '@', 'List the flavors (anyone with a token).',
        [{'method': 'GET', 'path': '/flavors'}]),
    policy.DocumentedRuleDefault(
        SHOW, '@', 'Show a flavor (anyone with a token).',
        [{'method': 'GET', 'path': '/flavors/{flavor_id}'}]),
    policy.DocumentedRuleDefault(
        CREATE, base.RULE_ADMIN_API, 'Create a flavor.',
        [{'method': 'POST', 'path': '/flavors'}]),
    policy.DocumentedRuleDefault(
        EXTRA_SPECS_INDEX, '@', "List a flavor's extra specs (anyone with a "
                                "token).",
        [{'method': 'GET', 'path': _SPECS}]),
    policy.DocumentedRuleDefault(
        EXTRA_SPECS_SHOW, '@', "Show one of a flavor's extra specs (anyone "
                               "with a token).",
        [{'method': 'GET', 'path': _SPEC}]),
    policy.DocumentedRuleDefault(
        EXTRA_SPECS_CREATE, base.RULE_ADMIN_API,
        "Set some of a flavor's extra specs.",
        [{'method': 'POST', 'path': _SPECS}]),
    policy.DocumentedRuleDefault(
        EXTRA_SPECS_UPDATE, base.RULE_ADMIN_API,
        "Set one of a flavor's extra specs.",
        [{'method': 'PUT', 'path': _SPEC}]),
    policy.DocumentedRuleDefault(
        EXTRA_SPECS_DELETE, base.RULE_ADMIN_API,
        "Remove one of a flavor's extra specs.",
        [{'method': 'DELETE', 'path': _SPEC}]),
]


def list_rules():
    return rules
