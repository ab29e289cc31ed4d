"""Untaken builds: a cast to a compute host that never arrived.

A boot flow or a reschedule flow ends by casting
``build_and_run_instance`` to the chosen host, and the host takes the
build by moving it to task_state spawning (``Instance.claim_build``). A
broker that restarts, or a cast that could not be sent after its
retries, leaves the instance building on a host that never heard of it:
without this check it would wait for ``[conductor] build_timeout`` and
end in ERROR although its host is alive.

So a cell conductor's sweep (``build_timeouts.BuildTimeouts``) hands
every instance that has been building on a host, untaken, for longer than
``[conductor] build_not_taken_timeout`` to ``UntakenBuilds``, which
decides (``decide``):

* its host's compute service is up and the build was re-sent fewer than
  ``[conductor] build_recasts`` times: **re-cast** it to the same host,
  with what it was sent with the first time (``instances.build_args``,
  ``cellboot.objects.build_args``). A host that got the first cast after
  all drops the copy (``claim_build`` takes a build once);
* its host's service is down: **reschedule** it to its alternates, with
  the cell's reschedule flow, as if the host had failed the build;
* re-sent as often as allowed to a live host: nothing more; the build
  waits for ``build_timeout``, which ends it in ERROR;
* already rescheduling (its host failed it and handed it back, but the
  ``build_instances`` cast to the conductors was lost; or a sweep took
  it off its host and could not start the flow): **reschedule** it,
  with the retry state stored with it (which counts the host already).

Each action is a conditional update on exactly what was selected
(building, untaken, on that host, unchanged since the cutoff) written
with its action event (``conductor_build_recast``,
``conductor_build_not_taken``) in one transaction, so that of two
conductors sweeping at once one acts, and a host that takes the build
meanwhile wins. A reschedule first takes the build off its host
(task_state rescheduling: the host can no longer take it), gives back
the host's claim, then starts the reschedule flow, whose uuid is derived
from the attempt: a step that fails (the scheduler does not answer) is
tried again at the next sweep and never makes a second flow.
"""

from oslo_log import log as logging

from cellboot.builds import fates
from cellboot.compute import registration
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db import batches
from cellboot.db.cell import connection as cell_connection
from cellboot import exception
from cellboot.objects import build_args as build_args_obj
from cellboot.objects import compute_node as compute_node_obj
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action as action_obj
from cellboot.objects import service as service_obj

LOG = logging.getLogger(__name__)

# The events an untaken build records under its create action.
EVENT_RECAST = 'conductor_build_recast'
EVENT_NOT_TAKEN = 'conductor_build_not_taken'

# What ``decide`` returns.
RECAST = 'recast'
RESCHEDULE = 'reschedule'
WAIT = 'wait'


def decide(host_up, recasts, max_recasts):
    """What to do with an untaken build; see the module docstring."""
    if not host_up:
        return RESCHEDULE
    if recasts < max_recasts:
        return RECAST
    return WAIT


def is_untaken(instance):
    """Building on a host that has not taken it (or being moved off)."""
    return instance.host is not None and instance.task_state in (
        None, instance_obj.task_states.RESCHEDULING)


class UntakenBuilds:
    """The cell conductor's part; ``manager`` is its manager.

    Uses ``manager.cell_mapping``, ``scheduler`` (``release_resources``),
    ``compute_rpcapi`` (the re-cast) and ``build_instances`` (the
    reschedule flow, started in this process as if cast to it).
    """

    def __init__(self, manager):
        self.manager = manager

    def handle(self, context, instance, cutoff):
        """Act on one untaken build; RECAST, RESCHEDULE, or None."""
        timeout = CONF.conductor.build_not_taken_timeout
        cell = self.manager.cell_mapping
        with cb_context.target_cell(context, cell) as cctxt:
            host_up = self._host_up(cctxt, instance.host)
            rctxt = fates.creating_context(cctxt, instance)
        rescheduling = (instance.task_state ==
                        instance_obj.task_states.RESCHEDULING)
        if rescheduling:
            # A reschedule that did not get its flow started (its host
            # handed it back, or an earlier sweep took it off): go on.
            todo = RESCHEDULE
        else:
            todo = decide(host_up, instance.build_recasts,
                          CONF.conductor.build_recasts)
        if todo == RECAST:
            return RECAST if self._recast(rctxt, instance, cutoff,
                                          timeout) else None
        if todo == RESCHEDULE:
            reason = (f'its reschedule off host {instance.host} had not '
                      f'started after {timeout} s' if rescheduling else
                      f'host {instance.host} had not taken the build '
                      f'after {timeout} s and its compute service is down')
            return RESCHEDULE if self._reschedule(
                rctxt, instance, cutoff, reason) else None
        LOG.debug('Instance %s: host %s has not taken the build after %d '
                  're-sends; left to the build timeout', instance.uuid,
                  instance.host, instance.build_recasts)
        return None

    @staticmethod
    def _host_up(cctxt, host):
        try:
            service = service_obj.Service.get_by_host_and_binary(
                cctxt, host, registration.BINARY)
        except exception.ServiceNotFound:
            return False
        return service.is_up(CONF.scheduler.service_down_time)

    def _recorded(self, rctxt, uuid, change, event, details, host):
        """``change(cctxt)`` and, if it acted, ``event``; whether it did."""
        with cb_context.target_cell(rctxt, self.manager.cell_mapping) as \
                cctxt, batches.transaction(
                    cctxt, cell_connection.pick_context_manager(cctxt)):
            if not change(cctxt):
                return False
            try:
                started = action_obj.InstanceActionEvent.event_start(
                    cctxt, uuid, rctxt.request_id, event,
                    host=host)
            except exception.InstanceActionNotFound:
                return True  # the history is gone; the build is not
            started.finish(cctxt, action_obj.RESULT_SUCCESS, details=details)
        return True

    def _recast(self, rctxt, instance, cutoff, timeout):
        count = instance.build_recasts + 1
        details = (f'Re-sent to host {instance.host} ({count} of '
                   f'{CONF.conductor.build_recasts}): not taken after '
                   f'{timeout} s')

        if not self._recorded(
                rctxt, instance.uuid,
                lambda cctxt: instance.recast_build(cctxt, cutoff),
                EVENT_RECAST, details, instance.host):
            return False
        args = _args_of(instance)
        LOG.warning('Instance %s: %s', instance.uuid, details)
        try:
            self.manager.compute_rpcapi.build_and_run_instance(
                rctxt, instance.host, instance.to_dict(), args['host_list'],
                args['request_spec'], args['retry'])
        except Exception as exc:
            LOG.warning('Instance %s: the build could not be re-sent to '
                        'host %s (%s); trying again in %s s', instance.uuid,
                        instance.host, exc,
                        CONF.conductor.build_not_taken_timeout)
        return True

    def _reschedule(self, rctxt, instance, cutoff, reason):
        host, node = instance.host, instance.node

        if not self._recorded(
                rctxt, instance.uuid,
                lambda cctxt: instance.start_reschedule(cctxt, cutoff),
                EVENT_NOT_TAKEN, f'{reason}; rescheduling', host):
            return False
        LOG.warning('Instance %s: %s; rescheduling it', instance.uuid, reason)
        try:
            self._release_host_claim(rctxt, instance.uuid, host, node)
            args = _args_of(instance)
            self.manager.build_instances(
                rctxt, instance.to_dict(), args['request_spec'],
                args['host_list'],
                build_args_obj.next_retry(args['retry'], host, node,
                                          reason))
        except Exception:
            LOG.exception('Instance %s: could not reschedule it yet; '
                          'trying again in %s s', instance.uuid,
                          CONF.conductor.build_not_taken_timeout)
        return True

    def _release_host_claim(self, rctxt, uuid, host, node):
        """Give back what ``uuid`` holds on the host it leaves."""
        with cb_context.target_cell(rctxt, self.manager.cell_mapping) as \
                cctxt:
            try:
                provider = compute_node_obj.ComputeNode.get_by_host_and_node(
                    cctxt, host, node).uuid
            except exception.ComputeNodeNotFound:
                return  # no node, no provider, no claim there
        self.manager.scheduler.release_resources(rctxt, uuid,
                                                 provider_uuid=provider)


def _args_of(instance):
    """What to send the build with: as stored, or nothing to go on."""
    if instance.build_args is None:
        LOG.warning('Instance %s has no readable build arguments (written '
                    'before they were kept, or damaged): it is sent without '
                    'alternates', instance.uuid)
        return build_args_obj.empty()
    return instance.build_args
