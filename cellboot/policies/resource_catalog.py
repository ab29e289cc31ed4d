"""Rules of ``/os-resource-classes``, ``/os-traits`` and
``/os-resource-providers``: the names flavors may use and the providers
that offer them, for administrators."""

from oslo_policy import policy

from cellboot.policies import base

CLASS_INDEX = 'cellboot:os-resource-classes:index'
CLASS_SHOW = 'cellboot:os-resource-classes:show'
CLASS_CREATE = 'cellboot:os-resource-classes:create'
CLASS_DELETE = 'cellboot:os-resource-classes:delete'
TRAIT_INDEX = 'cellboot:os-traits:index'
TRAIT_SHOW = 'cellboot:os-traits:show'
TRAIT_UPDATE = 'cellboot:os-traits:update'
TRAIT_DELETE = 'cellboot:os-traits:delete'
PROVIDER_INDEX = 'cellboot:os-resource-providers:index'
PROVIDER_TRAITS_SHOW = 'cellboot:os-resource-providers:traits:show'
PROVIDER_TRAITS_UPDATE = 'cellboot:os-resource-providers:traits:update'
PROVIDER_TRAITS_DELETE = 'cellboot:os-resource-providers:traits:delete'

_CLASSES = '/os-resource-classes'
_CLASS = _CLASSES + '/{name}'
_TRAITS = '/os-traits'
_TRAIT = _TRAITS + '/{name}'
_HOST_TRAITS = '/os-resource-providers/{uuid}/traits'


def _rule(name, description, method, path):
    return policy.DocumentedRuleDefault(
        name, base.RULE_ADMIN_API, description,
        [{'method': method, 'path': path}])


rules = [
    _rule(CLASS_INDEX, 'List the standard and custom resource classes.',
          'GET', _CLASSES),
    _rule(CLASS_SHOW, 'Show one resource class.', 'GET', _CLASS),
    _rule(CLASS_CREATE, 'Create a custom resource class.', 'POST',
          _CLASSES),
    _rule(CLASS_DELETE, 'Delete a custom resource class no flavor or pool '
                        'uses.', 'DELETE', _CLASS),
    _rule(TRAIT_INDEX, 'List the standard and custom traits.', 'GET',
          _TRAITS),
    _rule(TRAIT_SHOW, 'Show one trait.', 'GET', _TRAIT),
    _rule(TRAIT_UPDATE, 'Create a custom trait.', 'PUT', _TRAIT),
    _rule(TRAIT_DELETE, 'Delete a custom trait no flavor or pool uses.',
          'DELETE', _TRAIT),
    _rule(PROVIDER_INDEX, "List the cells' hosts and the shared pools with "
                          "their inventories, usage and traits.", 'GET',
          '/os-resource-providers'),
    _rule(PROVIDER_TRAITS_SHOW, "Show a compute host's traits.", 'GET',
          _HOST_TRAITS),
    _rule(PROVIDER_TRAITS_UPDATE, "Replace a compute host's traits.",
          'PUT', _HOST_TRAITS),
    _rule(PROVIDER_TRAITS_DELETE, "Take every trait from a compute host.",
          'DELETE', _HOST_TRAITS),
]


def list_rules():
    return rules
