"""The OpenAPI 3.1 document of the API, generated from ``routes.ROUTES``.

Generated rather than written by hand so that it cannot forget a route;
a test checks both ways that the routes and the document agree, and
the schemathesis test that the API answers as the document says: every
status an operation can answer, with the schema of its body
(``view_schemas`` and ``admin_view_schemas`` for successes,
``view_schemas.ERROR`` for the rest), and links from what a POST
creates to the paths that read and delete it, which schemathesis's
stateful phase follows.
"""

from cellboot.api import errors
from cellboot.api import inputs
from cellboot.api import schemas
from cellboot.api import admin_view_schemas
from cellboot.api import view_schemas

TITLE = 'cellboot compute API'
VERSION = '2.1'

DESCRIPTION = (
    'A nova-shaped compute API. Errors are JSON: {"badRequest": {"code": '
    '400, "message": "..."}}. Request bodies are UTF-8 I-JSON (RFC 7493): '
    'a string holding a lone surrogate (\\ud800-\\udfff) or a NUL, or a '
    f'body nested deeper than {inputs.MAX_DEPTH} levels, is answered 400; '
    'a path parameter that is not UTF-8 answers 404, a query parameter '
    '400. Requests are authenticated, '
    'then authorized, then validated. HEAD is answered as GET without a '
    'body; OPTIONS answers 204 with the path\'s methods in Allow.')

_COMPONENT_SCHEMAS = {
    'Error': view_schemas.ERROR,
    'Version': view_schemas.VERSION,
    'Server': view_schemas.SERVER,
    'ServerSummary': view_schemas.SERVER_SUMMARY,
    'Flavor': view_schemas.FLAVOR,
    'ExtraSpec': view_schemas.EXTRA_SPEC_ONE,
    'ResourceProvider': view_schemas.RESOURCE_PROVIDER,
    'ServerGroup': view_schemas.SERVER_GROUP,
    'Hypervisor': admin_view_schemas.HYPERVISOR,
    'Cell': admin_view_schemas.CELL,
    'Flow': admin_view_schemas.FLOW,
    'Atom': admin_view_schemas.ATOM,
}

_ERROR_REF = {'$ref': '#/components/schemas/Error'}

# Why each error status is answered, for its description.
_ERROR_REASONS = {
    400: 'Invalid input: the body, a query parameter, or a rule the '
         'schema cannot express (see the message).',
    401: 'No usable X-Auth-Token.',
    403: 'The policy does not let the caller do this (by default: '
         'only an administrator may).',
    404: 'No such resource (or another project\'s).',
    405: 'The path does not have this method; Allow lists those it has.',
    409: 'The resource exists already, or is still in use.',
    413: 'The body is over [api] max_request_body_size bytes, or what '
         'the request would store is over its limits (see the message).',
    415: 'The body is not Content-Type: application/json (UTF-8).',
    503: 'A database, cell or service needed for the answer did not '
         'answer, or every request slot is busy; nothing was changed. '
         'Try again after Retry-After seconds.',
}

_ERROR_HEADERS = {
    401: {'WWW-Authenticate': {'schema': {'type': 'string'}}},
    405: {'Allow': {'schema': {'type': 'string'},
                    'description': 'The methods of the path.'}},
    503: {'Retry-After': {'schema': {'type': 'string'},
                          'description': 'Seconds to wait before trying '
                                         'again.'}},
}


def _error(code):
    response = {'description': _ERROR_REASONS[code],
                'content': {'application/json': {'schema': _ERROR_REF}}}
    if code in _ERROR_HEADERS:
        response['headers'] = _ERROR_HEADERS[code]
    return response


def _refs(schema):
    """``schema`` with the named components replaced by references."""
    for name, component in _COMPONENT_SCHEMAS.items():
        if schema is component:
            return {'$ref': f'#/components/schemas/{name}'}
    if isinstance(schema, dict):
        return {key: _refs(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_refs(value) for value in schema]
    return schema


def _error_codes(route):
    codes = {405, 413}
    if route.authenticated:
        codes.add(401)
    if route.policy:
        codes.add(403)
    if route.body_schema is not None:
        codes.update((400, 415))
    if route.query:
        codes.add(400)
    if route.params:
        codes.add(404)
    if route.database:
        codes.add(503)
    codes.update(route.failures)
    return codes


def _responses(route):
    success = {'description': route.summary}
    if route.response_schema is not None:
        success['content'] = {'application/json': {
            'schema': _refs(route.response_schema)}}
    if route.links:
        success['links'] = route.links
    codes = {route.status: success}
    codes.update((code, {'description': f'{route.summary} (no body)'})
                 for code in route.also)
    codes.update((code, _error(code)) for code in _error_codes(route))
    return {str(code): value for code, value in sorted(codes.items())}


def operation_id(method, path):
    """The operationId of ``method`` on ``path`` (what links name)."""
    return f'{method.lower()}{path}'


def _operation(route):
    operation = {
        'summary': route.summary,
        'operationId': operation_id(route.method, route.path),
        'responses': _responses(route),
    }
    if route.policy:
        operation['x-policy'] = route.policy
    operation['security'] = ([{'token': []}] if route.authenticated
                             else [])
    parameters = [{'name': name, 'in': 'path', 'required': True,
                   'schema': {'type': 'string'}} for name in route.params]
    parameters += [{'name': name, 'in': 'query', 'required': False,
                    'schema': route.query_schemas.get(name,
                                                      schemas.QUERY_TEXT)}
                   for name in route.query]
    if parameters:
        operation['parameters'] = parameters
    body = route.body()
    if body is not None:
        operation['requestBody'] = {
            'required': True,
            'content': {'application/json': {'schema': body}}}
    return operation


def document(routes, prefix):
    """The OpenAPI document of ``routes`` served under ``prefix``."""
    paths = {}
    for route in routes:
        paths.setdefault(route.path, {})[route.method.lower()] = \
            _operation(route)
    return {
        'openapi': '3.1.0',
        'info': {'title': TITLE, 'version': VERSION,
                 'description': DESCRIPTION},
        'servers': [{'url': prefix}],
        'paths': paths,
        'components': {
            'securitySchemes': {'token': {
                'type': 'apiKey', 'in': 'header', 'name': 'X-Auth-Token',
                'description': 'noauth2: USER:PROJECT; keystone: a token'}},
            'schemas': {name: _component(schema)
                        for name, schema in _COMPONENT_SCHEMAS.items()},
        },
    }


def _component(schema):
    """A named schema, its inner named schemas as references."""
    if isinstance(schema, dict):
        return {key: _refs(value) for key, value in schema.items()}
    return schema


def serve(api, request, context):
    return errors.json_response(200, api.openapi)


def versions(api, request, context):
    return errors.json_response(200, {'version': {
        'id': 'v' + VERSION, 'status': 'CURRENT',
        'links': [{'rel': 'self',
                   'href': request.application_url + api.prefix + '/'}]}})
