"""The notifications cellboot sends, one function per kind of event.

Each is called where its event happens (docs/operations.md,
"Notifications", lists them all) and returns at once: nothing is built
when ``[notifications] enabled`` is false, and what is built is queued
for ``sender``'s thread. None of them raises: a payload that cannot be
built is logged, and the caller's work goes on.

The names are Nova's where Nova has the event (``instance.create.start``
...), cellboot's own otherwise (``flow.*``). ``publisher`` is
``BINARY:HOST`` as in Nova (``cellboot-compute:host1``); by default
``cellboot:[DEFAULT] host``.
"""

import functools

from oslo_log import log as logging

from cellboot.conf import CONF
from cellboot.notifications import payloads
from cellboot.notifications import sender

LOG = logging.getLogger(__name__)

INFO = 'INFO'
WARN = 'WARN'
ERROR = 'ERROR'

# flow_event's events: (event_type, priority).
FLOW_EVENTS = {
    'succeeded': ('flow.end', INFO),
    'failed': ('flow.error', ERROR),
    'reverted': ('flow.revert', WARN),
    'resumed': ('flow.resume', INFO),
    'handed_over': ('flow.hand_over', INFO),
    'abandoned': ('flow.abandon', WARN),
}
# A build attempt a host gave back for a reschedule: Nova's event of
# the conductor's build_instances that failed (docs/operations.md).
RESCHEDULE_EVENT = 'compute_task.build_instances.error'


def enabled():
    return CONF.notifications.enabled


def _quietly(build):
    """Run ``build`` only when enabled; log what it raises."""
    @functools.wraps(build)
    def wrapper(*args, **kwargs):
        if not enabled():
            return
        try:
            build(*args, **kwargs)
        except Exception:
            LOG.exception('Could not build notification %s',
                          build.__name__)
    return wrapper


def _send(context, event_type, priority, payload, publisher):
    # A RequestContext, or a context as a dict (a flow's stored one).
    ctxt = (context.to_dict() if hasattr(context, 'to_dict')
            else dict(context or {}))
    sender.send(ctxt, publisher or f'cellboot:{CONF.host}', event_type,
                priority, payload.to_primitive())


@_quietly
def instance_create(context, instance, phase, error=None, publisher=None):
    """``instance.create.<phase>``: start (a host takes the build), end
    (ACTIVE), error (the build ended in ERROR; ``error`` its cause)."""
    _send(context, f'instance.create.{phase}',
          ERROR if phase == 'error' else INFO,
          payloads.InstanceActionPayload.from_instance(
              instance, fault=error if phase == 'error' else None),
          publisher)


@_quietly
def instance_delete(context, instance, phase, publisher=None):
    """``instance.delete.<phase>``: start, end (soft-deleted in its
    cell)."""
    _send(context, f'instance.delete.{phase}', INFO,
          payloads.InstanceActionPayload.from_instance(instance), publisher)


@_quietly
def build_rescheduled(context, instance_uuid, host, failure,
                      publisher=None):
    """A build failed on ``host`` and goes to the cell conductor for the
    next alternate (``RESCHEDULE_EVENT``, state ``building``)."""
    _send(context, RESCHEDULE_EVENT, WARN,
          payloads.ComputeTaskPayload(
              instance_uuid, host, 'building',
              payloads.ExceptionPayload.from_error(failure)), publisher)


@_quietly
def compute_exception(context, error, publisher=None):
    """``compute.exception``: an unexpected error of a compute host."""
    _send(context, 'compute.exception', ERROR,
          payloads.ExceptionPayload.from_error(error), publisher)


@_quietly
def flow_event(context, flow, event, reason=None, publisher=None):
    """``flow.*``: ``event`` is a key of ``FLOW_EVENTS``.

    ``flow``: a TaskFlow FlowDetail (or anything with its ``uuid``, and
    ``name``, ``state``, ``meta`` when known); ``reason``: an exception or
    message when the flow failed or was given up. For
    ``cellboot-manage flows abandon``: ``flow_event(ctx, detail,
    'abandoned', reason='...')``.
    """
    event_type, priority = FLOW_EVENTS[event]
    _send(context, event_type, priority,
          payloads.FlowPayload.from_flow(flow, reason=reason), publisher)
