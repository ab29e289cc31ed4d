"""TaskFlow's tables in cellboot's databases, and the databases holding them.

The flow database holds TaskFlow's tables only (the API-level
conductors' flows); a cell database holds the cell tree's tables and
TaskFlow's (its conductors' reschedule flows, kept in the cell since
they hold no API-level credentials). ``cellboot.db.migration`` migrates
cellboot's own alembic trees and knows nothing of TaskFlow; the two
schemas that mix them are composed here, above it, with the same checks
and errors: the URL is probed before anything is written, and a failure
is one line an operator can act on.
"""

from oslo_log import log as logging
import sqlalchemy as sa
from taskflow import exceptions as taskflow_exc

from cellboot.db import migration
from cellboot import exception
from cellboot.flowrun import backend
from cellboot.flowrun import fencing
from cellboot import masking

LOG = logging.getLogger(__name__)


def sync_tables(connection):
    """Create or upgrade TaskFlow's persistence tables at a URL.

    Works on any database: the flow database, or a cell database next to
    the cell tree's tables. The flows' fences (``fencing``) go with
    them: a database synced by an earlier version gets the table at its
    next sync, and its flows get their fence rows at their next
    take-over.
    """
    with migration.checked_engine(connection):
        pass
    masked = masking.mask_url(connection)
    LOG.info("Syncing TaskFlow's persistence tables in %s.", masked)
    try:
        backend.sync(connection)
        fencing.sync(backend.get_backend(connection).engine)
    except (taskflow_exc.StorageFailure, sa.exc.SQLAlchemyError) as exc:
        raise exception.DatabaseMigrationFailed(
            database='flow persistence', url=masked,
            reason=migration.one_line(getattr(exc, 'cause', None) or exc))


def sync_flow_database(connection):
    """Sync the flow database (``[flow_persistence] connection``)."""
    sync_tables(connection)


def sync_cell_database(connection):
    """Sync a cell database: the cell tree, then TaskFlow's tables."""
    migration.db_sync('cell', connection)
    sync_tables(connection)
