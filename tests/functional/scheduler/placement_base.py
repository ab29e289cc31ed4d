"""Shared set-up for host state and select_destinations tests.

Not a test module: builds a small fleet the way a deployment has one —
cell mappings in the API database, compute nodes and heartbeating compute
services in each cell database, a resource provider per node — and
leaves the scheduler to find it.
"""

from oslo_utils import uuidutils

from cellboot import context
from cellboot.objects import cell_mapping
from cellboot.objects import compute_node
from cellboot.objects import service
from cellboot.scheduler import host_state_cache
from cellboot.scheduler.resources import contention
from cellboot.scheduler.resources import providers
from cellboot.scheduler.resources import usage
from tests import base

SMALL = {'vcpus': 2, 'memory_mb': 2048, 'root_gb': 20, 'flavorid': 'small'}


def spec(flavor=None, **values):
    """A request spec dict with the SMALL flavor unless told otherwise."""
    return dict(values, flavor=dict(flavor or SMALL))


class FleetTestCase(base.DatabaseTestCase):
    """``CELLS`` cells, mapped; ``add_host`` puts hosts in them."""

    CELLS = 2

    def setUp(self):
        super().setUp()
        # A dead cell must fail at once, not retry its connection.
        self.flags(max_retries=0, group='database')
        self.ctx = context.get_admin_context()
        self.cells = [
            cell_mapping.CellMapping.create(
                self.ctx, f'cell{i + 1}', url, 'fake://')
            for i, url in enumerate(self.dbs.cell_urls)]
        contention.STATS.reset()
        self.addCleanup(contention.STATS.reset)

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
                self.ctx, uuid, name, cell_mapping_.uuid,
                {'VCPU': {'total': vcpus}, 'MEMORY_MB': {'total': memory_mb},
                 'DISK_GB': {'total': disk_gb}},
                availability_zone=availability_zone)
        return uuid

    def add_dead_cell(self, name='dead'):
        """A mapped cell whose database cannot be reached."""
        url = 'sqlite:///' + self.state_path + '/no/such/dir/cell.sqlite'
        return cell_mapping.CellMapping.create(self.ctx, name, url,
                                               'fake://')

    def used(self, provider_uuid):
        """What the database says is allocated on a provider."""
        return usage.get_usages(self.ctx, [provider_uuid])[provider_uuid]

    def held(self, consumer_uuid):
        return usage.get_allocations_for_consumer(self.ctx, consumer_uuid)
