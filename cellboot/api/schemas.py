"""JSON schemas of the request bodies, and checking a body against one.

The schemas are also the request bodies of the OpenAPI document. They
are strict (no unknown keys) so that a typo is a 400, not silently
ignored.
"""

import jsonschema
from oslo_serialization import jsonutils

from cellboot.api import errors

NAME_LENGTH = 255

_name = {'type': 'string', 'minLength': 1, 'maxLength': NAME_LENGTH,
         'pattern': r'^\S(.*\S)?$'}
_ident = {'type': 'string', 'minLength': 1, 'maxLength': 255}
_count = {'type': 'integer', 'minimum': 1}

SERVER_CREATE = {
    'type': 'object',
    'properties': {
        'server': {
            'type': 'object',
            'properties': {
                'name': _name,
                'flavorRef': _ident,
                'imageRef': {'type': 'string', 'maxLength': 255},
                'availability_zone': _ident,
                'min_count': _count,
                'max_count': _count,
                'metadata': {
                    'type': 'object',
                    'maxProperties': 128,
                    'propertyNames': {'minLength': 1, 'maxLength': 255},
                    'additionalProperties': {'type': 'string',
                                             'maxLength': 255},
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
                'same_host': {'type': 'array', 'items': _ident,
                              'maxItems': 64},
                'different_host': {'type': 'array', 'items': _ident,
                                   'maxItems': 64},
            },
            'additionalProperties': False,
        },
    },
    'required': ['server'],
    'additionalProperties': False,
}

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
                'description': {'type': ['string', 'null'],
                                'maxLength': 1024},
            },
            'required': ['name', 'vcpus', 'ram'],
            'additionalProperties': False,
        },
    },
    'required': ['flavor'],
    'additionalProperties': False,
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
}

_FORMATS = jsonschema.FormatChecker(formats=['uuid'])


def _is_strict_integer(checker, instance):
    """An integer written as one: 1.0 is a number, not a count."""
    return isinstance(instance, int) and not isinstance(instance, bool)


# JSON Schema calls 1.0 an integer; counts and sizes must be real ints.
_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        'integer', _is_strict_integer))


def has_nul(value):
    """True when a string in ``value`` holds a NUL character.

    PostgreSQL refuses NUL in text, so such input must be a 400 before it
    reaches a database, whatever the backend of this deployment.
    """
    if isinstance(value, str):
        return '\x00' in value
    if isinstance(value, dict):
        return any(has_nul(k) or has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_nul(item) for item in value)
    return False


def parse_json(request):
    """The request body as JSON; 400 when it is not, or holds a NUL."""
    try:
        body = jsonutils.loads(request.body.decode('utf-8'))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise errors.BadRequest(f'The request body is not valid JSON: {exc}')
    if has_nul(body):
        raise errors.BadRequest('The request body holds a NUL character.')
    return body


def validate(schema, body):
    """400 naming the first problem when ``body`` breaks ``schema``."""
    validator = _Validator(schema, format_checker=_FORMATS)
    error = jsonschema.exceptions.best_match(validator.iter_errors(body))
    if error is not None:
        where = '/'.join(str(part) for part in error.absolute_path)
        message = error.message
        if len(message) > 300:
            message = message[:300] + '...'
        raise errors.BadRequest(
            f'Invalid input for field/attribute {where or "(body)"}: '
            f'{message}')
    return body
