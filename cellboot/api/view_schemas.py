"""JSON schemas of the response bodies: what ``views`` produces.

One schema per representation, next to each other per resource, so
that a key added to a view (or to a list, e.g. pagination links) has
one place to be described. Objects are closed (``additionalProperties:
false``): a key the document does not name is a disagreement between
the API and its document, which the schemathesis test and
``tests/functional/api/test_view_schemas.py`` catch.

These are the representations the REST API's users read; those only
administrators read (hypervisors, cells, zones, resource pools, flows)
are in ``admin_view_schemas``, and both are built from
``schema_shapes``.
"""

from cellboot.api import schema_shapes as shapes
from cellboot import quota

_string = shapes.STRING
_nullable_string = shapes.NULLABLE_STRING
_count = shapes.COUNT
_closed = shapes.closed
_list = shapes.listing
_BY_CLASS = shapes.BY_CLASS
_NAME_LIST = shapes.NAME_LIST

LINKS = shapes.LINKS


# -- versions ----------------------------------------------------------------

VERSION = _closed({'version': _closed({
    'id': _string, 'status': {'enum': ['CURRENT']}, 'links': LINKS})})

OPENAPI = {'type': 'object', 'required': ['openapi', 'info', 'paths']}

# -- servers -----------------------------------------------------------------

SERVER_STATUS = ['BUILD', 'ACTIVE', 'ERROR', 'DELETED', 'UNKNOWN']

SERVER_SUMMARY = _closed({'id': _string, 'name': _nullable_string,
                          'links': LINKS})

_FAULT = _closed({
    'code': {'type': 'integer'},
    'message': _string,
    'created': _nullable_string,
    'details': dict(_nullable_string, description='Administrators only.'),
}, required=['code', 'message', 'created'])

# What every server read from its build request or its cell shows;
# ``required`` below lists the keys present for everyone.
_SERVER_FIELDS = {
    'id': _string,
    'name': _nullable_string,
    'status': {'enum': SERVER_STATUS},
    'tenant_id': _string,
    'user_id': _nullable_string,
    'flavor': _closed({'id': _nullable_string,
                       'original_name': _nullable_string}),
    'image': {'anyOf': [_closed({'id': _string}), {'const': ''}],
              'description': "The image, or '' when booted without one."},
    'metadata': {'type': 'object', 'additionalProperties': _string},
    'OS-EXT-AZ:availability_zone': _string,
    'reservation_id': _nullable_string,
    'created': _nullable_string,
    'updated': _nullable_string,
    'links': LINKS,
    'launched_at': dict(_nullable_string,
                        description='Once the server is in its cell.'),
    'fault': dict(_FAULT, description='When the status is ERROR.'),
    'OS-EXT-SRV-ATTR:host': dict(_nullable_string,
                                 description='Administrators only.'),
    'OS-EXT-SRV-ATTR:hypervisor_hostname': dict(
        _nullable_string, description='Administrators only, once the '
                                      'server is in its cell.'),
    'cellboot:cell': dict(_nullable_string,
                          description='Administrators only.'),
}

_SERVER_IN_FULL = _closed(_SERVER_FIELDS, required=[
    'id', 'name', 'status', 'tenant_id', 'user_id', 'flavor', 'image',
    'metadata', 'OS-EXT-AZ:availability_zone', 'reservation_id', 'created',
    'updated', 'links'])

# A server whose cell did not answer: all that the API database knows.
_SERVER_UNREACHABLE = _closed({'id': _string,
                               'status': {'const': 'UNKNOWN'},
                               'links': LINKS})

SERVER = {'anyOf': [_SERVER_IN_FULL, _SERVER_UNREACHABLE]}

SERVER_ONE = _closed({'server': SERVER})

SERVERS = _list('servers', SERVER_SUMMARY)

SERVERS_DETAIL = _list('servers', SERVER)

SERVER_CREATED = _closed({
    'server': _closed({'id': _string, 'reservation_id': _string,
                       'links': LINKS}),
    'reservation_id': dict(_string, description='Multi-create only.'),
    'servers': dict(_list('servers', _closed({'id': _string}))[
        'properties']['servers'], description='Multi-create only: every '
                                              'server of the request.'),
}, required=['server'])

# -- instance actions --------------------------------------------------------

_INSTANCE_ACTION = {
    'action': _string, 'instance_uuid': _string,
    'request_id': _nullable_string, 'user_id': _nullable_string,
    'project_id': _nullable_string, 'start_time': _nullable_string,
    'message': dict(_nullable_string,
                    description="'Error' when one of its events failed."),
    'updated_at': _nullable_string,
}

INSTANCE_ACTIONS = _list('instanceActions', _closed(_INSTANCE_ACTION))

_ADMINS_ONLY = 'Administrators only (the event details policy).'

_INSTANCE_ACTION_EVENT = _closed({
    'event': dict(_string, description='CELL:EVENT, for administrators, '
                                       'for an event carried from a cell '
                                       'the server left.'),
    'start_time': _nullable_string, 'finish_time': _nullable_string,
    'result': _nullable_string,
    'message': dict(_nullable_string,
                    description='Why it happened, in words for users.'),
    'host': dict(_nullable_string, description=_ADMINS_ONLY),
    'details': dict(_nullable_string, description=_ADMINS_ONLY),
    'traceback': dict(_nullable_string, description=_ADMINS_ONLY),
}, required=['event', 'start_time', 'finish_time', 'result', 'message'])

INSTANCE_ACTION_ONE = _closed({'instanceAction': _closed(dict(
    _INSTANCE_ACTION, events={'type': 'array',
                              'items': _INSTANCE_ACTION_EVENT}))})

# -- flavors -----------------------------------------------------------------

FLAVOR = _closed({
    'id': _string, 'name': _string, 'vcpus': _count, 'ram': _count,
    'disk': _count, 'description': _nullable_string,
    'os-flavor-access:is_public': {'type': 'boolean'},
    'extra_specs': {'type': 'object', 'additionalProperties': _string},
    'links': LINKS})

FLAVOR_ONE = _closed({'flavor': FLAVOR})

FLAVORS = _list('flavors', FLAVOR)

EXTRA_SPECS = _closed({'extra_specs': {
    'type': 'object', 'additionalProperties': _string}})

EXTRA_SPEC_ONE = {'type': 'object', 'minProperties': 1, 'maxProperties': 1,
                  'additionalProperties': _string,
                  'description': '{key: value} of one extra spec.'}

# -- resource classes, traits, providers -------------------------------------

_CATALOG_NAME = _closed({'name': _string, 'custom': {'type': 'boolean'}})

RESOURCE_CLASSES = _list('resource_classes', _CATALOG_NAME)

RESOURCE_CLASS_ONE = _closed({'resource_class': _CATALOG_NAME})

TRAITS = _list('traits', _CATALOG_NAME)

TRAIT_ONE = _closed({'trait': _CATALOG_NAME})

_INVENTORY = _closed({
    'total': _count, 'reserved': _count,
    'allocation_ratio': {'type': 'number'}, 'min_unit': _count,
    'max_unit': _count, 'step_size': _count,
    'used': dict(_count, description='Allocated now.')})

RESOURCE_PROVIDER = _closed({
    'uuid': _string, 'name': _string, 'kind': {'enum': ['host', 'pool']},
    'cell': dict(_string, description='Hosts: their cell.'),
    'availability_zone': dict(_nullable_string,
                              description='Hosts: their zone.'),
    'serves': dict(_closed({'cells': {'type': 'array', 'items': _string},
                            'zones': {'type': 'array', 'items': _string}}),
                   description='Pools: the cells and zones they serve.'),
    'inventories': {'type': 'object', 'additionalProperties': _INVENTORY},
    'traits': {'type': 'array', 'items': _string},
}, required=['uuid', 'name', 'kind', 'inventories', 'traits'])

RESOURCE_PROVIDERS = _list(
    'resource_providers', RESOURCE_PROVIDER,
    unreachable=dict({'type': 'array', 'items': _string}, description=(
        'Cells whose database did not answer: their hosts are left '
        'out.')))

PROVIDER_TRAITS = _closed({
    'resource_provider_uuid': _string,
    'traits': {'type': 'array', 'items': _string}})

# -- server groups -----------------------------------------------------------

SERVER_GROUP = _closed({
    'id': _string, 'name': _string,
    'policy': {'enum': ['affinity', 'anti-affinity']},
    'members': {'type': 'array', 'items': _string},
    'project_id': _string, 'user_id': _nullable_string})

SERVER_GROUP_ONE = _closed({'server_group': SERVER_GROUP})

SERVER_GROUPS = _list('server_groups', SERVER_GROUP)

# -- allocation requests -----------------------------------------------------

_UUID_LIST = {'type': 'array', 'items': _string}

ALLOCATION = _closed({
    'id': _string,
    'status': {'enum': ['placing', 'placed', 'settling', 'deleting']},
    'resources': dict(_BY_CLASS, description='Amounts held, by class.'),
    'required_traits': _NAME_LIST, 'forbidden_traits': _NAME_LIST,
    'near': _UUID_LIST, 'far': _UUID_LIST,
    'availability_zone': _nullable_string,
    'provider': {'oneOf': [{'type': 'null'}, _closed({
        'uuid': _string, 'name': _nullable_string,
        'kind': {'enum': ['pool', 'host']}})]},
    'cell': dict(_nullable_string, description='A host\'s cell; null for '
                                               'a pool.'),
    'project_id': _string, 'user_id': _nullable_string,
    'created_at': dict(_nullable_string, description='ISO 8601'),
})

ALLOCATIONS = _list('allocations', ALLOCATION)

ALLOCATION_ONE = _closed({'allocation': ALLOCATION})

# -- quotas ------------------------------------------------------------------

_limit = {'type': 'integer', 'minimum': -1,
          'description': '-1: unlimited'}

QUOTA_SET_ONE = _closed({'quota_set': dict(_closed(dict(
    {'id': _string}, **{resource: _limit for resource in quota.RESOURCES})),
    additionalProperties=dict(_limit, description=(
        'The limit of a resource class for allocation requests, where '
        'one was set for the project.')))})

QUOTA_SET_DETAIL = _closed({'quota_set': _closed(dict(
    {'id': _string}, **{resource: _closed({
        'limit': _limit, 'in_use': _count, 'reserved': {'const': 0}})
        for resource in quota.RESOURCES}))})

# -- errors ------------------------------------------------------------------

ERROR = {
    'type': 'object',
    'description': "Nova's shape: one key naming the kind of error, e.g. "
                   '{"badRequest": {"code": 400, "message": "..."}}.',
    'minProperties': 1, 'maxProperties': 1,
    'additionalProperties': _closed({'code': {'type': 'integer'},
                                     'message': _string}),
}
