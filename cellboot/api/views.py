"""How servers, flavors, groups, hosts, cells and zones look in JSON.

One function per representation, so that a listing and a single GET of
the same thing cannot drift apart. Fields follow Nova's names; the
extended attributes (host, cell) and a fault's details are shown to
those the policy allows (administrators, by default).
"""

import datetime

from cellboot.api import auth
from cellboot.api import server_records
from cellboot.builds import fates
from cellboot.builds import handback
from cellboot.compute import build_records
from cellboot.conductor import untaken_builds
from cellboot.objects import build_request as build_request_obj
from cellboot.objects import fault_messages
from cellboot.objects import instance_action
from cellboot.policies import instance_actions as action_policies
from cellboot.policies import servers as server_policies

# Status of a server per vm_state, as Nova reports it.
STATUS = {'building': 'BUILD', 'active': 'ACTIVE', 'error': 'ERROR',
          'deleted': 'DELETED'}
UNKNOWN = 'UNKNOWN'


def _time(value):
    if value is None:
        return None
    return value.strftime('%Y-%m-%dT%H:%M:%SZ')


def _link(request, *parts):
    base = request.application_url + '/v2.1'
    return [{'rel': 'self', 'href': '/'.join((base,) + parts)}]


def server_summary(request, record):
    uuid, name = _identity(record)
    return {'id': uuid, 'name': name, 'links': _link(request, 'servers',
                                                     uuid)}


def _identity(record):
    if isinstance(record, build_request_obj.BuildRequest):
        return record.instance_uuid, record.instance.get('display_name')
    if isinstance(record, server_records.InCell):
        return record.instance.uuid, record.instance.display_name
    return record[0], None


def _common(request, uuid, name, project_id, user_id, flavor, image,
            metadata, zone, reservation_id, created):
    return {
        'id': uuid, 'name': name, 'tenant_id': project_id,
        'user_id': user_id,
        'flavor': {'id': (flavor or {}).get('flavorid'),
                   'original_name': (flavor or {}).get('name')},
        'image': {'id': image} if image else '',
        'metadata': metadata or {},
        'OS-EXT-AZ:availability_zone': zone or '',
        'reservation_id': reservation_id,
        'created': _time(created),
        'links': _link(request, 'servers', uuid),
    }


def server_detail(request, context, record):
    """The full view of a BuildRequest, an InCell, or an unreachable one."""
    if isinstance(record, build_request_obj.BuildRequest):
        inst = record.instance
        view = _common(request, record.instance_uuid,
                       inst.get('display_name'), record.project_id,
                       record.user_id, inst.get('flavor'),
                       inst.get('image_ref'), inst.get('metadata'),
                       inst.get('availability_zone'),
                       inst.get('reservation_id'), record.created_at)
        view.update(status='BUILD', updated=None)
        if auth.may(context, server_policies.EXTENDED_ATTRIBUTES,
                    record.project_id, record.user_id):
            view.update({'OS-EXT-SRV-ATTR:host': None,
                         'cellboot:cell': None})
        return view
    if not isinstance(record, server_records.InCell):
        uuid = record[0]
        return {'id': uuid, 'status': UNKNOWN,
                'links': _link(request, 'servers', uuid)}
    inst = record.instance
    view = _common(request, inst.uuid, inst.display_name, inst.project_id,
                   inst.user_id, inst.flavor, inst.image_ref, inst.metadata,
                   inst.availability_zone, inst.reservation_id,
                   inst.created_at)
    view.update(status=STATUS.get(inst.vm_state, UNKNOWN),
                updated=_time(inst.updated_at),
                launched_at=_time(inst.launched_at))
    if record.fault is not None and inst.vm_state == 'error':
        view['fault'] = _fault(context, record.fault, inst)
    if auth.may(context, server_policies.EXTENDED_ATTRIBUTES,
                inst.project_id, inst.user_id):
        view.update({'OS-EXT-SRV-ATTR:host': inst.host,
                     'OS-EXT-SRV-ATTR:hypervisor_hostname': inst.node,
                     'cellboot:cell': record.cell.name})
    return view


def _fault(context, fault, inst):
    """A fault as the caller may read it.

    Those the policy lets see fault details (administrators) read the
    fault as written and its details; the owner reads a sentence fit for
    users, whatever the row holds (``fault_messages.for_user``).
    """
    view = {'code': fault.code, 'created': _time(fault.created_at)}
    if auth.may(context, server_policies.FAULT_DETAILS, inst.project_id,
                inst.user_id):
        view.update(message=fault.message, details=fault.details)
    else:
        view['message'] = fault_messages.for_user(fault.code, fault.message)
    return view


def flavor(request, item):
    return {'id': item.flavorid, 'name': item.name, 'vcpus': item.vcpus,
            'ram': item.memory_mb, 'disk': item.root_gb,
            'description': item.description,
            'os-flavor-access:is_public': bool(item.is_public),
            'extra_specs': dict(item.extra_specs or {}),
            'links': _link(request, 'flavors', item.flavorid)}


def server_group(item):
    return {'id': item.uuid, 'name': item.name, 'policy': item.policy,
            'members': list(item.members or ()),
            'project_id': item.project_id, 'user_id': item.user_id}


def hypervisor(host, cell_names):
    resources = host['resources']

    def used(rc):
        return int(resources.get(rc, {}).get('used', 0))

    def capacity(rc):
        return int(resources.get(rc, {}).get('capacity', 0))

    return {
        'id': host['uuid'],
        'hypervisor_hostname': host['nodename'],
        'service': {'host': host['service_host']},
        'cell': cell_names.get(host['cell_uuid'], host['cell_uuid']),
        'cell_uuid': host['cell_uuid'],
        'availability_zone': host['availability_zone'],
        'status': 'enabled' if host['enabled'] else 'disabled',
        'state': 'up' if host.get('up', True) else 'down',
        'vcpus': capacity('VCPU'), 'vcpus_used': used('VCPU'),
        'memory_mb': capacity('MEMORY_MB'),
        'memory_mb_used': used('MEMORY_MB'),
        'local_gb': capacity('DISK_GB'), 'local_gb_used': used('DISK_GB'),
        'failed_builds': host['failed_builds'],
    }


def cell(item, figures=None):
    """A cell; ``figures`` a ``cell_aggregates.CellView`` (None: cell0)."""
    shown = {'uuid': item.uuid, 'name': item.name,
             'disabled': bool(item.disabled), 'is_cell0': item.is_cell0,
             'zone': item.zone_uuid}
    if item.is_cell0:
        return shown
    aggregate = figures.aggregate if figures is not None else None
    shown['aggregate'] = None if aggregate is None else dict(
        _figures(aggregate),
        published_at=figures.published_at.isoformat(),
        age_seconds=round(figures.age, 1),
    )
    shown['state'] = ('unreachable' if figures is None or figures.silent
                      else 'no scheduler' if figures.usable()
                      else 'up')
    return shown


def _figures(aggregate):
    """What a cell's and a zone's aggregate both show, in whole units."""
    return {'hosts': aggregate['hosts'], 'up_hosts': aggregate['up_hosts'],
            'zones': aggregate['zones'],
            'resources': {
                rc: {key: int(value) for key, value in values.items()}
                for rc, values in sorted(aggregate['resources'].items())}}


def zone(item, cells, zones, aggregate):
    """A zone: the cells and zones directly in it, and the aggregate of
    every cell below it (``zone_aggregate.combine``; None: none has
    one)."""
    shown = None
    if aggregate is not None:
        oldest = datetime.datetime.fromtimestamp(aggregate['computed_at'],
                                                 datetime.timezone.utc)
        shown = dict(_figures(aggregate), computed_at=_time(oldest))
    return {'id': item.uuid, 'name': item.name,
            'parent_id': item.parent_uuid,
            'cells': [cell.uuid for cell in cells],
            'zones': [child.uuid for child in zones],
            'aggregate': shown}


def instance_action_summary(action):
    """An action as listed: who asked what, when, and whether it failed.

    ``updated_at`` is the last time the action or an event ending in
    error changed its row (its finish, at the latest).
    """
    return {'action': action.action, 'instance_uuid': action.instance_uuid,
            'request_id': action.request_id, 'user_id': action.user_id,
            'project_id': action.project_id,
            'start_time': _time(action.start_time),
            'message': action.message,
            'updated_at': _time(action.updated_at or action.finish_time or
                                action.start_time)}


def instance_action_detail(context, action, events):
    """An action with its events, oldest first.

    Events carried from a cell the server left are named ``CELL:EVENT``.
    """
    view = instance_action_summary(action)
    view['events'] = [_event(context, action, event) for event in events]
    return view


# The sentence an owner reads of an event, by (name, failed).
_EVENT_SENTENCES = {
    (build_records.EVENT_BUILD, True): fault_messages.HOST_FAILED,
    (fates.RESCHEDULE_EVENT, False): fault_messages.RESCHEDULED,
    (handback.HANDBACK_EVENT, False): fault_messages.HANDED_BACK,
    (untaken_builds.EVENT_NOT_TAKEN, False): fault_messages.NOT_TAKEN,
    (untaken_builds.EVENT_RECAST, False): fault_messages.RECAST,
}


def _event(context, action, event):
    """An event as the caller may read it.

    Everyone reads its name, times, result and ``message``: a sentence
    for the owner saying why it happened, when it says something
    (``fault_messages.for_event``). Those the policy lets see event
    details (administrators) also read its host, its ``details`` and
    ``traceback`` as the services wrote them, and the cell an event
    carried from a cell the server left happened in (``CELL:EVENT``);
    others read the event's bare name, as they learn no cell's name.
    """
    failed = event.result == instance_action.RESULT_ERROR
    name = event.event.rpartition(':')[2]
    view = {'event': name, 'start_time': _time(event.start_time),
            'finish_time': _time(event.finish_time), 'result': event.result,
            'message': fault_messages.for_event(
                _EVENT_SENTENCES.get((name, failed)), failed,
                event.details)}
    if auth.may(context, action_policies.EVENTS_DETAILS, action.project_id,
                action.user_id):
        view.update(event=event.event, host=event.host,
                    details=event.details, traceback=event.traceback)
    return view
