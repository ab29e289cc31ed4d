"""A small deployment for the workflow tests, on real databases.

Not a test module. ``FleetTestCase`` maps cell0 and ``CELLS`` cells,
puts compute hosts in them (compute node, heartbeating service, resource
provider, host mapping), starts the scheduler library on them and makes
boot requests the way the API does (build requests, request specs and
instance mappings without a cell). ``ComputeCasts`` stands in for the
compute hosts' RPC client and records what would have been cast.
``FlowFence`` gives the atoms a run's fence (on any of the fleet's
databases) and takes the flow over behind the run's back; ``Stalling``
makes a collaborator's call the moment a run stalls and is taken over.
"""

from oslo_utils import uuidutils

from cellboot import context
from cellboot.db.cell import connection as cell_connection
from cellboot.flowrun import fencing
from cellboot.db.api import models as api_models
from cellboot.objects import build_request
from cellboot.objects import cell_mapping
from cellboot.objects import compute_node
from cellboot.objects import host_mapping
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action
from cellboot.objects import instance_fault
from cellboot.objects import instance_mapping
from cellboot.objects import request_spec
from cellboot.objects import service
from cellboot.scheduler import host_state_cache
from cellboot.scheduler import in_process
from cellboot.scheduler.resources import usage
from cellboot.workflows import tasks
from tests import base
from tests import fixtures as cb_fixtures

SMALL = {'vcpus': 1, 'memory_mb': 512, 'root_gb': 10, 'flavorid': 'small',
         'name': 'small'}


class ComputeCasts:
    """Records ``build_and_run_instance`` casts, per cell; can fail them."""

    def __init__(self):
        self.casts = []
        self.fail_with = None
        self.cell = None

    def __call__(self, cell_mapping):
        self.cell = cell_mapping
        return self

    def build_and_run_instance(self, ctxt, host, instance, host_list,
                               request_spec, retry):
        if self.fail_with is not None:
            raise self.fail_with
        self.casts.append({'cell': self.cell and self.cell.name,
                           'host': host,
                           'instance': instance, 'host_list': host_list,
                           'request_spec': request_spec, 'retry': retry})

    def by_instance(self):
        return {cast['instance']['uuid']: cast for cast in self.casts}


class FlowFence:
    """A flow's fence in a cell's database, and a run holding it.

    ``fence`` is the run's (first generation, as its creator's run);
    ``fresh``: seconds a proof stands for a new one (0: every check
    queries, as once a run stalled longer than
    ``fencing.FRESH_SECONDS``). ``take_over()`` is another conductor
    taking the flow: from then on the run is fenced out.
    """

    def __init__(self, cell, fresh=0.0):
        self.engine = cell_connection.get_engine(cell.database_connection)
        fencing.sync(self.engine)
        self.flow_uuid = uuidutils.generate_uuid()
        with self.engine.begin() as conn:
            fencing.insert_first(conn, self.flow_uuid)
        self.fence = fencing.Fence(self.flow_uuid, fencing.FIRST,
                                   self.engine, fresh=fresh)

    def take_over(self):
        with self.engine.begin() as conn:
            return fencing.advance(conn, self.flow_uuid)


class Stalling:
    """``target`` whose ``method`` calls ``meanwhile()`` once it returned.

    What a run sees when it stalled inside a step, right after that
    call, while another conductor took its flow over.
    """

    def __init__(self, target, method, meanwhile):
        self._target = target
        self._method = method
        self._meanwhile = meanwhile

    def __getattr__(self, name):
        attr = getattr(self._target, name)
        if name != self._method:
            return attr

        def stalled(*args, **kwargs):
            result = attr(*args, **kwargs)
            self._meanwhile()
            return result
        return stalled


class FleetTestCase(base.DatabaseTestCase):
    """cell0 plus ``CELLS`` mapped cells (one by default), a scheduler."""

    CELLS = 1

    def setUp(self):
        super().setUp()
        self.flags(max_retries=0, group='database')
        self.ctx = context.RequestContext(user_id='alice', project_id='p1')
        cell0_url = self.useFixture(
            cb_fixtures.Database(self.BACKEND, schema='cell')).url
        self.cell0 = cell_mapping.CellMapping.create(
            self.ctx, 'cell0', cell0_url, 'none:///',
            uuid=api_models.CELL0_UUID)
        self.cells = [
            cell_mapping.CellMapping.create(
                self.ctx, f'cell{i + 1}', url, 'fake://')
            for i, url in enumerate(self.dbs.cell_urls)]
        self.schedulers = in_process.InProcessSchedulers()
        for cell in self.cells:
            self.schedulers.add_cell(cell)
        # The API level's, and the first cell's (what a cell's
        # conductor calls).
        self.scheduler = self.schedulers.top
        self.cell_scheduler = self.schedulers.cell(self.cells[0])
        self.compute = ComputeCasts()
        # The boot flow's per-run store value, as one run would have it.
        self.cell_mappings = tasks.CellMappings(self.ctx)

    def add_host(self, name, cell=0, vcpus=4, memory_mb=4096, disk_gb=100,
                 mapped=True):
        """A compute host of ``self.cells[cell]``; returns its node uuid."""
        cell_mapping_ = self.cells[cell]
        with context.target_cell(self.ctx, cell_mapping_) as cctxt:
            node = compute_node.ComputeNode.create(
                cctxt, name, name, vcpus, memory_mb, disk_gb)
            svc = service.Service.create(cctxt, name,
                                         host_state_cache.COMPUTE_BINARY)
            svc.report_up(cctxt)
        self.schedulers.cell(cell_mapping_).update_provider(
            self.ctx, node.uuid, name,
            {'VCPU': {'total': vcpus}, 'MEMORY_MB': {'total': memory_mb},
             'DISK_GB': {'total': disk_gb}})
        if mapped:
            host_mapping.HostMapping.create(self.ctx, name,
                                            cell_mapping_.uuid)
        return node.uuid

    def start_scheduler(self):
        self.schedulers.start(self.ctx, refresh_interval=0)
        self.addCleanup(self.schedulers.stop)

    def request(self, count=1, flavor=None, **spec_values):
        """A boot request as the API persists it; returns (store, uuids).

        ``store`` is the boot flow's persisted store.
        """
        flavor = dict(flavor or SMALL)
        spec = dict(spec_values, flavor=flavor, num_instances=count,
                    project_id=self.ctx.project_id,
                    user_id=self.ctx.user_id)
        build_requests = {}
        uuids = []
        for index in range(count):
            uuid = uuidutils.generate_uuid()
            instance = {'uuid': uuid, 'display_name': f'server-{index}',
                        'flavor': flavor, 'image_ref': 'cirros',
                        'metadata': {'index': str(index)}}
            build_request.BuildRequest.create(
                self.ctx, uuid, self.ctx.project_id, instance,
                user_id=self.ctx.user_id)
            request_spec.RequestSpec.create(self.ctx, uuid, spec)
            instance_mapping.InstanceMapping.create(
                self.ctx, uuid, self.ctx.project_id,
                user_id=self.ctx.user_id)
            build_requests[uuid] = {'instance_uuid': uuid,
                                    'project_id': self.ctx.project_id,
                                    'user_id': self.ctx.user_id,
                                    'instance': instance}
            uuids.append(uuid)
        store = {'instance_uuids': uuids, 'build_requests': build_requests,
                 'request_spec': spec}
        return store, uuids

    # -- reading back ------------------------------------------------------

    def instance_in(self, cell, uuid, read_deleted=False):
        with context.target_cell(self.ctx, cell) as cctxt:
            return instance_obj.Instance.get_by_uuid(
                cctxt, uuid, read_deleted=read_deleted)

    def fault_of(self, cell, uuid):
        with context.target_cell(self.ctx, cell) as cctxt:
            return instance_fault.InstanceFault.get_latest_for_instances(
                cctxt, [uuid]).get(uuid)

    def target(self, cell):
        return context.target_cell(self.ctx, cell)

    @staticmethod
    def action_of(cctxt, uuid):
        """The instance's latest action in the targeted cell."""
        return instance_action.InstanceAction.get_by_instance_uuid(
            cctxt, uuid)[0]

    def events_in(self, cell, uuid):
        """The events of the instance's actions in ``cell``, in order."""
        with context.target_cell(self.ctx, cell) as cctxt:
            actions = instance_action.InstanceAction.get_by_instance_uuid(
                cctxt, uuid)
            return [event for action in reversed(actions) for event in
                    instance_action.InstanceActionEvent.get_by_action(
                        cctxt, action.id)]

    def mapped_cell(self, uuid):
        mapping = instance_mapping.InstanceMapping.get_by_instance_uuid(
            self.ctx, uuid)
        return mapping.cell_mapping and mapping.cell_mapping.name

    def has_build_request(self, uuid):
        return any(br.instance_uuid == uuid for br in
                   build_request.BuildRequest.get_all(self.ctx))

    def held(self, uuid):
        """What ``uuid`` holds, in whichever cell's database."""
        held = {}
        for cell in self.cells:
            with context.target_cell(self.ctx, cell) as cctxt:
                held.update(usage.get_allocations_for_consumer(cctxt, uuid))
        return held
