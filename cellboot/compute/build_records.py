"""A build's records in its cell database, as a compute host writes them.

A host writes to its cell database twice per successful build: once to
take it, once to settle it, each write with its history (the action
event) in the same transaction. That keeps what an operator reads
consistent with the instance (no "spawning" without its event), and it
keeps a multi-create cheap: every transaction on one cell database is
a turn at its write lock (on SQLite the whole file's), and 500 builds
at five transactions each were most of a batch boot's time.

Every write here rides out a database outage (``cellboot.db.outage``):
``take``, ``settle`` and ``fail`` run a second function for their
retries that finds out whether the attempt before committed (its answer
lost with the connection) and does not do twice what it did; the others
set again what they set.
"""

from oslo_log import log as logging
from oslo_utils import timeutils

from cellboot.db.cell import connection as cell_db
from cellboot.db import outage
from cellboot import exception
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action
from cellboot.objects import instance_fault

LOG = logging.getLogger(__name__)

# The instance action that a boot is recorded under, and this host's step.
ACTION_CREATE = 'create'
EVENT_BUILD = 'compute_build_and_run_instance'

vm_states = instance_obj.vm_states


def take(context, current, host, node):
    """Take the build for ``host``: its event (started), or None.

    See ``Instance.claim_build``; None when not taken, ``current`` then
    holding the instance as it is.
    """
    return outage.ride_out(
        lambda: _take(context, current, host, node),
        lambda: _take(context, current, host, node, again=True),
        what=f'Instance {current.uuid}: taking its build on {host}')


def settle(context, current, event, host, node):
    """ACTIVE on ``host``, its event and the create action ended.

    Raises as ``Instance.finish_build`` does, having written nothing.
    """
    outage.ride_out(
        lambda: _settle(context, current, event, host, node),
        lambda: _settle(context, current, event, host, node, again=True),
        what=f'Instance {current.uuid}: settling its build on {host}')


def fail(context, current, event, code, message, details, host):
    """A fault, ERROR if still building, the create action ended in Error.

    An instance deleted or settled meanwhile is left as it is (the fault
    is harmless history). Returns whether the instance is now in ERROR
    (what its ``instance.create.error`` notification needs).
    """
    return outage.ride_out(
        lambda: _fail(context, current, event, code, message, details,
                      host),
        lambda: _fail(context, current, event, code, message, details,
                      host, again=True),
        what=f'Instance {current.uuid}: failing its build on {host}')


def hand_back(context, current, args):
    """A building instance given back for a reschedule, to be sent ``args``.

    task_state rescheduling: no host can take it (``claim_build`` wants
    none) until a cell conductor moves it onto an alternate. ``args``
    (``cellboot.objects.build_args``) are the alternates left, the spec
    and the retry state that counts this host's failure: what the
    conductors reschedule it with, from the ``build_instances`` cast or,
    if that cast is lost, from their check of untaken builds
    (``cellboot.conductor.untaken_builds``), which finds it waiting.
    Raises InstanceNotFound or UnexpectedVMState if it is no more
    building. Run again after a lost connection, it sets the same values.
    """
    outage.on_outage(current.update)(
        context, expected_vm_state=vm_states.BUILDING,
        task_state=instance_obj.task_states.RESCHEDULING, build_args=args)


@cell_db.writer
def _take(context, current, host, node, again=False):
    """``take``'s transaction: ``current.claim_build`` and its event.

    ``again``: a retry after a lost connection, whose earlier attempt may
    have committed: a build found spawning on this host with this
    request's build event started here and not finished is that attempt's
    (this process handles one message per instance at a time, see
    ``ComputeManager.build_and_run_instance``), and its event is returned.
    """
    if not current.claim_build(context, host, node):
        if again and current.task_state == instance_obj.task_states.SPAWNING \
                and current.host == host:
            return _started_event(context, current, host)
        return None
    try:
        return instance_action.InstanceActionEvent.event_start(
            context, current.uuid, context.request_id, EVENT_BUILD,
            host=host)
    except exception.InstanceActionNotFound:
        # The conductor starts the action; a build cast by hand (or a
        # lost write) did not, and the host's step must be on record
        # anyway.
        instance_action.InstanceAction.start(
            context, current.uuid, ACTION_CREATE, context.request_id,
            user_id=current.user_id, project_id=current.project_id)
        return instance_action.InstanceActionEvent.event_start(
            context, current.uuid, context.request_id, EVENT_BUILD,
            host=host)


def _started_event(context, current, host):
    """This request's build event started on ``host``, unfinished, or None."""
    try:
        action = instance_action.InstanceAction.get_by_request_id(
            context, current.uuid, context.request_id)
    except exception.InstanceActionNotFound:
        return None
    for event in reversed(instance_action.InstanceActionEvent.get_by_action(
            context, action.id)):
        if event.event == EVENT_BUILD:
            if event.host == host and event.finish_time is None:
                return event
            return None
    return None


@cell_db.writer
def _settle(context, current, event, host, node, again=False):
    """``settle``'s transaction.

    ``again``: a retry after a lost connection; an instance already
    ACTIVE on this host was made so by the earlier attempt (only the host
    that took a build settles it ACTIVE, and that attempt wrote the event
    and the action with it), so there is nothing left to write.
    """
    try:
        current.finish_build(context, host, vm_state=vm_states.ACTIVE,
                             task_state=None, node=node,
                             launched_at=timeutils.utcnow())
    except exception.UnexpectedVMState:
        if again:
            found = instance_obj.Instance.get_by_uuid(context, current.uuid)
            if found.vm_state == vm_states.ACTIVE and found.host == host:
                LOG.info('Instance %s: the write that made it active on '
                         'host %s had committed before its connection was '
                         'lost', current.uuid, host)
                return
        raise
    event.finish(context, instance_action.RESULT_SUCCESS)
    _finish_action(context, current, event)


@cell_db.writer
def _fail(context, current, event, code, message, details, host,
          again=False):
    """``fail``'s transaction.

    One transaction, so that a retry after a lost connection finds all of
    it or none: ``again`` does not write a fault identical to the latest
    one (the earlier attempt's); the conditional update and the end of
    the action are the same when run twice.
    """
    latest = again and instance_fault.InstanceFault.get_latest_for_instances(
        context, [current.uuid]).get(current.uuid)
    if not (latest and (latest.code, latest.message, latest.details,
                        latest.host) == (
            code, message[:instance_fault.MAX_MESSAGE_LENGTH], details,
            host)):
        instance_fault.InstanceFault.create(
            context, current.uuid, code, message, details=details,
            host=host)
    try:
        current.update(context, expected_vm_state=vm_states.BUILDING,
                       vm_state=vm_states.ERROR, task_state=None)
    except (exception.InstanceNotFound, exception.UnexpectedVMState):
        LOG.info('Instance %s changed meanwhile; leaving it as it is',
                 current.uuid)
        failed = False
    else:
        failed = True
    _finish_action(context, current, event,
                   message=instance_action.RESULT_ERROR)
    return failed


def end_event(context, event, result, **details):
    """End the host's build event (an UPDATE of the event by its id: the
    same whether or not an earlier attempt committed)."""
    outage.on_outage(event.finish)(context, result, **details)


def _finish_action(context, current, event, message=None):
    """End the create action that ``event`` (this host's) belongs to."""
    instance_action.InstanceAction(
        id=event.action_id, instance_uuid=current.uuid,
        request_id=context.request_id).finish(context, message=message)
