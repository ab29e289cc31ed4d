"""The compute manager: a compute host's part of the boot workflow.

At start it makes its cell and the scheduler know the host: a service row
and a compute node row in its cell database (the node keeps its uuid
across restarts, since that uuid is also its resource provider's) and a
provider report with the inventory of its driver. It then heartbeats.

Its one RPC method (served by ``ComputeEndpoint``),
``build_and_run_instance``, takes a build the boot or reschedule flow
handed to this host, whose resources the scheduler has already claimed
for the instance:

1. the instance must still be there and building, else the claim on this
   host is given back and nothing is built (deleted meanwhile);
2. the driver spawns it (action event ``compute_build_and_run_instance``);
3. success: ACTIVE with host, node and launched_at, written only if the
   instance is still building; if it was deleted during the spawn, the
   server is removed and the claim given back;
4. a reschedulable failure: the claim is given back, the failure counted
   against the host, and ``build_instances`` cast to the cell conductor
   with the remaining alternates and the retry state, for it to try the
   next one;
5. an aborted build: ERROR with a fault, the claim given back.

The manager holds no API database credentials (services in a cell never
do): it reaches the resource tables through its ``scheduler`` and the
cell conductor through ``cell_conductor``, both duck-typed clients given
to it (the RPC clients in a service, in-process ones in tests).
"""

import threading
import traceback

from oslo_log import log as logging
import oslo_messaging
from oslo_utils import timeutils

from cellboot.compute.virt import driver as virt_driver
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import compute_node
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action
from cellboot.objects import instance_fault
from cellboot.objects import service as service_obj
from cellboot.rpc import client as rpc_client
from cellboot.scheduler import host_state_cache
from cellboot.workflows import fates

LOG = logging.getLogger(__name__)

# The binary the scheduler's ComputeFilter looks for in the services.
BINARY = host_state_cache.COMPUTE_BINARY

# The instance action that a boot is recorded under, and this host's step.
ACTION_CREATE = fates.CREATE_ACTION
EVENT_BUILD = 'compute_build_and_run_instance'

# Fault code of a build that failed on the host (HTTP-like, as in Nova).
FAULT_CODE = 500

vm_states = instance_obj.vm_states


def next_retry(retry, host, node, failure):
    """The retry state after a failed attempt on ``host``/``node``.

    ``retry`` is what this attempt came with ({'num_attempts',
    'hosts', 'last_failure'}; None on the first attempt): the number of
    attempts made and the [host, node] pairs tried so far, this one not
    yet among them.
    """
    retry = retry or {}
    return {'num_attempts': retry.get('num_attempts', 0) + 1,
            'hosts': [list(pair) for pair in retry.get('hosts', [])] +
            [[host, node]],
            'last_failure': failure}


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
        self._provider_reported = False
        self._stopping = threading.Event()
        self._heartbeat = None

    # -- start-up and heartbeat -------------------------------------------

    def init_host(self, context):
        """Register service, compute node and resource provider.

        Safe to repeat (a restart reuses the rows and the node's uuid).
        A scheduler that does not answer yet is asked again at each
        heartbeat; any other refusal (an unknown cell name, a provider
        name taken by another node) is raised: it needs an operator.
        """
        if not self.cell_name:
            raise exception.ConfigurationError(
                reason='a compute host needs [DEFAULT] cell_name, the name '
                       'of its cell (cellboot-manage cell_v2 list_cells)')
        self.service = self._register_service(context)
        self.service.report_up(context)
        self.node = self._register_node(context)
        self._report_provider(context)

    def _register_service(self, context):
        try:
            return service_obj.Service.get_by_host_and_binary(
                context, self.host, BINARY)
        except exception.ServiceNotFound:
            pass
        try:
            return service_obj.Service.create(context, self.host, BINARY)
        except exception.ServiceExists:
            # Another agent with our name registered it just now.
            return service_obj.Service.get_by_host_and_binary(
                context, self.host, BINARY)

    def _register_node(self, context):
        resources = self.driver.get_available_resource()
        nodename = resources['hypervisor_hostname']
        values = {'vcpus': resources['vcpus'],
                  'memory_mb': resources['memory_mb'],
                  'local_gb': resources['local_gb'],
                  'cpu_allocation_ratio': CONF.compute.cpu_allocation_ratio,
                  'ram_allocation_ratio': CONF.compute.ram_allocation_ratio,
                  'disk_allocation_ratio':
                      CONF.compute.disk_allocation_ratio}
        try:
            node = compute_node.ComputeNode.get_by_host_and_node(
                context, self.host, nodename)
        except exception.ComputeNodeNotFound:
            try:
                node = compute_node.ComputeNode.create(
                    context, self.host, nodename, **values)
                LOG.info('Registered compute node %s (%s) of host %s',
                         nodename, node.uuid, self.host)
                return node
            except exception.ComputeNodeExists:
                node = compute_node.ComputeNode.get_by_host_and_node(
                    context, self.host, nodename)
        changed = {name: value for name, value in values.items()
                   if getattr(node, name) != value}
        if changed:
            LOG.info('Compute node %s of host %s changed: %s', nodename,
                     self.host, changed)
            node.update(context, **changed)
        return node

    def inventories(self):
        """The node's capacity as the scheduler's inventories."""
        node = self.node
        inventories = {
            'VCPU': {'total': node.vcpus,
                     'allocation_ratio': node.cpu_allocation_ratio},
            'MEMORY_MB': {'total': node.memory_mb,
                          'allocation_ratio': node.ram_allocation_ratio},
        }
        if node.local_gb:
            inventories['DISK_GB'] = {
                'total': node.local_gb,
                'allocation_ratio': node.disk_allocation_ratio}
        return inventories

    def _report_provider(self, context):
        try:
            self.scheduler.update_provider(
                context, uuid=self.node.uuid, name=self.host,
                cell_name=self.cell_name, inventories=self.inventories(),
                availability_zone=CONF.compute.availability_zone)
        except exception.RPCTimeout as exc:
            LOG.warning('Cannot report host %s to the scheduler yet, it is '
                        'not schedulable until then; retrying at the next '
                        'heartbeat: %s', self.host, exc)
            return
        self._provider_reported = True
        LOG.info('Host %s reported to the scheduler as resource provider '
                 '%s in cell %s', self.host, self.node.uuid, self.cell_name)

    def report_state(self, context):
        """One heartbeat (and the provider report, if still owed)."""
        self.service.report_up(context)
        if not self._provider_reported:
            self._report_provider(context)

    def start_heartbeat(self, interval=None):
        """Heartbeat every ``interval`` s (``[compute] report_interval``)."""
        interval = interval or CONF.compute.report_interval
        self._stopping.clear()
        self._heartbeat = threading.Thread(
            target=self._heartbeat_loop, args=(interval,),
            name=f'heartbeat-{self.host}', daemon=True)
        self._heartbeat.start()

    def _heartbeat_loop(self, interval):
        context = cb_context.get_admin_context()
        while not self._stopping.wait(interval):
            try:
                self.report_state(context)
            except Exception:
                # A database that is down now may be back at the next
                # beat; the scheduler sees the host as down meanwhile.
                LOG.exception('Heartbeat of host %s failed', self.host)

    def stop(self):
        """Stop heartbeating (the RPC server is stopped by its owner)."""
        self._stopping.set()
        if self._heartbeat is not None:
            self._heartbeat.join()
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
        current = self._instance_to_build(context, uuid)
        if current is None:
            return
        self._event_start(context, current)
        flavor = current.flavor or (request_spec or {}).get('flavor')
        try:
            self.driver.spawn(context, current, flavor)
        except exception.BuildAbortedFailure as exc:
            self._abort(context, current, exc)
        except exception.RescheduledBuildFailure as exc:
            self._reschedule(context, current, exc, host_list,
                             request_spec, retry)
        except Exception as exc:
            LOG.exception('Virt driver failed to build instance %s', uuid)
            failure = exception.RescheduledBuildFailure(
                uuid=uuid, host=self.host,
                reason=f'{type(exc).__name__}: {exc}')
            self._reschedule(context, current, failure, host_list,
                             request_spec, retry,
                             trace=traceback.format_exc())
        else:
            self._finish(context, current)

    def _instance_to_build(self, context, uuid):
        """The instance if this host should build it, else None.

        An instance that is gone or settled in another way gets its claim
        on this host released; an ACTIVE one is a repeated message for a
        build that succeeded, and keeps its claim.
        """
        try:
            current = instance_obj.Instance.get_by_uuid(context, uuid)
        except exception.InstanceNotFound:
            LOG.info('Instance %s was deleted before host %s built it',
                     uuid, self.host)
            self._release_claim(context, uuid)
            return None
        if current.vm_state == vm_states.ACTIVE:
            LOG.info('Instance %s is already active; a repeated build '
                     'message is dropped', uuid)
            return None
        if current.vm_state != vm_states.BUILDING:
            LOG.info('Instance %s is %s, not building; host %s does not '
                     'build it', uuid, current.vm_state, self.host)
            self._release_claim(context, uuid)
            return None
        if current.host not in (None, self.host):
            # Released on this host only: the claim is the other host's.
            LOG.warning('Instance %s is meant for host %s, not %s; a stale '
                        'build message is dropped', uuid, current.host,
                        self.host)
            self._release_claim(context, uuid)
            return None
        return current

    def _finish(self, context, current):
        try:
            current.update(context, expected_vm_state=vm_states.BUILDING,
                           vm_state=vm_states.ACTIVE, task_state=None,
                           host=self.host,
                           node=self.node.hypervisor_hostname,
                           launched_at=timeutils.utcnow())
        except (exception.InstanceNotFound,
                exception.UnexpectedVMState) as exc:
            LOG.info('Instance %s changed while host %s built it (%s); '
                     'removing it from the host', current.uuid, self.host,
                     exc)
            self.driver.destroy(context, current)
            self._release_claim(context, current.uuid)
            self._event_finish(context, current, False, details=str(exc))
            return
        self.scheduler.record_build_result(context, self.node.uuid, True)
        self._event_finish(context, current, True)
        self._action_finish(context, current)
        LOG.info('Instance %s is active on host %s', current.uuid,
                 self.host)

    def _reschedule(self, context, current, failure, host_list, request_spec,
                    retry, trace=None):
        LOG.info('Build of instance %s failed on host %s, rescheduling: %s',
                 current.uuid, self.host, failure)
        self.driver.destroy(context, current)
        self._release_claim(context, current.uuid)
        self.scheduler.record_build_result(context, self.node.uuid, False)
        self._event_finish(context, current, False, details=str(failure),
                           trace=trace)
        self.cell_conductor.build_instances(
            context, instance=current.to_dict(), request_spec=request_spec,
            host_list=list(host_list or []),
            retry=next_retry(retry, self.host, self.node.hypervisor_hostname,
                             str(failure)))

    def _abort(self, context, current, failure):
        LOG.warning('Build of instance %s on host %s aborted: %s',
                    current.uuid, self.host, failure)
        self.driver.destroy(context, current)
        instance_fault.InstanceFault.create(
            context, current.uuid, FAULT_CODE, str(failure),
            details=type(failure).__name__, host=self.host)
        try:
            current.update(context, expected_vm_state=vm_states.BUILDING,
                           vm_state=vm_states.ERROR, task_state=None)
        except (exception.InstanceNotFound, exception.UnexpectedVMState):
            LOG.info('Instance %s changed meanwhile; leaving it as it is',
                     current.uuid)
        self._release_claim(context, current.uuid)
        self.scheduler.record_build_result(context, self.node.uuid, False)
        self._event_finish(context, current, False, details=str(failure))
        self._action_finish(context, current,
                            message=instance_action.RESULT_ERROR)

    def _release_claim(self, context, instance_uuid):
        """Give back what the instance holds on this host (idempotent)."""
        self.scheduler.release_resources(
            context, instance_uuid, provider_uuid=self.node.uuid)

    # -- instance action events -------------------------------------------

    def _event_start(self, context, current):
        """Start this host's event, under the request's create action."""
        try:
            instance_action.InstanceActionEvent.event_start(
                context, current.uuid, context.request_id, EVENT_BUILD,
                host=self.host)
        except exception.InstanceActionNotFound:
            # The conductor starts the action; a build cast by hand (or
            # a lost write) did not, and the host's step must be on
            # record anyway.
            fates.start_create_action(context, current.uuid,
                                      current.project_id, current.user_id)
            instance_action.InstanceActionEvent.event_start(
                context, current.uuid, context.request_id, EVENT_BUILD,
                host=self.host)

    def _event_finish(self, context, current, succeeded, details=None,
                      trace=None):
        result = (instance_action.RESULT_SUCCESS if succeeded
                  else instance_action.RESULT_ERROR)
        instance_action.InstanceActionEvent.event_finish(
            context, current.uuid, context.request_id, EVENT_BUILD, result,
            traceback=trace, details=details)

    def _action_finish(self, context, current, message=None):
        """A build that settled here ends the create action."""
        action = instance_action.InstanceAction.get_by_request_id(
            context, current.uuid, context.request_id)
        action.finish(context, message=message)


class ComputeEndpoint:
    """Version 1.0 of a compute host's RPC interface.

    Only the builds are served: the manager's start-up and heartbeat
    methods are its owner's to call, not the bus's.
    """

    target = oslo_messaging.Target(version=rpc_client.VERSION)

    def __init__(self, manager):
        self.manager = manager

    def build_and_run_instance(self, context, instance, host_list,
                               request_spec, retry=None):
        self.manager.build_and_run_instance(context, instance, host_list,
                                            request_spec, retry)
