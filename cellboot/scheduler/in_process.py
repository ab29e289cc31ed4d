"""Both levels of scheduler in one process: the API level's and the cells'.

``cellboot all-in-one``, the tests and the benchmarks run every cell's
scheduler in the process of the API level's, which then asks them
directly (``cell_clients.LocalCell``) instead of over their buses. This
is the one place that composes them so.
"""

from cellboot.scheduler import api as scheduler_api
from cellboot.scheduler import cell_clients
from cellboot.scheduler import cells as cells_scheduler
from cellboot.scheduler import host_state_cache


class InProcessSchedulers:
    """``top`` (a ``CellsScheduler``) and a ``CellScheduler`` per cell."""

    def __init__(self, top=None):
        self.top = top or cells_scheduler.CellsScheduler()
        self.cells = {}  # cell name -> CellScheduler

    def add_cell(self, cell_mapping, name=None):
        """A scheduler for ``cell_mapping``, known to ``top``."""
        scheduler = scheduler_api.CellScheduler(
            host_state_cache.CellScope(cell_mapping.name, cell_mapping),
            name=name or f'scheduler-{cell_mapping.name}')
        self.cells[cell_mapping.name] = scheduler
        self.top.set_client(cell_mapping.uuid,
                            cell_clients.LocalCell(cell_mapping, scheduler))
        return scheduler

    def cell(self, cell_mapping_or_name):
        name = getattr(cell_mapping_or_name, 'name', cell_mapping_or_name)
        return self.cells[name]

    def start(self, context, refresh_interval=None):
        """Load every cell's host states, then the API level's figures."""
        for scheduler in self.cells.values():
            scheduler.start(context, refresh_interval)
        return self.top.start(context, refresh_interval)

    def refresh(self, context):
        for scheduler in self.cells.values():
            scheduler.refresh(context)
        return self.top.refresh(context)

    def stop(self):
        self.top.stop()
        for scheduler in self.cells.values():
            scheduler.stop()
