"""Shared set-up for the resource-table tests (providers, claims, groups).

Not a test module: the test modules import ``ResourcesTestCase`` and run
its specification on each backend.
"""

from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot import context
from cellboot.db.api import models as api_models
from cellboot.db.cell import models
from cellboot.scheduler.resources import contention
from cellboot.scheduler.resources import providers
from tests import base

# A host with room for 4 instances of SMALL (VCPU binds first).
HOST_INVENTORY = {
    'VCPU': {'total': 8},
    'MEMORY_MB': {'total': 16384, 'reserved': 512},
    'DISK_GB': {'total': 200},
}
SMALL = {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}


class ResourcesTestCase(base.DatabaseTestCase):
    """A cell database (the local one: ``[database] connection``), where
    a cell's resources live, and an admin context."""

    CELLS = 1

    def setUp(self):
        super().setUp()
        self.ctx = context.get_admin_context()
        self.engine = sa.create_engine(self.dbs.cell_urls[0])
        self.addCleanup(self.engine.dispose)
        self.cell_uuid = self.create_cell('cell1')
        contention.STATS.reset()
        self.addCleanup(contention.STATS.reset)

    def create_cell(self, name):
        """A cell mapping row, written directly (the objects are not ours)."""
        cell_uuid = uuidutils.generate_uuid()
        engine = sa.create_engine(self.dbs.api_url)
        self.addCleanup(engine.dispose)
        with engine.begin() as conn:
            conn.execute(sa.insert(api_models.CellMapping.__table__).values(
                uuid=cell_uuid, name=name, database_connection='sqlite://',
                transport_url='fake://', disabled=False))
        return cell_uuid

    def create_provider(self, inventories=None, name=None, uuid=None,
                        availability_zone='nova'):
        uuid = uuid or uuidutils.generate_uuid()
        providers.update_provider(
            self.ctx, uuid, name or 'host-' + uuid[:8],
            HOST_INVENTORY if inventories is None else inventories,
            availability_zone=availability_zone)
        return uuid

    def generation(self, provider_uuid):
        table = models.ResourceProvider.__table__
        with self.engine.connect() as conn:
            return conn.execute(sa.select(table.c.generation).where(
                table.c.uuid == provider_uuid)).scalar()

    def bump_generation(self, provider_uuid):
        """Change the provider behind the back of a running transaction."""
        table = models.ResourceProvider.__table__
        with self.engine.begin() as conn:
            conn.execute(sa.update(table).where(
                table.c.uuid == provider_uuid,
            ).values(generation=table.c.generation + 1))

    def allocation_rows(self, consumer_uuid=None):
        """``[(consumer, resource_class, used)]`` straight from the table."""
        table = models.Allocation.__table__
        query = sa.select(table.c.consumer_id, table.c.resource_class,
                          table.c.used).order_by(table.c.consumer_id,
                                                 table.c.resource_class)
        if consumer_uuid is not None:
            query = query.where(table.c.consumer_id == consumer_uuid)
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(query)]
