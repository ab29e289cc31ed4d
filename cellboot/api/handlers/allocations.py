"""``/os-allocations``: requests that are not servers.

A project asks for resources (classes, amounts, traits) that one
provider -- a shared pool or a host -- gives it, with no server
(``cellboot.scheduler.allocations``). The JSON Schema bounds the shapes;
``allocations.checked`` checks what it cannot (class and trait names,
the catalog, VCPU/MEMORY_MB being a server's). Another project's
allocation answers 404, as one that does not exist.
"""

from cellboot.api import auth
from cellboot.api import errors
from cellboot.api import inputs
from cellboot.api import pagination
from cellboot.api import schemas
from cellboot import exception
from cellboot.policies import allocations as policies
from cellboot.scheduler import allocation_records as rows
from cellboot.scheduler import allocation_service as service
from cellboot.scheduler import allocations

_NAMES = {'type': 'array', 'maxItems': allocations.MAX_TRAITS,
          'items': dict(schemas.QUERY_TEXT, minLength=1, maxLength=255)}
_UUID = dict(schemas.QUERY_TEXT, minLength=1, maxLength=36)
_HINT = {'anyOf': [_UUID, {'type': 'array', 'items': _UUID,
                           'maxItems': allocations.MAX_HINTS}]}

ALLOCATION_CREATE = {
    'type': 'object',
    'properties': {
        'allocation': {
            'type': 'object',
            'properties': {
                'resources': {
                    'type': 'object', 'minProperties': 1,
                    'maxProperties': allocations.MAX_CLASSES,
                    'propertyNames': {'maxLength': 255},
                    'additionalProperties': {
                        'type': 'integer', 'minimum': 1,
                        'maximum': 2 ** 31 - 1}},
                'required_traits': _NAMES,
                'forbidden_traits': _NAMES,
                'near': _HINT, 'far': _HINT,
                'availability_zone': dict(
                    schemas.QUERY_TEXT, minLength=1,
                    maxLength=allocations.MAX_ZONE),
            },
            'required': ['resources'],
            'additionalProperties': False,
        },
    },
    'required': ['allocation'],
    'additionalProperties': False,
    'examples': [{'allocation': {'resources': {'DISK_GB': 100}}}],
}

ALL_TENANTS_QUERY = {
    'type': 'string', 'pattern': r'^\s*(?:0|1|[Tt]rue|[Ff]alse)?\s*$',
    'description': '1 or true: every project\'s (administrators)'}


def _visible(context, allocation_id, rule):
    """The row if the policy lets the caller act on it; 404 otherwise
    (another project's is as absent as one that does not exist)."""
    try:
        row = service.get(context, allocation_id)
    except exception.AllocationNotFound:
        row = None
    if row is None or not auth.may(context, rule, row['project_id'],
                                   row['user_id']):
        raise errors.NotFound(
            f'Allocation {str(allocation_id)[:80]} could not be found.')
    return row


def create(api, request, context):
    body = schemas.validate(ALLOCATION_CREATE,
                            schemas.parse_json(request))['allocation']
    auth.owning_project(context)
    return errors.json_response(201, {'allocation': service.create(
        context, api.scheduler, body)})


def index(api, request, context):
    """The project's allocations (every project's for an administrator
    asking ``all_tenants=1``), oldest first; the marker is an id."""
    project_id = context.project_id
    if inputs.all_tenants(request):
        auth.authorize(context, policies.INDEX_ALL)
        project_id = None
    elif not project_id:
        raise errors.BadRequest('A token with no project lists with '
                                'all_tenants=1.')
    page = pagination.from_request(request)
    items, more = page.split(rows.page(context, project_id, page.limit + 1,
                                       marker=page.marker))
    last = items[-1]['uuid'] if items else None
    return errors.json_response(200, dict(
        {'allocations': [service.view(item) for item in items]},
        **pagination.links(request, 'allocations', page, last, more)))


def show(api, request, context, allocation_id):
    return errors.json_response(200, {'allocation': service.view(
        _visible(context, allocation_id, policies.SHOW))})


def delete(api, request, context, allocation_id):
    row = _visible(context, allocation_id, policies.DELETE)
    try:
        service.delete(context, api.scheduler, row['uuid'])
    except exception.AllocationNotFound:
        pass  # deleted meanwhile: the end is the same
    return errors.json_response(204)
