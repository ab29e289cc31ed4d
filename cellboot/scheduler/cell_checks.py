"""Between full loads, learn within seconds that a cell stopped answering.

The host states are reloaded in full every ``[scheduler]
host_state_refresh_interval`` seconds (60 by default). A cell whose
database is partitioned just after a load would keep its hosts chosen
until the next one, and every boot sent there waits for the cell (its
instance cannot be created) while the other cells have room. So a
background thread asks each enabled cell for ``SELECT 1`` every
``[scheduler] cell_check_interval`` seconds, waiting ``cell_check_timeout``
at most:

* a cell that fails or does not answer has its hosts dropped from the
  host states at once (``HostStateCache.set_down_cells``); provider
  reports of its hosts are held back meanwhile, and full loads skip it;
* a cell found answering again gets a full load at once, which brings
  its hosts back with their current usage and liveness.

The checks go through ``scatter_gather_cells`` with
``skip_down_cells``: a silent cell holds one thread and one connection of
the scheduler, however long it stays silent (see
``cellboot.db.cell.reachability``), and the check of a cell that is
down costs nothing until that call ends.
"""

import threading

from oslo_log import log as logging
import sqlalchemy as sa

from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db.cell import connection as cell_db
from cellboot.objects import cell_mapping

LOG = logging.getLogger(__name__)


@cell_db.reader
def _ping(context):
    context.session.execute(sa.text('SELECT 1'))
    return True


def down_cells(context, timeout):
    """``{cell uuid: name}`` of the enabled cells that did not answer."""
    cells = [cell for cell in cell_mapping.CellMapping.get_enabled(context)
             if not cell.is_cell0]
    results = cb_context.scatter_gather_cells(context, cells, timeout, _ping,
                                              skip_down_cells=True)
    return {cell.uuid: cell.name for cell in cells
            if cb_context.is_cell_failure(results[cell.uuid])}


class CellChecks:
    """The checking thread of one ``HostStateCache``."""

    def __init__(self, cache):
        self.cache = cache
        self._stop = threading.Event()
        self._thread = None

    def check(self, context):
        """One round: drop the hosts of silent cells, reload returned ones.

        Returns the cells found down (``{uuid: name}``).
        """
        found = down_cells(context, CONF.scheduler.cell_check_timeout)
        back = self.cache.set_down_cells(found)
        if back:
            LOG.info('Cells %s answer again: reloading host states',
                     ', '.join(sorted(back)))
            self.cache.refresh(context)
        return found

    def start(self, interval=None):
        interval = (CONF.scheduler.cell_check_interval
                    if interval is None else interval)
        if not interval or self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run, args=(interval,), name='cell-checks',
            daemon=True)
        self._thread.start()

    def _run(self, interval):
        context = cb_context.get_admin_context()
        while not self._stop.wait(interval):
            try:
                self.check(context)
            except Exception:
                # The API database (cell mappings) may be down: the
                # states stay as they are until a check gets through.
                LOG.exception('Cell checks failed; trying again in %s s',
                              interval)

    def stop(self):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
