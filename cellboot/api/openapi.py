"""The OpenAPI 3 document of the API, generated from ``routes.ROUTES``.

Generated rather than written by hand so that it cannot forget a route;
a test checks both ways that the routes and the document agree.
"""

from cellboot.api import errors

TITLE = 'cellboot compute API'
VERSION = '2.1'

_ERROR = {
    'type': 'object',
    'minProperties': 1, 'maxProperties': 1,
    'additionalProperties': {
        'type': 'object',
        'properties': {'code': {'type': 'integer'},
                       'message': {'type': 'string'}},
        'required': ['code', 'message'],
    },
}


def _responses(route):
    codes = {route.status: {'description': route.summary}}
    if route.status != 204:
        codes[route.status]['content'] = {
            'application/json': {'schema': {'type': 'object'}}}
    failures = []
    if route.authenticated:
        failures.append(401)
    if route.policy:
        failures.append(403)
    if route.body_schema is not None:
        failures += [400, 413]
    if route.params:
        failures.append(404)
    for code in failures:
        codes[code] = {
            'description': errors.ERROR_KEYS[code],
            'content': {'application/json': {
                '$ref': '#/components/schemas/Error'}}}
    return {str(code): value for code, value in sorted(codes.items())}


def _operation(route):
    operation = {
        'summary': route.summary,
        'operationId': f'{route.method.lower()}{route.path}',
        'responses': _responses(route),
    }
    if route.policy:
        operation['x-policy'] = route.policy
    operation['security'] = ([{'token': []}] if route.authenticated
                             else [])
    parameters = [{'name': name, 'in': 'path', 'required': True,
                   'schema': {'type': 'string'}} for name in route.params]
    parameters += [{'name': name, 'in': 'query', 'required': False,
                    'schema': {'type': 'string'}} for name in route.query]
    if parameters:
        operation['parameters'] = parameters
    if route.body_schema is not None:
        operation['requestBody'] = {
            'required': True,
            'content': {'application/json': {'schema': route.body_schema}}}
    return operation


def document(routes, prefix):
    """The OpenAPI document of ``routes`` served under ``prefix``."""
    paths = {}
    for route in routes:
        paths.setdefault(route.path, {})[route.method.lower()] = \
            _operation(route)
    return {
        'openapi': '3.1.0',
        'info': {'title': TITLE, 'version': VERSION},
        'servers': [{'url': prefix}],
        'paths': paths,
        'components': {
            'securitySchemes': {'token': {
                'type': 'apiKey', 'in': 'header', 'name': 'X-Auth-Token',
                'description': 'noauth2: USER:PROJECT; keystone: a token'}},
            'schemas': {'Error': _ERROR},
        },
    }


def serve(api, request, context):
    return errors.json_response(200, api.openapi)


def versions(api, request, context):
    return errors.json_response(200, {'version': {
        'id': 'v' + VERSION, 'status': 'CURRENT',
        'links': [{'rel': 'self',
                   'href': request.application_url + api.prefix + '/'}]}})
