"""The compute manager: a compute host's part of the boot workflow.

At start it makes its cell and the scheduler know the host: a service row
and a compute node row in its cell database (the node keeps its uuid
across restarts, since that uuid is also its resource provider's) and a
provider report with the inventory of its driver; the builds it was
spawning when it stopped are ended in ERROR (``end_interrupted_builds``).
It then heartbeats.

Its one RPC method (served by ``rpc_endpoint.ComputeEndpoint``),
``build_and_run_instance``, takes a build the boot or reschedule flow
handed to this host, whose resources the scheduler has already claimed
for the instance:

1. the host takes the build with a conditional update (building, no
   task yet → task_state spawning on this host), so that of two copies
   of one message (a redelivery, a resumed flow replaying its cast) only
   one builds; the other is dropped and keeps the claim, which is the
   build's. An instance that is gone, settled otherwise, or meant for
   another host has its claim on this host given back and is not built;
2. the driver spawns it (action event ``compute_build_and_run_instance``);
3. success: ACTIVE with node and launched_at, written only if the
   build is still the one this host took (building, spawning, here); if
   it was deleted, timed out (ERROR, see
   ``cellboot.conductor.build_timeouts``) or moved to another host
   during the spawn, the server is removed and this host's claim given
   back;
4. a reschedulable failure: the claim is given back, the failure counted
   against the host, the build handed back (task_state rescheduling,
   with the remaining alternates and the retry state stored with it)
   and ``build_instances`` cast to the cell conductor with them, for it
   to try the next one. A cast that cannot be sent (the cell's bus is
   down) leaves it so: the cell conductors' check of untaken builds
   reschedules it once it has waited ``[conductor]
   build_not_taken_timeout``;
5. an aborted build: ERROR with a fault, the claim given back.

A cell database that cannot be reached for a while (a restart, a
failover) does not fail a build: every write of a build above rides the
outage out (``cellboot.db.outage``, for ``[database]
outage_retry_seconds``). Each retry is right even if the attempt before
it committed and only its answer was lost: taking, settling and failing
the build find their own earlier commit, and the other writes set again
the values they set (``cellboot.compute.build_records``).

The manager holds no API database credentials (services in a cell never
do): it reaches the resource tables through its ``scheduler`` and the
cell conductor through ``cell_conductor``, both duck-typed clients given
to it (the RPC clients in a service, in-process ones in tests). What
it tells the scheduler of itself (its provider, its builds' results,
the claims it gives back), none of which may hold a build up, is
``scheduler_reports``.
"""

import functools
import threading
import traceback

from oslo_log import log as logging

from cellboot.builds import fates
from cellboot.compute import build_records
from cellboot.compute import registration
from cellboot.compute import scheduler_reports
from cellboot.compute.virt import driver as virt_driver
from cellboot.conf import CONF
from cellboot import exception
from cellboot import metrics
from cellboot import notifications
from cellboot.objects import build_args
from cellboot.objects import fault_messages
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action

LOG = logging.getLogger(__name__)

BINARY = registration.BINARY

# The instance action that a boot is recorded under, and this host's step.
ACTION_CREATE = build_records.ACTION_CREATE
EVENT_BUILD = build_records.EVENT_BUILD
# The event of a build that the host's restart interrupted.
EVENT_RESTART = 'compute_init_host'

# Fault code of a build that failed on the host (HTTP-like, as in Nova).
FAULT_CODE = 500

vm_states = instance_obj.vm_states


class ComputeManager:
    """A compute host: registration, heartbeat and builds."""

    def __init__(self, host, scheduler, cell_conductor, driver=None,
                 cell_name=None):
        self.host = host
        self.scheduler = scheduler
        self.cell_conductor = cell_conductor
        self.driver = driver or virt_driver.load_driver(CONF.compute.driver,
                                                        host)
        self.cell_name = cell_name or CONF.cell_name
        self.service = None
        self.node = None
        self._heartbeat = None
        # The provider report, build results and claim releases, and
        # what of them the scheduler has yet to take.
        self._reports = scheduler_reports.SchedulerReports(
            host, self.cell_name)
        self._lock = threading.Lock()
        # The instances whose build message this process handles now:
        # a second message for one of them is dropped at once, so that a
        # retried take (``_take_build``) that finds the build taken here
        # knows it took it.
        self._in_hand = set()

    # -- start-up and heartbeat -------------------------------------------

    def init_host(self, context, report_provider=True):
        """Register the service and compute node, then the provider.

        Safe to repeat (a restart reuses the rows and the node's uuid).
        The provider report makes the host schedulable, so a service
        passes ``report_provider=False`` and reports once its RPC server
        listens (a cast sent before that would be lost).
        """
        if not self.cell_name:
            raise exception.ConfigurationError(
                reason='a compute host needs [DEFAULT] cell_name, the name '
                       'of its cell (cellboot-manage cell_v2 list_cells)')
        registration.check_configuration()
        self.service = registration.register_service(context, self.host)
        self.service.report_up(context)
        self.node = registration.register_node(
            context, self.host, self.driver.get_available_resource())
        self.end_interrupted_builds(context)
        if report_provider:
            self.report_provider(context)

    def end_interrupted_builds(self, context):
        """ERROR the builds this host was spawning when it stopped.

        A build this host took (building, spawning here) is this host's
        alone, and a host that starts spawns nothing yet: the spawn died
        with the previous process. Rather than leave the instance to the
        conductors' BUILD timeout, it is ended now, as Nova does: ERROR
        with the fault ``Host H restarted while building it``, an action
        event, its guest removed and its claims given back. Conditional
        (still spawning here), so a conductor timing it out at the same
        moment acts, or this host does, not both. Returns how many.
        """
        message = f'Host {self.host} restarted while building it'
        ended = 0
        for instance in instance_obj.Instance.get_spawning_on_host(
                context, self.host):
            if not fates.end_build_in_error(
                    context, instance,
                    functools.partial(instance.fail_interrupted_build,
                                      host=self.host),
                    message, EVENT_RESTART, host=self.host, code=FAULT_CODE,
                    user_message=fault_messages.BUILD_INTERRUPTED):
                continue
            LOG.warning('Instance %s: %s; set to ERROR', instance.uuid,
                        message)
            self.driver.destroy(context, instance)
            self._reports.release_claim(context, self.scheduler,
                                        instance.uuid)
            ended += 1
        return ended

    def report_provider(self, context):
        """Report the node to the scheduler as a resource provider
        (``SchedulerReports.report_provider``): until it has taken it,
        every heartbeat reports again."""
        self._reports.report_provider(context, self.scheduler, self.node)

    def report_state(self, context):
        """One heartbeat (and the provider report, if still owed)."""
        self.service.report_up(context)
        if not self._reports.provider_reported:
            self.report_provider(context)
        self._reports.retry_releases(context, self.scheduler)

    def start_heartbeat(self, interval=None):
        """Heartbeat every ``interval`` s (``[compute] report_interval``)."""
        self.stop()
        self._heartbeat = registration.Heartbeat(
            self.report_state, interval or CONF.compute.report_interval,
            f'Heartbeat of host {self.host}')
        self._heartbeat.start()

    def stop(self):
        """Stop heartbeating (the RPC server is stopped by its owner)."""
        if self._heartbeat is not None:
            self._heartbeat.stop()
            self._heartbeat = None

    # -- builds ------------------------------------------------------------

    def build_and_run_instance(self, context, instance, host_list,
                               request_spec, retry=None):
        """Build ``instance`` (a dict) here; see the module docstring.

        ``host_list``: the remaining alternates (Selection dicts), passed
        on untouched on a reschedule; ``retry``: the retry state (see
        ``next_retry``).
        """
        uuid = instance['uuid']
        with self._lock:
            if uuid in self._in_hand:
                LOG.info('Instance %s is being built on host %s already; a '
                         'repeated build message is dropped', uuid,
                         self.host)
                return
            self._in_hand.add(uuid)
        try:
            self._build(context, uuid, host_list, request_spec, retry)
        finally:
            with self._lock:
                self._in_hand.discard(uuid)

    def _build(self, context, uuid, host_list, request_spec, retry):
        taken = self._instance_to_build(context, uuid)
        if taken is None:
            return
        current, event = taken
        notifications.instance_create(context, current, 'start',
                                      publisher=self._publisher)
        flavor = current.flavor or (request_spec or {}).get('flavor')
        try:
            self.driver.spawn(context, current, flavor)
        except exception.BuildAbortedFailure as exc:
            self._abort(context, current, event, exc)
        except exception.RescheduledBuildFailure as exc:
            self._reschedule(context, current, event, exc, host_list,
                             request_spec, retry)
        except Exception as exc:
            LOG.exception('Virt driver failed to build instance %s', uuid)
            notifications.compute_exception(context, exc,
                                            publisher=self._publisher)
            failure = exception.RescheduledBuildFailure(
                uuid=uuid, host=self.host,
                reason=f'{type(exc).__name__}: {exc}')
            self._reschedule(context, current, event, failure, host_list,
                             request_spec, retry,
                             trace=traceback.format_exc())
        else:
            self._finish(context, current, event)

    def _instance_to_build(self, context, uuid):
        """(instance, its build event) if this host takes it, else None.

        Taken: see ``Instance.claim_build``. Not taken: a build that is
        this host's already (spawning here, or ACTIVE here) is a repeated
        message and keeps its claim; an instance that is gone or settled
        in another way, or meant for another host, gets its claim on
        this host released (the claim on this host only: another host's
        is that host's).
        """
        current = instance_obj.Instance(uuid=uuid)
        try:
            event = build_records.take(context, current, self.host,
                                       self.node.hypervisor_hostname)
            if event is not None:
                return current, event
        except exception.InstanceNotFound:
            LOG.info('Instance %s was deleted before host %s built it',
                     uuid, self.host)
            self._release_claim(context, uuid)
            return None
        if current.host == self.host and current.vm_state in (
                vm_states.BUILDING, vm_states.ACTIVE):
            LOG.info('Instance %s is already %s on host %s; a repeated '
                     'build message is dropped', uuid,
                     current.task_state or current.vm_state, self.host)
            return None
        if current.vm_state == vm_states.BUILDING:
            LOG.warning('Instance %s is meant for host %s, not %s; a stale '
                        'build message is dropped', uuid, current.host,
                        self.host)
        else:
            LOG.info('Instance %s is %s, not building; host %s does not '
                     'build it', uuid, current.vm_state, self.host)
        self._release_claim(context, uuid)
        return None

    def _finish(self, context, current, event):
        try:
            build_records.settle(context, current, event, self.host,
                                 self.node.hypervisor_hostname,
                                 zone=CONF.compute.availability_zone)
        except (exception.InstanceNotFound,
                exception.UnexpectedVMState) as exc:
            LOG.info('Instance %s changed while host %s built it (%s); '
                     'removing it from the host', current.uuid, self.host,
                     exc)
            self.driver.destroy(context, current)
            self._release_claim(context, current.uuid)
            build_records.end_event(context, event,
                                    instance_action.RESULT_ERROR,
                                    details=str(exc))
            return
        self._record_build_result(context, True)
        metrics.boot_ended(metrics.ACTIVE)
        LOG.info('Instance %s is active on host %s', current.uuid,
                 self.host)
        notifications.instance_create(context, current, 'end',
                                      publisher=self._publisher)

    def _reschedule(self, context, current, event, failure, host_list,
                    request_spec, retry, trace=None):
        LOG.info('Build of instance %s failed on host %s, rescheduling: %s',
                 current.uuid, self.host, failure)
        self.driver.destroy(context, current)
        self._release_claim(context, current.uuid)
        self._record_build_result(context, False)
        build_records.end_event(context, event, instance_action.RESULT_ERROR,
                                details=str(failure), traceback=trace)
        args = build_args.make(
            host_list, request_spec,
            build_args.next_retry(retry, self.host,
                                  self.node.hypervisor_hostname,
                                  str(failure)))
        try:
            build_records.hand_back(context, current, args)
        except (exception.InstanceNotFound,
                exception.UnexpectedVMState) as exc:
            LOG.info('Instance %s changed while host %s built it (%s); it '
                     'is not rescheduled', current.uuid, self.host, exc)
            return
        notifications.build_rescheduled(context, current.uuid, self.host,
                                        failure, publisher=self._publisher)
        try:
            self.cell_conductor.build_instances(
                context, instance=current.to_dict(),
                request_spec=request_spec, host_list=args['host_list'],
                retry=args['retry'])
        except Exception as exc:
            LOG.warning('Could not hand instance %s back to the conductors '
                        'of cell %s (%s); it waits, rescheduling, for them '
                        'to find it ([conductor] build_not_taken_timeout)',
                        current.uuid, self.cell_name, exc)

    def _abort(self, context, current, event, failure):
        LOG.warning('Build of instance %s on host %s aborted: %s',
                    current.uuid, self.host, failure)
        self.driver.destroy(context, current)
        self._release_claim(context, current.uuid)
        self._record_build_result(context, False)
        build_records.end_event(context, event, instance_action.RESULT_ERROR,
                                details=str(failure))
        self._set_error(context, current, event, failure)

    def _set_error(self, context, current, event, failure):
        """ERROR with a fault saying why; the create action ends in Error.

        The caller has released the claim. See ``build_records.fail``.
        """
        _code, message, details = fault_messages.describe(failure)
        if build_records.fail(context, current, event, FAULT_CODE, message,
                              details, self.host):
            notifications.instance_create(context, current, 'error',
                                          error=failure,
                                          publisher=self._publisher)

    @property
    def _publisher(self):
        """The notifications' publisher_id: Nova's BINARY:HOST."""
        return f'{BINARY}:{self.host}'

    def _record_build_result(self, context, succeeded):
        self._reports.record_build_result(context, self.scheduler,
                                          self.node, succeeded)

    def _release_claim(self, context, instance_uuid):
        """Give back what the instance holds on this host (idempotent,
        never raises: ``SchedulerReports.release_claim``)."""
        self._reports.release_claim(context, self.scheduler, instance_uuid,
                                    provider_uuid=self.node.uuid)
