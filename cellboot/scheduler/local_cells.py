"""The cells served in this process whose figures nobody published yet.

The API level's scheduler chooses cells by their published aggregates
(``cell_aggregates``). A cell whose scheduler runs in this same process
(all-in-one, the functional tests, a super conductor serving its cells)
may not have published any yet: its host states load on first use. Its
figures are then asked of it directly, before a cell is chosen and
again before a refusal, so that such a cell is never passed over.

Apart from ``cells`` because it is its own bookkeeping (which clients
are local, when they were last looked through) with a cost that had to
be bounded: looking through every one of them on every request cost 8
of the 9.5 ms of an API level's decision at 1,000 cells.
"""

import threading
import time

from oslo_utils import timeutils

from cellboot.conf import CONF

# How often, at most, the cells of this process that have no usable
# figures are looked for (and before any refusal).
LOCAL_SCAN_INTERVAL = 1.0


class LocalCells:
    """The clients of the cells of this process, and their last scan.

    ``aggregates``: the API level's ``CellAggregates``; ``sync``: the
    other API-level schedulers' news of the cells, or None; ``clients``
    maps a cell uuid to its client (those with ``local`` are kept).
    """

    def __init__(self, aggregates, sync, clients):
        self.aggregates = aggregates
        self.sync = sync
        self._clients = {uuid: client for uuid, client in clients.items()
                         if client.local}
        # When the cells of this process were last looked through
        # (monotonic; None: at the next request), and after which read.
        self._scanned_at = self._scanned_read = None
        self._lock = threading.Lock()

    def set_client(self, cell_uuid, client):
        """The cell's client changed: kept if local, and looked at on
        the next request."""
        with self._lock:
            if client.local:
                self._clients[cell_uuid] = client
            else:
                self._clients.pop(cell_uuid, None)
            self._scanned_at = None

    def learn(self, context, force=False):
        """The figures of the enabled cells of this process that none
        published yet: asked of them. The cells are read once first,
        for which are enabled.

        Looked for at most every ``LOCAL_SCAN_INTERVAL`` seconds unless
        ``force`` (before a refusal) or the cells were read again since
        (a read replaces the views): a cell of this process answers
        every placement with its figures, so only one that nothing was
        sent to lately can lack them.
        """
        if self.aggregates.refreshed_at is None:
            self.aggregates.refresh(context)
        if self.sync is not None:
            self.sync.catch_up(context)
        now_mono = time.monotonic()
        read_at = self.aggregates.refreshed_at
        with self._lock:
            if not force and self._scanned_at is not None and \
                    read_at == self._scanned_read and \
                    now_mono - self._scanned_at < LOCAL_SCAN_INTERVAL:
                return
            self._scanned_at, self._scanned_read = now_mono, read_at
            local = list(self._clients.values())
        if not local:
            return
        views = self.aggregates.views()
        now = timeutils.utcnow()
        max_age = CONF.scheduler.aggregate_max_age
        for client in local:
            view = views.get(client.cell.uuid)
            # A silent cell's database does not answer: its scheduler's
            # figures in memory would not make its claims succeed.
            if (view is None or view.silent or view.invalid
                    or view.usable(now, max_age) is None):
                continue
            try:
                self.aggregates.take(client.cell, client.aggregate(context))
            except Exception as exc:
                self.aggregates.mark_silent(client.cell, str(exc)[:200])
