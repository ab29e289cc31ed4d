"""What becomes of an instance that will not be built as asked.

A build can end three ways short of ACTIVE, and every flow that gives up
on an instance goes through one of them, so that, whatever failed, the
server stays visible to its owner (through its build request or its
mapped cell) and its claims are given back:

* ``bury_in_cell0`` — the build failed before the instance had a cell
  (no valid host, an unmapped host, a cell that refused it): the
  instance is created in cell0 in ERROR with a fault, mapped there, its
  build request removed and its claim released;
* ``fail_in_cell`` — the instance exists in its cell but cannot be
  built (no more alternates, a cast that could not be sent): ERROR with
  a fault, its claim released;
* ``clean_up_deleted`` — the owner deleted the server while its flow
  ran (its build request, or its mapping, is gone): whatever the flow
  made is removed and nothing more is done for it.

A build that nobody will finish (a sweep found it stuck, its compute
host restarted) ends with ``end_build_in_error``: ERROR, fault, event
and the end of its create action, under the request that created it.

Each is idempotent (a resumed flow may replay the step that called it),
and writes an ERROR instance with its fault and action event in one
transaction of the instance's cell, so that no ERROR goes without a
fault whatever fails. A fault's message is for the server's owner, its
details for administrators (``cellboot.objects.fault_messages``).
``settle`` is what the boot flow does once an instance exists in a cell
(mapping, then build request), shared by the flow and the burials.

These live below the flows because the flows are not their only callers:
a compute host that restarts and the conductors' sweeps end builds too,
and must not depend on the flows' package to do it. Giving back the
claims of an ended build when the scheduler does not answer is
``cellboot.builds.claims``.
"""

import contextlib

from oslo_log import log as logging

from cellboot.builds import api_records
from cellboot import context as cb_context
from cellboot.db import batches
from cellboot.db.cell import connection as cell_connection
from cellboot import exception
from cellboot import metrics
from cellboot import notifications
from cellboot.objects import build_request as build_request_obj
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.objects import fault_messages
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action as action_obj
from cellboot.objects import instance_fault as fault_obj
from cellboot.objects import instance_mapping as mapping_obj

LOG = logging.getLogger(__name__)

# Per-instance outcomes that the boot flow's atoms record.
OK = 'ok'                       # goes on to the next atom
BURIED = 'buried-in-cell0'      # ERROR in cell0, with a fault
FAILED = 'error'                # ERROR in its cell, with a fault
DELETED = 'deleted-by-owner'    # cleaned up, nothing cast
MOVED = 'moved-on'              # left this cell for another: not ours

# The instance action of a boot, and the events the conductors record.
CREATE_ACTION = 'create'
SCHEDULE_EVENT = 'conductor_schedule_and_build_instances'
RESCHEDULE_EVENT = 'conductor_build_instances'


def instance_values(build_request, request_spec):
    """``Instance.create`` fields of a build request (a payload dict).

    The build request's serialized instance is the user's request (name,
    flavor, image, metadata, zone); the request spec fills in what it
    leaves out.
    """
    inst = build_request.get('instance') or {}
    return {
        'display_name': inst.get('display_name', inst.get('name')),
        'reservation_id': inst.get('reservation_id'),
        'flavor': inst.get('flavor') or request_spec.get('flavor'),
        'image_ref': inst.get('image_ref', inst.get('image')),
        'availability_zone': inst.get(
            'availability_zone', request_spec.get('availability_zone')),
        'metadata': inst.get('metadata') or {},
    }


def owner(build_request):
    """(project_id, user_id) of a build request payload."""
    inst = build_request.get('instance') or {}
    return (build_request.get('project_id') or inst.get('project_id'),
            build_request.get('user_id') or inst.get('user_id'))


def record_event(cctxt, instance_uuid, event, error=None, host=None,
                 details=None):
    """Record ``event`` of the request's action, finished at once.

    ``cctxt`` is targeted at the instance's cell. The 'create' action is
    started if the instance has none for this request (an instance
    buried before it reached a cell, or a cell conductor working on a
    build whose action went missing). ``error`` (a message) makes the
    event, and so the action, an Error; ``details`` (a message) is
    written with a successful event.
    """
    project_id, user_id = cctxt.project_id, cctxt.user_id
    try:
        action_obj.InstanceActionEvent.event_start(
            cctxt, instance_uuid, cctxt.request_id, event, host=host)
    except exception.InstanceActionNotFound:
        action_obj.InstanceAction.start(
            cctxt, instance_uuid, CREATE_ACTION, cctxt.request_id,
            user_id=user_id, project_id=project_id)
        action_obj.InstanceActionEvent.event_start(
            cctxt, instance_uuid, cctxt.request_id, event, host=host)
    result = (action_obj.RESULT_SUCCESS if error is None
              else action_obj.RESULT_ERROR)
    action_obj.InstanceActionEvent.event_finish(
        cctxt, instance_uuid, cctxt.request_id, event, result,
        details=error if error is not None else details)


def _add_fault_once(cctxt, instance_uuid, error, host=None):
    """A fault for ``error``, unless a replay of this step recorded one.

    Its message is the owner's sentence for the error, its details the
    whole operator's text (``fault_messages.describe``).
    """
    if instance_uuid in fault_obj.InstanceFault.get_latest_for_instances(
            cctxt, [instance_uuid]):
        return False
    code, message, details = fault_messages.describe(error)
    fault_obj.InstanceFault.create(cctxt, instance_uuid, code, message,
                                   details=details, host=host)
    return True


def clean_up_deleted(context, scheduler, instance_uuid, cell_mapping=None):
    """Undo a build whose owner deleted the server while it ran.

    Soft-deletes the instance in ``cell_mapping`` (if any), releases its
    claims and removes its mapping and build request, whichever are left.
    """
    LOG.info('Instance %s was deleted by its owner during its build; '
             'cleaning up.', instance_uuid)
    if cell_mapping is not None:
        with cb_context.target_cell(context, cell_mapping) as cctxt:
            try:
                instance_obj.Instance.get_by_uuid(
                    cctxt, instance_uuid).destroy(cctxt)
            except exception.InstanceNotFound:
                pass
    scheduler.release_resources(context, instance_uuid)
    try:
        mapping_obj.InstanceMapping.get_by_instance_uuid(
            context, instance_uuid).destroy(context)
    except exception.InstanceMappingNotFound:
        pass
    try:
        build_request_obj.BuildRequest.get_by_instance_uuid(
            context, instance_uuid).destroy(context)
    except exception.BuildRequestNotFound:
        pass
    return DELETED


def settle(context, scheduler, instance_uuid, cell_mapping):
    """Map the instance to its cell, then drop its build request.

    This order means that at every moment the server is visible through
    its build request or through its mapped cell. A mapping or build
    request that is already gone means that the owner deleted the
    server: the build is cleaned up and DELETED returned, OK otherwise.
    """
    if not api_records.map_to_cell(context, instance_uuid, cell_mapping):
        return clean_up_deleted(context, scheduler, instance_uuid,
                                cell_mapping)
    if not api_records.delete_build_request(context, instance_uuid):
        return clean_up_deleted(context, scheduler, instance_uuid,
                                cell_mapping)
    return OK


def get_cell0(context):
    """cell0's mapping, or a ConfigurationError saying how to make it."""
    try:
        return cell_mapping_obj.CellMapping.get_by_uuid(
            context, cell_mapping_obj.CELL0_UUID)
    except exception.CellMappingNotFound:
        raise exception.ConfigurationError(
            reason='cell0 is not mapped, so failed builds have nowhere to '
                   'go; run `cellboot-manage cell_v2 map_cell0`')


def bury_in_cell0(context, scheduler, build_request, request_spec, error,
                  cell0=None):
    """Record a build that failed before reaching a cell, in cell0.

    ``error`` is the exception (or message) that ended the build; it
    becomes the fault. Returns BURIED, or DELETED when the owner deleted
    the server meanwhile.
    """
    instance_uuid = build_request['instance_uuid']
    message = str(error)
    cell0 = cell0 or get_cell0(context)
    project_id, user_id = owner(build_request)
    LOG.warning('Burying instance %s in cell0: %s', instance_uuid, message)
    with cb_context.target_cell(context, cell0) as cctxt, \
            batches.transaction(
                cctxt, cell_connection.pick_context_manager(cctxt)):
        try:
            instance = instance_obj.Instance.get_by_uuid(
                cctxt, instance_uuid, read_deleted=True)
        except exception.InstanceNotFound:
            instance = instance_obj.Instance.create(
                cctxt, instance_uuid, project_id,
                instance_obj.vm_states.ERROR, user_id=user_id,
                **instance_values(build_request, request_spec))
            metrics.boot_ended(metrics.ERROR)
        # else a replay: the instance is in cell0 already
        buried = _add_fault_once(cctxt, instance_uuid, error)
        if buried:
            record_event(cctxt, instance_uuid, SCHEDULE_EVENT,
                         error=message)
    scheduler.release_resources(context, instance_uuid)
    outcome = settle(context, scheduler, instance_uuid, cell0)
    if buried and outcome == OK:
        notifications.instance_create(context, instance, 'error',
                                      error=error)
    return BURIED if outcome == OK else outcome


def fail_in_cell(context, scheduler, instance_uuid, cell_mapping, error,
                 event=SCHEDULE_EVENT, expected_vm_state=None):
    """Put an instance of ``cell_mapping`` in ERROR with a fault.

    Only an instance still being built is failed (``expected_vm_state``,
    default BUILDING): one that a compute host made ACTIVE meanwhile, or
    that its owner deleted, is left alone. Its claims are released either
    way unless it went ACTIVE. Returns FAILED, DELETED, or None when the
    instance was ACTIVE already.
    """
    message = str(error)
    expected = expected_vm_state or instance_obj.vm_states.BUILDING
    with cb_context.target_cell(context, cell_mapping) as cctxt, \
            batches.transaction(
                cctxt, cell_connection.pick_context_manager(cctxt)):
        outcome, failed = _fail(cctxt, instance_uuid, expected, error,
                                event)
    if outcome == FAILED:
        LOG.warning('Instance %s failed in cell %s: %s', instance_uuid,
                    cell_mapping.name, message)
    if failed is not None:
        metrics.boot_ended(metrics.ERROR)
        notifications.instance_create(context, failed, 'error',
                                      error=error)
    if outcome is not None:
        scheduler.release_resources(context, instance_uuid)
    return outcome


def _fail(cctxt, instance_uuid, expected, error, event):
    """ERROR, fault and event in the targeted cell; see fail_in_cell.

    Returns (outcome, the instance if this call gave it its fault, else
    None: a replay sends no second ``instance.create.error``).
    """
    try:
        instance = instance_obj.Instance.get_by_uuid(cctxt, instance_uuid)
    except exception.InstanceNotFound:
        return DELETED, None
    if instance.vm_state != instance_obj.vm_states.ERROR:
        try:
            instance.update(cctxt, expected_vm_state=expected,
                            vm_state=instance_obj.vm_states.ERROR,
                            task_state=None)
        except exception.UnexpectedVMState as exc:
            LOG.info('Not failing instance %s: %s', instance_uuid, exc)
            return None, None
    if not _add_fault_once(cctxt, instance_uuid, error, host=instance.host):
        return FAILED, None
    record_event(cctxt, instance_uuid, event, error=str(error))
    return FAILED, instance


def end_build_in_error(context, instance, set_error, message, event,
                       host=None, cell_mapping=None, code=500,
                       user_message=None):
    """End a build nobody will finish: ERROR, fault, event, action end.

    ``message`` is the operator's text (the fault's details and the
    event's); ``user_message`` the owner's sentence
    (``fault_messages``), derived from ``message`` when not given.

    ``set_error(cctxt)`` is the instance's conditional update to ERROR
    (``Instance.time_out_build`` and its kind) and says whether this
    call made it; only then are the fault (``message``, ``host``) and
    the Error ``event`` written, in the same transaction of the
    instance's cell (``cell_mapping``, or the local cell database when
    None), and the create action ended in Error: of several callers at
    once, one acts. Everything is recorded for the request that created
    the instance (``creating_context``).

    Returns whether this call acted. The claims are the caller's to give
    back: its scheduler may not answer now, and it keeps trying.
    """
    with _in_cell(context, cell_mapping) as cctxt:
        rctxt = creating_context(cctxt, instance)
    with _in_cell(rctxt, cell_mapping) as cctxt, batches.transaction(
            cctxt, cell_connection.pick_context_manager(cctxt)):
        if not set_error(cctxt):
            return False
        metrics.boot_ended(metrics.ERROR)
        _code, shown, details = fault_messages.describe(message,
                                                        user_message)
        fault_obj.InstanceFault.create(cctxt, instance.uuid, code, shown,
                                       details=details, host=host)
        record_event(cctxt, instance.uuid, event, error=message, host=host)
        action_obj.InstanceAction.get_by_request_id(
            cctxt, instance.uuid, cctxt.request_id).finish(
                cctxt, message=action_obj.RESULT_ERROR)
    notifications.instance_create(rctxt, instance, 'error', error=message)
    return True


def _in_cell(context, cell_mapping):
    if cell_mapping is None:
        return contextlib.nullcontext(context)
    return cb_context.target_cell(context, cell_mapping)


def creating_context(cctxt, instance):
    """The context of the request that created ``instance``.

    ``cctxt`` reads the instance's cell. What a build's end is recorded
    under: its create action, for the same request, user and project;
    an instance without one gets a create action of a new request
    (``record_event`` starts it).
    """
    request_id = None
    for action in action_obj.InstanceAction.get_by_instance_uuid(
            cctxt, instance.uuid):
        if action.action == CREATE_ACTION:
            request_id = action.request_id
            break
    values = {'user_id': instance.user_id,
              'project_id': instance.project_id, 'is_admin': True,
              'overwrite': False}
    if request_id is not None:
        values['request_id'] = request_id
    return cb_context.RequestContext(**values)
