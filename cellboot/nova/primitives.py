"""Nova's versioned objects as they travel, read without nova.

nova-api sends its objects as oslo.versionedobjects primitives::

    {"nova_object.name": "Flavor", "nova_object.namespace": "nova",
     "nova_object.version": "1.2", "nova_object.data": {...},
     "nova_object.changes": [...]}

cellboot must not import nova (nor register Nova's classes with
oslo.versionedobjects, which would tie us to one release's object
graph), so the door reads those dicts itself. ``envelope`` builds the
JSON Schema of one object: its name and namespace exact, its major
version the one the door was written against (a minor version added
later only adds fields, which the door does not read and so lets
through), and the schema of the fields it does read; ``validate``
checks a value against such a schema and raises ``Malformed`` naming the
first offending place. Once a value has passed, the door reads it with
plain ``data(...)`` lookups.

Everything is bounded: text lengths, list lengths, mapping sizes. A
message is never trusted to be what nova-api would send; what it does
not say cannot reach the database.
"""

import json

import jsonschema

NAMESPACE = 'nova'
NAME = 'nova_object.name'
VERSION = 'nova_object.version'
DATA = 'nova_object.data'

UUID = {'type': 'string',
        'pattern': '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
                   '[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'}
# Storable text: no NUL (PostgreSQL refuses it) and no lone surrogate
# (no database driver can encode one), as the REST API requires.
_STORABLE = r'^[^\u0000\ud800-\udfff]*$'


def text(max_length=255, null=False):
    """A string of at most ``max_length`` characters (or null)."""
    return {'type': ['string', 'null'] if null else 'string',
            'maxLength': max_length, 'pattern': _STORABLE}


def integer(minimum=0, maximum=2 ** 31 - 1, null=False):
    return {'type': ['integer', 'null'] if null else 'integer',
            'minimum': minimum, 'maximum': maximum}


def mapping(values, max_items=256, null=False):
    """An object of at most ``max_items`` keys (each a short text)."""
    return {'type': ['object', 'null'] if null else 'object',
            'maxProperties': max_items,
            'propertyNames': text(255),
            'additionalProperties': values}


def array(items, max_items=1000, null=False):
    return {'type': ['array', 'null'] if null else 'array',
            'items': items, 'maxItems': max_items}


def envelope(name, major, properties=None, required=(), null=False):
    """The schema of a Nova object ``name`` at ``major``.x.

    ``properties``: the schemas of the fields read; ``required``: those
    that must be there. Other fields are allowed and left unread.
    """
    data = {'type': 'object', 'properties': dict(properties or {}),
            'required': list(required)}
    schema = {
        'type': 'object',
        'properties': {
            NAME: {'const': name},
            'nova_object.namespace': {'const': NAMESPACE},
            VERSION: {'type': 'string',
                      'pattern': rf'^{major}\.[0-9]{{1,4}}$'},
            DATA: data,
        },
        'required': [NAME, 'nova_object.namespace', VERSION, DATA],
    }
    if null:
        return {'oneOf': [{'type': 'null'}, schema]}
    return schema


def object_list(list_name, item_schema, major=1, max_items=1000,
                null=False):
    """The schema of a Nova ``*List``: ``{"objects": [...]}``."""
    return envelope(list_name, major, {
        'objects': array(item_schema, max_items)}, required=['objects'],
        null=null)


class Malformed(ValueError):
    """A value is not the Nova object the door expects."""


def _place(error):
    return '/'.join(str(part) for part in error.absolute_path) or '(top)'


def _problem(error):
    """What rule failed, without the value that failed it."""
    if error.validator == 'required':
        return error.message
    rule = json.dumps(error.validator_value, ensure_ascii=True)
    if len(rule) > 80:
        rule = rule[:80] + '...'
    return f'not {error.validator} {rule}'


def validate(value, schema, what):
    """Raise Malformed when ``value`` does not match ``schema``.

    ``what`` names the argument in the message. The message says where
    and which rule failed, never the value itself: it may be large,
    hostile or a secret, and the message goes to the log.
    """
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        raise Malformed(f'{what}: at {_place(error)}: {_problem(error)}')


def data(value):
    """The fields of a validated object (``{}`` for null)."""
    return {} if value is None else value[DATA]


def items(value):
    """The fields of each object of a validated ``*List``."""
    return [] if value is None else [data(item)
                                     for item in value[DATA]['objects']]
