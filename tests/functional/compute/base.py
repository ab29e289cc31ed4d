"""Shared set-up for the compute manager's functional tests.

Not a test module. A compute host of cell ``cell1`` runs in-process
against real databases: its cell database is the local ``[database]
connection``; its scheduler is the cell's real scheduler
(``CellScheduler`` on that database, as ``cellboot-scheduler --cell
cell1`` runs it) behind its RPC endpoint, which takes the cell's name as
a compute host sends it; its cell conductor is a
recording client, so that a test reads what would have been cast (the
workflow's own tests run the real cell conductor).
"""

import time

from oslo_utils import uuidutils

from cellboot.compute import manager as compute_manager
from cellboot.compute.virt import fake
from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action
from cellboot.scheduler import api as scheduler_api
from cellboot.scheduler import host_state_cache
from cellboot.scheduler import rpc_endpoint
from cellboot.scheduler.resources import usage
from tests import base

CELL_NAME = 'cell1'
FLAVOR = {'flavorid': 'small', 'name': 'small', 'vcpus': 2,
          'memory_mb': 512, 'root_gb': 10}
RESOURCES = {'VCPU': 2, 'MEMORY_MB': 512, 'DISK_GB': 10}


class RecordingConductor:
    """A cell conductor client that records its casts."""

    def __init__(self):
        self.casts = []

    def build_instances(self, ctxt, instance, request_spec, host_list,
                        retry):
        self.casts.append({'instance': instance,
                           'request_spec': request_spec,
                           'host_list': host_list, 'retry': retry})


class UnreachableConductor:
    """A cell conductor client whose bus is down."""

    def build_instances(self, ctxt, instance, request_spec, host_list,
                        retry):
        raise exception.RPCTimeout(method='build_instances',
                                   topic='cellboot-conductor.cell1',
                                   timeout=60, url='rabbit://down/')


class HookedDriver(fake.FakeDriver):
    """The fake driver, running ``on_spawn(instance)`` inside each spawn.

    Lets a test act at the moment a build is under way (delete the
    instance, say) without sleeping and racing.
    """

    def __init__(self, host, on_spawn=None):
        super().__init__(host)
        self.on_spawn = on_spawn
        self.spawned = []

    def spawn(self, context, instance, flavor):
        self.spawned.append(instance.uuid)
        if self.on_spawn is not None:
            self.on_spawn(instance)
        super().spawn(context, instance, flavor)


class ComputeTestCase(base.DatabaseTestCase):
    """A mapped cell1 (the local cell database) and its scheduler."""

    def setUp(self):
        super().setUp()
        self.flags(max_retries=0, group='database')
        self.ctx = cb_context.get_admin_context()
        self.cell = cell_mapping.CellMapping.create(
            self.ctx, CELL_NAME, self.dbs.cell_urls[0], 'fake://')
        self.scheduler_api = scheduler_api.CellScheduler(
            host_state_cache.CellScope(CELL_NAME))
        self.scheduler = rpc_endpoint.CellSchedulerEndpoint(
            self.scheduler_api)
        self.conductor = RecordingConductor()

    def make_manager(self, host='host1', on_spawn=None):
        """A compute manager with a HookedDriver; not started."""
        return compute_manager.ComputeManager(
            host, self.scheduler, self.conductor,
            driver=HookedDriver(host, on_spawn), cell_name=CELL_NAME)

    def start_manager(self, host='host1', on_spawn=None):
        manager = self.make_manager(host, on_spawn)
        manager.init_host(self.ctx)
        self.addCleanup(manager.stop)
        return manager

    def new_context(self):
        """A user's request context, as an RPC message would carry it."""
        return cb_context.RequestContext(user_id='user', project_id='proj',
                                         is_admin=True)

    def create_building_instance(self, ctxt, manager, claim=True,
                                 start_action=True):
        """An instance the boot flow handed to ``manager``'s host.

        Building, on that host and node, its create action started, and
        (``claim``) its flavor claimed on the host's provider.
        """
        uuid = uuidutils.generate_uuid()
        instance = instance_obj.Instance.create(
            ctxt, uuid, ctxt.project_id, instance_obj.vm_states.BUILDING,
            user_id=ctxt.user_id, display_name='vm', flavor=dict(FLAVOR),
            host=manager.host, node=manager.node.hypervisor_hostname,
            availability_zone='nova')
        if start_action:
            instance_action.InstanceAction.start(
                ctxt, uuid, compute_manager.ACTION_CREATE, ctxt.request_id,
                user_id=ctxt.user_id, project_id=ctxt.project_id)
        if claim:
            self.scheduler.claim_resources(ctxt, uuid, manager.node.uuid,
                                           dict(RESOURCES))
        return instance

    def build(self, ctxt, manager, instance, host_list=(), retry=None):
        manager.build_and_run_instance(
            ctxt, instance.to_dict(), list(host_list),
            {'flavor': dict(FLAVOR), 'num_instances': 1}, retry)

    def held(self, consumer_uuid):
        """{provider uuid: {rc: used}} the consumer holds."""
        return usage.get_allocations_for_consumer(self.ctx, consumer_uuid)

    def reload(self, instance):
        return instance_obj.Instance.get_by_uuid(self.ctx, instance.uuid,
                                                 read_deleted=True)

    def events(self, ctxt, instance):
        action = instance_action.InstanceAction.get_by_request_id(
            ctxt, instance.uuid, ctxt.request_id)
        return action, instance_action.InstanceActionEvent.get_by_action(
            ctxt, action.id)


def wait_for(predicate, timeout=10.0, interval=0.05):
    """Poll ``predicate`` until it is true; False after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
