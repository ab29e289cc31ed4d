"""Where the resource tables live: a cell's database, or the API's.

Every cell schedules its own hosts, so their resource providers,
inventories and allocations are tables of the cell database
(``cellboot.db.cell.models``), reached like every other cell table:
through a context targeted at the cell (``context.target_cell``, at the
API level and in one-process deployments) or through the service's own
``[database] connection`` (a cell's scheduler in its cell). The modules
of this package take their tables and transaction decorators from here
and from nowhere else, so that they never name a database of their own.

The API database has the same three tables for the shared pools
(providers that are not hosts, ``cellboot.scheduler.pools``). A
``Store`` names one of the two: the claims and usage reads take one
(``CELL`` by default), so that a pool is claimed by the same code, with
the same generation compare-and-swap, as a host.
"""

from cellboot.db.api import connection as api_db
from cellboot.db.api import models as api_models
from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models


class Store:
    """The provider, inventory and allocation tables of one database,
    and its transaction decorators.

    ``announces``: whether writes are told to the cell's change feed
    (``changes``); the API database has no feed, its pools are not in
    any cell scheduler's host states.
    """

    def __init__(self, name, models_module, reader, writer, announces):
        self.name = name
        self.providers = models_module.ResourceProvider.__table__
        self.inventories = models_module.Inventory.__table__
        self.allocations = models_module.Allocation.__table__
        self.provider_traits = models_module.ProviderTrait.__table__
        self.reader = reader
        self.writer = writer
        self.announces = announces

    def __repr__(self):
        return f'<Store {self.name}>'


CELL = Store('cell', models, cell_db.reader, cell_db.writer, True)
API = Store('api', api_models, api_db.reader, api_db.writer, False)

PROVIDERS = CELL.providers
INVENTORIES = CELL.inventories
ALLOCATIONS = CELL.allocations
PROVIDER_TRAITS = CELL.provider_traits

reader = cell_db.reader
writer = cell_db.writer


def read_engine(context):
    """The engine a lone read of the targeted cell goes through.

    For a hot read of one statement (the change feed's pull, before each
    decision) a Core connection costs a third of a session transaction:
    no session, no ORM events. Multi-statement reads keep ``reader``.
    """
    return cell_db.pick_context_manager(context).reader.get_engine()
