"""JSON schemas of the request bodies, and checking a body against one.

The schemas are also the request bodies of the OpenAPI document, so
they say everything a body must be: strict (no unknown keys, so that a
typo is a 400, not silently ignored), strings without NUL (which no
database of ours stores alike), counts within ``[api] max_count``.
What JSON Schema cannot say (the flavor must exist, ``min_count <=
max_count``) the handlers check and answer 400. Whole-number floats
(``2.0``) are integers, as JSON Schema 2020-12 says, and are handed to
the handlers as ``int``. Lone surrogates are refused before validation
(``inputs``); the document says so in words, because the regular
expression engines of other tools cannot express them.
"""

import functools

import jsonschema

from cellboot.api import errors
from cellboot.api import inputs
from cellboot.conf import CONF

NAME_LENGTH = 255

# No NUL anywhere (``\u0000`` is read alike by ECMA-262, Python and Rust
# regular expressions).
TEXT_PATTERN = r'^[^\u0000]*$'

_text = {'type': 'string', 'pattern': TEXT_PATTERN}
# A query parameter with no schema of its own (``Route.query_schemas``).
QUERY_TEXT = _text
# No whitespace at either end, no line break, no NUL.
_name = {'type': 'string', 'minLength': 1, 'maxLength': NAME_LENGTH,
         'pattern': r'^[^\s\u0000]([^\u0000\n]*[^\s\u0000])?$'}
_ident = dict(_text, minLength=1, maxLength=255)
_count = {'type': 'integer', 'minimum': 1}
_uuid = {'type': 'string', 'format': 'uuid', 'maxLength': 36}
# ``near``/``far``: a uuid, or a list of them (an allocation's or a
# server's, ``cellboot.scheduler.colocation``).
_uuids = {'oneOf': [_uuid, {'type': 'array', 'items': _uuid,
                            'minItems': 1, 'maxItems': 64}]}
# The name of a shared pool (``handlers.resource_pools``).
POOL_NAME = _name

SERVER_CREATE = {
    'type': 'object',
    'properties': {
        'server': {
            'type': 'object',
            'properties': {
                'name': _name,
                'flavorRef': _ident,
                'imageRef': dict(_text, maxLength=255),
                'availability_zone': _ident,
                'min_count': _count,
                'max_count': _count,
                'metadata': {
                    'type': 'object',
                    'maxProperties': 128,
                    'propertyNames': dict(_text, minLength=1,
                                          maxLength=255),
                    'additionalProperties': dict(_text, maxLength=255),
                },
            },
            'required': ['name', 'flavorRef'],
            'additionalProperties': False,
        },
        'os:scheduler_hints': {
            'type': 'object',
            'properties': {
                'group': {'type': 'string', 'format': 'uuid',
                          'maxLength': 36},
                'target_cell': _ident,
                'zone': _ident,
                'same_host': {'type': 'array', 'items': _ident,
                              'maxItems': 64},
                'different_host': {'type': 'array', 'items': _ident,
                                   'maxItems': 64},
                'near': _uuids,
                'far': _uuids,
            },
            'additionalProperties': False,
        },
    },
    'required': ['server'],
    'additionalProperties': False,
    'examples': [{'server': {'name': 'web-1', 'flavorRef': 'small',
                             'imageRef': 'cirros',
                             'metadata': {'role': 'web'}}}],
}

# A flavor's extra specs (``cellboot.api.extra_specs`` checks what the
# keys it reads say).
EXTRA_SPECS = {
    'type': 'object',
    'maxProperties': 100,
    'propertyNames': dict(_text, minLength=1, maxLength=255),
    'additionalProperties': dict(_text, maxLength=255),
}

EXTRA_SPECS_CREATE = {
    'type': 'object',
    'properties': {'extra_specs': EXTRA_SPECS},
    'required': ['extra_specs'],
    'additionalProperties': False,
    'examples': [{'extra_specs': {'resources:VGPU': '1',
                                  'trait:HW_CPU_X86_AVX2': 'required'}}],
}

# ``PUT .../os-extra_specs/{key}``: ``{key: value}``, the key of the path.
EXTRA_SPEC_UPDATE = dict(EXTRA_SPECS, minProperties=1, maxProperties=1,
                         examples=[{'resources:VGPU': '1'}])

FLAVOR_CREATE = {
    'type': 'object',
    'properties': {
        'flavor': {
            'type': 'object',
            'properties': {
                'name': _name,
                'id': _ident,
                'vcpus': {'type': 'integer', 'minimum': 1,
                          'maximum': 2 ** 31 - 1},
                'ram': {'type': 'integer', 'minimum': 1,
                        'maximum': 2 ** 31 - 1},
                'disk': {'type': 'integer', 'minimum': 0,
                         'maximum': 2 ** 31 - 1},
                'description': dict(_text, type=['string', 'null'],
                                    maxLength=1024),
                'extra_specs': EXTRA_SPECS,
            },
            'required': ['name', 'vcpus', 'ram'],
            'additionalProperties': False,
        },
    },
    'required': ['flavor'],
    'additionalProperties': False,
    'examples': [{'flavor': {'name': 'medium', 'id': 'medium',
                             'vcpus': 2, 'ram': 1024, 'disk': 20}}],
}

SERVER_GROUP_CREATE = {
    'type': 'object',
    'properties': {
        'server_group': {
            'type': 'object',
            'properties': {
                'name': _name,
                'policy': {'type': 'string',
                           'enum': ['affinity', 'anti-affinity']},
            },
            'required': ['name', 'policy'],
            'additionalProperties': False,
        },
    },
    'required': ['server_group'],
    'additionalProperties': False,
    'examples': [{'server_group': {'name': 'spread',
                                   'policy': 'anti-affinity'}}],
}

_FORMATS = jsonschema.FormatChecker(formats=['uuid'])


@functools.lru_cache(maxsize=8)
def _server_create(max_count):
    counts = dict(_count, maximum=max_count)
    server = dict(SERVER_CREATE['properties']['server'])
    server['properties'] = dict(server['properties'], min_count=counts,
                                max_count=counts)
    return dict(SERVER_CREATE, properties=dict(
        SERVER_CREATE['properties'], server=server))


def server_create():
    """``SERVER_CREATE`` with the counts bounded by ``[api] max_count``."""
    return _server_create(CONF.api.max_count)


def parse_json(request):
    """The request body as JSON; 400 when it is not acceptable JSON."""
    return inputs.parse_json(request)


def _types(schema):
    types = schema.get('type', ())
    return {types} if isinstance(types, str) else set(types)


def _as_declared(schema, value):
    """``value`` with each whole float that ``schema`` calls an integer
    made an ``int`` (what is stored must be one)."""
    if isinstance(value, float) and 'integer' in _types(schema):
        return int(value)
    if isinstance(value, dict):
        properties = schema.get('properties', {})
        extra = schema.get('additionalProperties')
        extra = extra if isinstance(extra, dict) else {}
        return {key: _as_declared(properties.get(key, extra), item)
                for key, item in value.items()}
    if isinstance(value, list):
        items = schema.get('items')
        items = items if isinstance(items, dict) else {}
        return [_as_declared(items, item) for item in value]
    return value


def validate(schema, body):
    """``body`` checked against ``schema``, its integers made ints.

    400 naming the first problem when it breaks the schema.
    """
    validator = jsonschema.Draft202012Validator(schema,
                                                format_checker=_FORMATS)
    error = jsonschema.exceptions.best_match(validator.iter_errors(body))
    if error is not None:
        where = '/'.join(str(part) for part in error.absolute_path)
        message = error.message
        if len(message) > 300:
            message = message[:300] + '...'
        raise errors.BadRequest(
            f'Invalid input for field/attribute {where or "(body)"}: '
            f'{message}')
    return _as_declared(schema, body)


def _query_value(schema, text):
    """A query parameter's text as its schema's type reads it.

    A query string carries text only: ``?limit=2`` is the integer 2 for
    a parameter documented as an integer. Text that is no whole number
    stays text, which such a schema refuses.
    """
    if schema.get('type') == 'integer':
        stripped = text.strip()
        digits = stripped[1:] if stripped[:1] in '+-' else stripped
        if digits.isascii() and digits.isdigit() and len(digits) <= 19:
            return int(stripped)
    return text


def validate_query(schemas, query):
    """400 when a value of ``query`` (a MultiDict) breaks its schema.

    ``schemas``: ``{name: schema}`` of the parameters that are not any
    string (``Route.query_schemas``).
    """
    for name, schema in schemas.items():
        for value in query.getall(name):
            value = _query_value(schema, value)
            error = jsonschema.exceptions.best_match(
                jsonschema.Draft202012Validator(schema).iter_errors(value))
            if error is not None:
                reason = error.message
                if 'description' in schema:
                    reason = f'{value!r} is not {schema["description"]}'
                raise errors.BadRequest(
                    f'Invalid query parameter {name}: {reason}.')
