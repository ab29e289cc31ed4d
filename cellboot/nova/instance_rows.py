"""What Nova's conductor and compute would have written for one server.

Nova's conductor creates the instance in its cell from the ``Instance``
that nova-api put in the build request (``build_requests.instance``, the
object's primitive as JSON); Nova's compute then moves its states along.
The Nova mirror writes the same rows from the same build request and
from cellboot's instance. ``rows`` turns the stored build request into
the rows of ``cellboot.nova.tables.INSTANCE_TABLES``; ``state`` gives
the columns that follow cellboot's instance (vm_state, task_state, host,
...); ``fault`` the ``instance_faults`` row of a cellboot fault.

The build request is read back from a database, so it is checked like a
cast (``cellboot.nova.primitives``): every column copied has its type
and Nova's length, and a build request that does not pass is not
mirrored (``Malformed``) rather than written half.
"""

import dataclasses
import datetime
import json

from cellboot.nova import casts
from cellboot.nova import primitives as p

# Nova's power states (nova.compute.power_state).
NOSTATE = 0
RUNNING = 1

# Nova's API refuses user data over 65,535 bytes once encoded; key data
# is an SSH public key.
LONG_TEXT = 65535

_TIME = {'type': ['string', 'null'], 'maxLength': 40,
         'pattern': r'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)?$'}
_BOOLEAN = {'type': ['boolean', 'null']}

# The ``instances`` columns copied from Nova's Instance as they are.
COPIED = {
    **{name: p.text(255, null=True) for name in (
        'image_ref', 'kernel_id', 'ramdisk_id', 'hostname', 'key_name',
        'display_name', 'display_description', 'os_type', 'architecture',
        'vm_mode', 'root_device_name', 'config_drive',
        'availability_zone')},
    **{name: p.integer(null=True) for name in (
        'launch_index', 'memory_mb', 'vcpus', 'root_gb', 'ephemeral_gb',
        'instance_type_id')},
    'progress': p.integer(maximum=100, null=True),
    **{name: _BOOLEAN for name in (
        'locked', 'auto_disk_config', 'shutdown_terminate',
        'disable_terminate', 'hidden')},
    'key_data': p.text(LONG_TEXT, null=True),
    'user_data': p.text(LONG_TEXT, null=True),
}

INSTANCE = p.envelope('Instance', 2, {
    **COPIED,
    'uuid': p.UUID,
    'user_id': p.text(255),
    'project_id': p.text(255),
    'reservation_id': p.text(255),
    'created_at': _TIME,
    'flavor': casts.FLAVOR,
    'metadata': p.mapping(p.text(255), max_items=128, null=True),
    'system_metadata': p.mapping(p.text(255, null=True), null=True),
    'tags': casts.TAGS,
}, required=['uuid', 'user_id', 'project_id', 'reservation_id', 'flavor'])

# A build request's ``instance`` column larger than this is not read: it
# holds at most the fields above, each bounded.
MAX_STORED = 1 << 20


@dataclasses.dataclass(frozen=True)
class NovaRows:
    """The rows of one instance, by table name (lists of column dicts)."""

    uuid: str
    project_id: str
    by_table: dict


def _time(value):
    if value is None:
        return None
    stamp = datetime.datetime.fromisoformat(value)
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return stamp


def read(stored):
    """The validated Instance primitive of a stored build request."""
    if not isinstance(stored, str) or len(stored) > MAX_STORED:
        raise p.Malformed('build request: not a stored instance of at most '
                          f'{MAX_STORED} characters')
    try:
        instance = json.loads(stored)
    except ValueError:
        raise p.Malformed('build request: its instance is not JSON')
    p.validate(instance, INSTANCE, 'build request instance')
    try:
        _time(p.data(instance).get('created_at'))
    except ValueError:
        raise p.Malformed('build request instance: at created_at: not a '
                          'time')
    return instance


def rows(stored, now, live):
    """``NovaRows`` of a stored build request, in cellboot's ``live`` state.

    ``live`` is ``state(...)`` of cellboot's instance: a server cellboot
    built already is written as it is now, not as nova-api left it.
    Raises ``Malformed`` (see ``read``).
    """
    fields = p.data(read(stored))
    uuid = fields['uuid']
    stamps = {'created_at': _time(fields.get('created_at')) or now,
              'updated_at': now, 'deleted_at': None, 'deleted': 0}
    instance = {name: fields.get(name) for name in COPIED}
    instance.update(uuid=uuid, user_id=fields['user_id'],
                    project_id=fields['project_id'],
                    reservation_id=fields['reservation_id'], cleaned=0,
                    **stamps)
    instance.update(live)
    child = dict(stamps, instance_uuid=uuid)
    extra = dict(child, flavor=json.dumps(
        {'cur': fields['flavor'], 'old': None, 'new': None}))
    return NovaRows(uuid, fields['project_id'], {
        'instances': [instance],
        'instance_extra': [extra],
        'instance_info_caches': [dict(child, network_info='[]')],
        'instance_metadata': [
            dict(child, key=key, value=value) for key, value in
            sorted((fields.get('metadata') or {}).items())],
        'instance_system_metadata': [
            dict(child, key=key, value=value) for key, value in
            sorted((fields.get('system_metadata') or {}).items())],
        'tags': [{'resource_id': uuid, 'tag': tag} for tag in sorted(
            {item['tag'] for item in p.items(fields.get('tags'))})],
    })


def state(vm_state, task_state, host, node, launched_at,
          availability_zone):
    """The ``instances`` columns that follow cellboot's instance.

    The zone is the one cellboot placed the server in, when it has one;
    otherwise the zone nova-api wrote (the one asked for) stays.
    """
    columns = {'vm_state': vm_state, 'task_state': task_state,
               'power_state': RUNNING if vm_state == 'active' else NOSTATE,
               'host': host, 'node': node, 'launched_on': host,
               'launched_at': launched_at}
    if availability_zone:
        columns['availability_zone'] = availability_zone
    return columns


def fault(uuid, code, message, details, host, created_at):
    """The ``instance_faults`` row of a cellboot fault.

    nova-api shows ``details`` to the owner unless the code is 500, so
    they are kept only where Nova would hide them: cellboot's other
    faults already say in ``message`` all that is for the owner.
    """
    return {'instance_uuid': uuid, 'code': code, 'message': message[:255],
            'details': details if code == 500 else None, 'host': host,
            'created_at': created_at, 'updated_at': None,
            'deleted_at': None, 'deleted': 0}
