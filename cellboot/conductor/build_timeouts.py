"""BUILD timeouts: builds whose compute host never answered.

A compute host that dies after it got a build (or a cast to it that is
lost) leaves the instance building on that host for ever, holding its
claim. A cell conductor's sweep finds the instances of its cell that
have been building on a host, unchanged, for longer than ``[conductor]
build_timeout``, and ends each in ERROR with the fault ``Build timed out
after N s on host H``, an action event, and its claim given back.

What is not stuck is left alone: an instance a reschedule flow of the
cell is still working on (the flow claims the next host and casts to
it), and any instance that changed within the timeout (a host that took
the build moved it to spawning; a reschedule reset it). The ERROR is a
conditional update on exactly the condition the instance was selected
on, so of two conductors sweeping at once only one acts, and a compute
host that finishes late finds the instance no longer building: it
removes the server and releases its claim (``cellboot.compute.manager``).

The cell conductor holds no API database credentials: claims go back
through its scheduler client, and everything else is in its cell
database.
"""

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db.cell import connection as cell_connection
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action
from cellboot.objects import instance_fault
from cellboot.workflows import batches
from cellboot.workflows import engine
from cellboot.workflows import fates

LOG = logging.getLogger(__name__)

# The event a timed-out build records under its create action.
EVENT_BUILD_TIMEOUT = 'conductor_build_timeout'

# Fault code of a build that no host finished (HTTP-like, as in Nova).
FAULT_CODE = 500


def fault_message(timeout, host):
    return f'Build timed out after {timeout} s on host {host}'


class BuildTimeouts:
    """The cell conductor's check; ``manager`` is its manager.

    Uses ``manager.cell_mapping`` (the cell database),
    ``manager.persistence()`` (where its reschedule flows are) and
    ``manager.scheduler`` (``release_resources``).
    """

    def __init__(self, manager):
        self.manager = manager
        # Timed-out instances whose claim could not be given back yet
        # (the scheduler did not answer): tried again at every sweep.
        self._unreleased = set()

    def sweep_once(self, context):
        """Time out the stuck builds of the cell; ``{'timed_out': n}``."""
        self._release_pending(context)
        timeout = CONF.conductor.build_timeout
        cutoff = timeutils.utcnow() - datetime.timedelta(seconds=timeout)
        cell = self.manager.cell_mapping
        with cb_context.target_cell(context, cell) as cctxt:
            stuck = instance_obj.Instance.get_builds_older_than(cctxt,
                                                                cutoff)
        if not stuck:
            return {'timed_out': 0}
        rescheduling = self._rescheduling()
        timed_out = 0
        for instance in stuck:
            if instance.uuid in rescheduling:
                LOG.debug('Instance %s is building for longer than %s s, '
                          'but a reschedule flow works on it', instance.uuid,
                          timeout)
                continue
            if self._time_out(context, instance, cutoff, timeout):
                timed_out += 1
        return {'timed_out': timed_out}

    def _rescheduling(self):
        """Instance uuids an unfinished reschedule flow of the cell has."""
        persistence = self.manager.persistence()
        if persistence is None:
            return set()
        return {uuid
                for flow in engine.unfinished(persistence, self.manager.KIND)
                for uuid in flow['instance_uuids']}

    def _time_out(self, context, instance, cutoff, timeout):
        """ERROR, fault, event, then the claim; whether this call acted."""
        message = fault_message(timeout, instance.host)
        cell = self.manager.cell_mapping
        with cb_context.target_cell(context, cell) as cctxt:
            rctxt = _request_context(cctxt, instance)
        with cb_context.target_cell(rctxt, cell) as cctxt, \
                batches.transaction(
                    cctxt, cell_connection.pick_context_manager(cctxt)):
            if not instance.time_out_build(cctxt, cutoff):
                return False
            instance_fault.InstanceFault.create(
                cctxt, instance.uuid, FAULT_CODE, message, details=message,
                host=instance.host)
            fates.record_event(cctxt, instance.uuid, EVENT_BUILD_TIMEOUT,
                               error=message, host=instance.host)
            instance_action.InstanceAction.get_by_request_id(
                cctxt, instance.uuid, cctxt.request_id).finish(
                    cctxt, message=instance_action.RESULT_ERROR)
        LOG.warning('Instance %s: %s; set to ERROR', instance.uuid, message)
        self._release(context, instance.uuid)
        return True

    def _release(self, context, instance_uuid):
        try:
            self.manager.scheduler.release_resources(context, instance_uuid)
        except Exception as exc:
            LOG.warning('Could not release the claims of timed-out instance '
                        '%s yet (%s); trying again at the next sweep',
                        instance_uuid, exc)
            self._unreleased.add(instance_uuid)
        else:
            self._unreleased.discard(instance_uuid)

    def _release_pending(self, context):
        for instance_uuid in sorted(self._unreleased):
            self._release(context, instance_uuid)


def _request_context(cctxt, instance):
    """The context of the request that created ``instance``.

    The timeout is recorded under the instance's create action, for the
    same request, user and project; an instance without one gets a
    create action of a new request (``fates.record_event`` starts it).
    """
    request_id = None
    for action in instance_action.InstanceAction.get_by_instance_uuid(
            cctxt, instance.uuid):
        if action.action == fates.CREATE_ACTION:
            request_id = action.request_id
            break
    values = {'user_id': instance.user_id,
              'project_id': instance.project_id, 'is_admin': True,
              'overwrite': False}
    if request_id is not None:
        values['request_id'] = request_id
    return cb_context.RequestContext(**values)
