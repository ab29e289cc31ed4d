"""JSON schemas of the response bodies only administrators read:
hypervisors, cells and their aggregates, zones, resource pools, flows.

Apart from ``view_schemas`` (what every user of the REST API reads) so
that each module holds one audience's representations; the rules are
the same (closed objects, paged listings: ``schema_shapes``), and the
OpenAPI document and ``routes`` name these as they name the others.
"""

from cellboot.api import schema_shapes as shapes

_string = shapes.STRING
_nullable_string = shapes.NULLABLE_STRING
_count = shapes.COUNT
_closed = shapes.closed
_list = shapes.listing
_BY_CLASS = shapes.BY_CLASS
_NAME_LIST = shapes.NAME_LIST


# -- administration ----------------------------------------------------------

HYPERVISOR = _closed({
    'id': _string, 'hypervisor_hostname': _string,
    'service': _closed({'host': _string}),
    'cell': _string, 'cell_uuid': _string,
    'availability_zone': _nullable_string,
    'status': {'enum': ['enabled', 'disabled']},
    'state': {'enum': ['up', 'down']},
    'vcpus': _count, 'vcpus_used': _count,
    'memory_mb': _count, 'memory_mb_used': _count,
    'local_gb': _count, 'local_gb_used': _count,
    'failed_builds': _count})

HYPERVISORS = _list('hypervisors', HYPERVISOR, unreachable=dict(
    {'type': 'array', 'items': _string},
    description='Cells whose scheduler did not answer: their hosts are '
                'not listed.'))

_FIGURES = _closed({'capacity': _count, 'free': _count, 'max_free': _count})

AGGREGATE = _closed({
    'hosts': _count, 'up_hosts': _count,
    'zones': {'type': 'array', 'items': _string},
    'resources': {'type': 'object', 'additionalProperties': _FIGURES},
    'published_at': _string,
    'age_seconds': {'type': 'number'},
})

CELL = _closed({'uuid': _string, 'name': _string,
                'disabled': {'type': 'boolean'},
                'is_cell0': {'type': 'boolean'},
                'zone': dict(_nullable_string,
                             description='The uuid of the zone the cell '
                                         'sits in; null at the top level.'),
                'aggregate': dict(
                    {'anyOf': [{'type': 'null'}, AGGREGATE]},
                    description='What the cell\'s schedulers last '
                                'published; null before they did (not for '
                                'cell0).'),
                'state': dict(
                    {'enum': ['up', 'no scheduler', 'unreachable']},
                    description='Not for cell0.')},
               required=['uuid', 'name', 'disabled', 'is_cell0', 'zone'])

CELLS = _list('cells', CELL)

# -- zones -------------------------------------------------------------------

ZONE_AGGREGATE = _closed({
    'hosts': _count, 'up_hosts': _count,
    'zones': {'type': 'array', 'items': _string},
    'resources': {'type': 'object', 'additionalProperties': _FIGURES},
    'computed_at': dict(_string, description='ISO 8601: when the oldest '
                                             'of the cells\' aggregates '
                                             'was computed'),
})

ZONE = _closed({
    'id': _string, 'name': _string,
    'parent_id': dict(_nullable_string, description='null at the top '
                                                    'level'),
    'cells': dict({'type': 'array', 'items': _string},
                  description='The uuids of the cells directly in the '
                              'zone.'),
    'zones': dict({'type': 'array', 'items': _string},
                  description='The uuids of the zones directly in it.'),
    'aggregate': dict(
        {'anyOf': [{'type': 'null'}, ZONE_AGGREGATE]},
        description='The sum of the aggregates last published by the '
                    'cells below the zone, at any depth; null when none '
                    'has one.'),
})

ZONES = _list('zones', ZONE)

ZONE_ONE = _closed({'zone': ZONE})

# -- shared resource pools ---------------------------------------------------


RESOURCE_POOL = _closed({
    'id': _string, 'name': _string, 'generation': _count,
    'inventories': {'type': 'object', 'additionalProperties': _closed({
        'total': _count, 'reserved': _count, 'min_unit': _count,
        'max_unit': _count, 'step_size': _count,
        'allocation_ratio': {'type': 'number'}})},
    'usages': dict(_BY_CLASS, description='What consumers hold, by class.'),
    'capacity': dict(_BY_CLASS, description='(total - reserved) * '
                                            'allocation_ratio, by class.'),
    'traits': _NAME_LIST,
    'cells': dict(_NAME_LIST, description='The names of the cells it '
                                          'serves directly.'),
    'zones': dict(_NAME_LIST, description='The names of the zones it '
                                          'serves (every cell below).'),
    'served_cells': dict(_NAME_LIST, description='The uuids of every cell '
                                                 'it serves.'),
})

RESOURCE_POOLS = _list('resource_pools', RESOURCE_POOL)

RESOURCE_POOL_ONE = _closed({'resource_pool': RESOURCE_POOL})

# -- flows -------------------------------------------------------------------

_time_text = dict(_nullable_string, description='ISO 8601')

_NOTES = {'type': 'array', 'items': _closed({
    'by': _nullable_string, 'at': _nullable_string,
    'from_state': _nullable_string})}

FLOW = _closed({
    'uuid': _string, 'name': _string, 'state': _string,
    'kind': _nullable_string,
    'instance_uuids': {'type': 'array', 'items': _string},
    'conductor': _nullable_string, 'owner': _nullable_string,
    'since': _time_text,
    'resumptions': _NOTES,
    'retries': dict(_NOTES, description="Operators' retries of it."),
    'abandoned': {'oneOf': [{'type': 'null'}, _closed({
        'by': _nullable_string, 'at': _nullable_string,
        'reason': _nullable_string, 'from_state': _nullable_string,
        'settled_at': _nullable_string})],
        'description': 'Who abandoned it, when and why; null if nobody '
                       'did.'},
    'request_id': _nullable_string, 'started_at': _time_text,
    'duration': {'type': ['number', 'null'], 'description': 'seconds'},
    'created_at': _time_text, 'updated_at': _time_text,
    'location': dict(_string, description="'flow database' or "
                                          "'cell NAME'"),
    'corrupt': dict(_nullable_string,
                    description='Why no conductor will ever run this flow '
                                '(a row naming what is not a cellboot flow '
                                'kind), or null.'),
    'meta': dict({'type': 'object'}, description='As stored.'),
})

ATOM = _closed({
    'name': _string, 'type': {'enum': ['task', 'retry']},
    'state': _nullable_string, 'intention': _nullable_string,
    'duration': {'type': ['number', 'null'], 'description': 'seconds'},
    'result': dict(_nullable_string, description='A one-line summary.'),
    'failure': {'anyOf': [{'type': 'null'},
                          _closed({'type': _string,
                                   'message': _nullable_string})]},
})

FLOWS = _list('flows', FLOW, unreachable=dict(
    {'type': 'array', 'items': _string},
    description='Where flows could not be read in time (the listing is '
                'partial there).'))

FLOW_ONE = _closed({'flow': _closed(dict(
    FLOW['properties'], atoms={'type': 'array', 'items': ATOM}))})
