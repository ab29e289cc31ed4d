"""Shared set-up for host state and select_destinations tests.

Not a test module: builds a small fleet the way a deployment has one —
cell mappings in the API database, compute nodes and heartbeating compute
services in each cell database, a resource provider per node in the
node's cell database — and both levels of scheduler of one process
(``schedulers``: the API level's ``scheduler`` and one per cell) to find
it.
"""

from oslo_utils import uuidutils

from cellboot import context
from cellboot.objects import cell_mapping
from cellboot.objects import compute_node
from cellboot.objects import instance_mapping
from cellboot.objects import service
from cellboot.scheduler import host_state_cache
from cellboot.scheduler import in_process
from cellboot.scheduler.resources import claims
from cellboot.scheduler.resources import contention
from cellboot.scheduler.resources import providers
from cellboot.scheduler.resources import usage
from tests import base

SMALL = {'vcpus': 2, 'memory_mb': 2048, 'root_gb': 20, 'flavorid': 'small'}


def spec(flavor=None, **values):
    """A request spec dict with the SMALL flavor unless told otherwise."""
    return dict(values, flavor=dict(flavor or SMALL))


def uuids(count):
    """``count`` new instance uuids."""
    return [uuidutils.generate_uuid() for _ in range(count)]


class RamWeighedSelection:
    """Only RAM weighs: the cell, and the host in it, with the most free
    memory on one host is preferred whatever was claimed of the rest, so
    a test can say which host a request lands on."""

    def setUp(self):
        super().setUp()
        self.flags(cpu_weight_multiplier=0.0, disk_weight_multiplier=0.0,
                   group='filter_scheduler')

    def _select(self, request_spec=None, count=1):
        instances = uuids(count)
        return instances, self.scheduler.select_destinations(
            self.ctx, request_spec or spec(), instances)

    def _hosts_of(self, selections):
        return [hosts[0]['service_host'] for hosts in selections]


class FleetTestCase(base.DatabaseTestCase):
    """``CELLS`` cells, mapped; ``add_host`` puts hosts in them.

    ``schedulers`` holds the API level's scheduler (``scheduler``) and a
    scheduler per cell (``cell_scheduler(i)``), not started: a test
    starts them (``start``) or lets them load on first use.
    """

    CELLS = 2

    def setUp(self):
        super().setUp()
        # A dead cell must fail at once, not retry its connection.
        self.flags(max_retries=0, group='database')
        self.ctx = context.get_admin_context()
        self.cells_of = {}  # provider uuid -> its cell mapping
        self.cells = [
            cell_mapping.CellMapping.create(
                self.ctx, f'cell{i + 1}', url, 'fake://')
            for i, url in enumerate(self.dbs.cell_urls)]
        contention.STATS.reset()
        self.addCleanup(contention.STATS.reset)
        self.schedulers = in_process.InProcessSchedulers()
        for cell in self.cells:
            self.schedulers.add_cell(cell)
        self.scheduler = self.schedulers.top
        self.addCleanup(self.schedulers.stop)

    def cell_scheduler(self, cell=0):
        return self.schedulers.cell(self.cells[cell])

    def start(self):
        """Load every cell's host states and the API level's figures."""
        self.schedulers.start(self.ctx, refresh_interval=0)

    def hosts(self):
        """Every cell's hosts as the cells' schedulers have them."""
        found, _unanswered = self.scheduler.host_states(self.ctx)
        return found

    def add_host(self, name, cell=0, vcpus=8, memory_mb=16384, disk_gb=200,
                 availability_zone='nova', disabled=False, heartbeat=True,
                 provider=True):
        """A compute host in ``self.cells[cell]``; returns its uuid."""
        uuid = uuidutils.generate_uuid()
        cell_mapping_ = self.cells[cell]
        with context.target_cell(self.ctx, cell_mapping_) as cctxt:
            compute_node.ComputeNode.create(cctxt, name, name, vcpus,
                                            memory_mb, disk_gb, uuid=uuid)
            svc = service.Service.create(cctxt, name,
                                         host_state_cache.COMPUTE_BINARY)
            if heartbeat:
                svc.report_up(cctxt)
            if disabled:
                svc.update(cctxt, disabled=True,
                           disabled_reason='maintenance')
            if provider:
                providers.update_provider(
                    cctxt, uuid, name,
                    {'VCPU': {'total': vcpus},
                     'MEMORY_MB': {'total': memory_mb},
                     'DISK_GB': {'total': disk_gb}},
                    availability_zone=availability_zone)
        self.cells_of[uuid] = cell_mapping_
        return uuid

    def add_dead_cell(self, name='dead'):
        """A mapped cell whose database cannot be reached."""
        url = 'sqlite:///' + self.state_path + '/no/such/dir/cell.sqlite'
        dead = cell_mapping.CellMapping.create(self.ctx, name, url,
                                               'fake://')
        self.schedulers.add_cell(dead)
        return dead

    def used(self, provider_uuid):
        """What its cell's database says is allocated on a provider."""
        with context.target_cell(self.ctx,
                                 self.cells_of[provider_uuid]) as cctxt:
            return usage.get_usages(cctxt, [provider_uuid])[provider_uuid]

    def held(self, consumer_uuid):
        """What ``consumer_uuid`` holds, in whichever cell's database."""
        held = {}
        for cell in self.cells:
            with context.target_cell(self.ctx, cell) as cctxt:
                held.update(usage.get_allocations_for_consumer(
                    cctxt, consumer_uuid))
        return held

    def claim(self, consumer_uuid, provider_uuid, resources):
        """A claim written in the provider's cell database behind every
        scheduler's back (as another scheduler's)."""
        with context.target_cell(self.ctx,
                                 self.cells_of[provider_uuid]) as cctxt:
            return claims.claim_resources(cctxt, consumer_uuid,
                                          provider_uuid, resources)

    def map_server(self, cell=0, project_id='project-a', uuid=None):
        """A server of ``project_id`` mapped to ``self.cells[cell]``."""
        uuid = uuid or uuidutils.generate_uuid()
        instance_mapping.InstanceMapping.create(
            self.ctx, uuid, project_id, cell_uuid=self.cells[cell].uuid)
        return uuid
