"""``/os-resource-pools``: shared pools (``cellboot.scheduler.pools``).

Administrators only, by default (``cellboot.policies.resource_pools``).
The records module checks what JSON Schema cannot (a class or trait
name, an unknown cell or zone, a taken name) and its errors are 400,
404 and 409 as they are.
"""

from cellboot.api import errors
from cellboot.api import pagination
from cellboot.api import schemas
from cellboot.scheduler.pools import records

_AMOUNT = {'type': 'integer', 'minimum': 0, 'maximum': 2 ** 31 - 1}
_NAMES = {'type': 'array', 'maxItems': 1000,
          'items': dict(schemas.QUERY_TEXT, minLength=1, maxLength=255)}

POOL_CREATE = {
    'type': 'object',
    'properties': {
        'resource_pool': {
            'type': 'object',
            'properties': {
                'name': schemas.POOL_NAME,
                'inventories': {
                    'type': 'object', 'minProperties': 1,
                    'maxProperties': 100,
                    'propertyNames': {'maxLength': 255},
                    'additionalProperties': {
                        'type': 'object',
                        'properties': {
                            'total': dict(_AMOUNT, minimum=1),
                            'reserved': _AMOUNT,
                            'min_unit': dict(_AMOUNT, minimum=1),
                            'max_unit': dict(_AMOUNT, minimum=1),
                            'step_size': dict(_AMOUNT, minimum=1),
                            'allocation_ratio': {
                                'type': 'number', 'exclusiveMinimum': 0,
                                'maximum': 1000},
                        },
                        'required': ['total'],
                        'additionalProperties': False,
                    },
                },
                'traits': _NAMES, 'cells': _NAMES, 'zones': _NAMES,
            },
            'required': ['name', 'inventories'],
            'additionalProperties': False,
        },
    },
    'required': ['resource_pool'],
    'additionalProperties': False,
    'examples': [{'resource_pool': {
        'name': 'shared-disk', 'inventories': {'DISK_GB': {'total': 10000}},
        'cells': ['cell1', 'cell2']}}],
}


def view(pool):
    """The JSON of a pool (``records.get_pool``), its uuid as ``id``."""
    shown = {key: value for key, value in pool.items() if key != 'uuid'}
    shown['id'] = pool['uuid']
    return shown


def index(api, request, context):
    """The pools by name, a page at a time; the marker is a pool uuid."""
    page = pagination.from_request(request)
    items, more = page.split(records.list_pools(
        context, limit=page.limit + 1, marker=page.marker))
    last = items[-1]['uuid'] if items else None
    return errors.json_response(200, dict(
        {'resource_pools': [view(item) for item in items]},
        **pagination.links(request, 'resource_pools', page, last, more)))


def show(api, request, context, pool_id):
    """One pool, named by uuid or name."""
    return errors.json_response(
        200, {'resource_pool': view(records.get_pool(context, pool_id))})


def create(api, request, context):
    body = schemas.validate(POOL_CREATE,
                            schemas.parse_json(request))['resource_pool']
    pool = records.create_pool(
        context, body['name'], body['inventories'],
        traits=body.get('traits', []), cells=body.get('cells', []),
        zones=body.get('zones', []))
    return errors.json_response(200, {'resource_pool': view(pool)})


def delete(api, request, context, pool_id):
    records.delete_pool(context, pool_id)
    return errors.json_response(204)
