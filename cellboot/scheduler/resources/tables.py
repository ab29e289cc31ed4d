"""Where the host resources live: the cell's own database.

Every cell schedules its own hosts, so their resource providers,
inventories and allocations are tables of the cell database
(``cellboot.db.cell.models``), reached like every other cell table:
through a context targeted at the cell (``context.target_cell``, at the
API level and in one-process deployments) or through the service's own
``[database] connection`` (a cell's scheduler in its cell). The modules
of this package take their tables and transaction decorators from here
and from nowhere else, so that they never name a database of their own.
"""

from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models

PROVIDERS = models.ResourceProvider.__table__
INVENTORIES = models.Inventory.__table__
ALLOCATIONS = models.Allocation.__table__
PROVIDER_TRAITS = models.ProviderTrait.__table__

reader = cell_db.reader
writer = cell_db.writer


def read_engine(context):
    """The engine a lone read of the targeted cell goes through.

    For a hot read of one statement (the change feed's pull, before each
    decision) a Core connection costs a third of a session transaction:
    no session, no ORM events. Multi-statement reads keep ``reader``.
    """
    return cell_db.pick_context_manager(context).reader.get_engine()
