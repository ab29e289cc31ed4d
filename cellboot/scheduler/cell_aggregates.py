"""The API level's figures of its cells: one aggregate per cell.

``CellAggregates`` holds, per enabled cell (cell0 apart), the newest
aggregate its schedulers published (``cellboot.scheduler.aggregate``)
and when the API level learnt it. It learns them three ways:

* ``refresh`` reads every cell's newest row at once (scatter-gather,
  ``[scheduler] cell_check_timeout`` per cell): when the scheduler
  starts, every ``[scheduler] cell_check_interval`` seconds in a
  background thread, and before a request would be refused for want of
  room (``refresh_unless_read_since``, unless a read began after the
  request arrived), so that room a cell gave back is never
  missed;
* ``take`` the aggregate that comes back with each placement a cell
  answers: the API level's own placements count at once;
* a cell that does not answer is *silent*: it is sent nothing until a
  read reaches it again. A cell whose newest aggregate is older than
  ``[scheduler] aggregate_max_age`` has no live scheduler: it is sent
  nothing either.

The views hang in a tree of zones (``zones.ZoneTree``), built anew
with each ``refresh`` from the zones and cell mappings it reads, and
told of every ``take`` and ``mark_silent``, so that only the changed
cell's ancestors are combined again.

Nothing here reads a host: an aggregate is a few numbers per resource
class, so 50 cells cost a few kilobytes.
"""

import threading
import time

from oslo_log import log as logging
from oslo_utils import timeutils

from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.scheduler import aggregate as aggregate_mod
from cellboot.scheduler import periodic
from cellboot.scheduler import zones as zones_mod

try:
    from cellboot.objects import zone as zone_obj
except ImportError:  # until the zones of the API database are merged
    zone_obj = None

LOG = logging.getLogger(__name__)


class CellView:
    """What the API level knows of one cell.

    ``max_free`` is the aggregate's largest free room on one host per
    resource class, kept beside it: the cell filters and weighers read it
    for every cell on every request. ``cell_uuids`` is the cell's own
    uuid: the filters ask a cell and a zone (``zones``) the same way
    which cells they stand for.
    """

    def __init__(self, cell, aggregate=None, published_at=None):
        self.cell = cell
        self.cell_uuids = frozenset((cell.uuid,))
        self.aggregate = aggregate
        # The cell's clock (the row), and ours (when we learnt it).
        self.published_at = published_at
        self.learnt_at = time.time() if aggregate is not None else None
        self.silent = None  # why, while the cell does not answer
        self.invalid = False  # its newest row is no aggregate

    @property
    def aggregate(self):
        return self._aggregate

    @aggregate.setter
    def aggregate(self, document):
        self._aggregate = document
        self.max_free = {} if document is None else {
            rc: figures['max_free']
            for rc, figures in document['resources'].items()}

    @property
    def age(self):
        """Seconds since the figures were published (the row's clock)."""
        return self.age_at(timeutils.utcnow())

    def age_at(self, now):
        if self.published_at is None:
            return None
        return (now - self.published_at).total_seconds()

    def usable(self, now=None, max_age=None):
        """Why no request may go to this cell now; None when one may.

        ``now`` (``timeutils.utcnow()``) and ``max_age`` may be given by
        a caller judging every cell at once: read once, not per cell.
        """
        if self.silent:
            return f'its database does not answer ({self.silent})'
        if self.aggregate is None:
            return 'its schedulers have published no aggregate'
        stale = self.age_at(now or timeutils.utcnow())
        if max_age is None:
            max_age = CONF.scheduler.aggregate_max_age
        if stale is not None and stale > max_age:
            return (f'its newest aggregate is {stale:.0f} s old: no '
                    f'scheduler of the cell is running')
        return None


def read_zones(context):
    """Every zone of the API database (none where there are none)."""
    if zone_obj is None:
        return []
    return list(zone_obj.get_all(context))


def _read(context):
    return aggregate_mod.read_latest(context)


def read_all(context, cells, known=None, report=None):
    """``{cell uuid: CellView}`` of ``cells``, read from their databases.

    A cell that does not answer is silent, with the figures ``known``
    had of it; one whose row is no aggregate is passed to ``report`` and
    has none.
    """
    known = known or {}
    results = cb_context.scatter_gather_cells(
        context, cells, CONF.scheduler.cell_check_timeout, _read,
        skip_down_cells=True)
    views = {}
    for cell in cells:
        result = results[cell.uuid]
        failure = getattr(result, 'exception', None)
        view = CellView(cell)
        if isinstance(failure, exception.Invalid):
            # The cell answers, with nonsense: it gets no request.
            view.invalid = True
            if report is not None:
                report(cell, failure)
        elif cb_context.is_cell_failure(result):
            before = known.get(cell.uuid)
            if before is not None:
                view.aggregate = before.aggregate
                view.published_at = before.published_at
                view.learnt_at = before.learnt_at
            view.silent = ('no answer' if failure is None
                           else str(failure)[:200])
        elif result is not None:
            view = CellView(cell, *result)
        views[cell.uuid] = view
    return views


class CellAggregates:
    """Thread-safe map of cell uuid to ``CellView``."""

    def __init__(self):
        self._lock = threading.Lock()
        self._views = {}
        self._tree = zones_mod.ZoneTree()
        self.refreshed_at = None
        self._room_published = False  # since the last read began
        # Cells found publishing something that is no aggregate: named
        # once each.
        self._reported = set()
        self._periodic = periodic.Periodic(
            'cell-aggregates',
            lambda: self.refresh(cb_context.get_admin_context()),
            self._read_failed)

    def views(self):
        with self._lock:
            return dict(self._views)

    def tree(self):
        """The ``zones.ZoneTree`` of the views, kept current."""
        return self._tree

    def view(self, cell_uuid):
        with self._lock:
            return self._views.get(cell_uuid)

    def refresh(self, context):
        """Read every enabled cell's newest aggregate now."""
        started = time.monotonic()
        with self._lock:
            self._room_published = False
        cells = [cell for cell in
                 cell_mapping_obj.CellMapping.get_enabled(context)
                 if not cell.is_cell0]
        zones = read_zones(context)
        views = read_all(context, cells, known=self.views(),
                         report=self._report)
        with self._lock:
            for uuid, view in views.items():
                known = self._views.get(uuid)
                if (known is None or view.silent or view.invalid
                        or known.aggregate is None):
                    continue
                # An answer (a placement's, or an in-process cell's) may
                # be newer than the row read, or there may be no row yet.
                if (view.aggregate is None
                        or known.aggregate['computed_at']
                        > view.aggregate['computed_at']):
                    view.aggregate = known.aggregate
                    view.published_at = known.published_at
                    view.learnt_at = known.learnt_at
            self._views = views
            self._tree = zones_mod.ZoneTree(zones, views)
            # When the read began: what was published before then is in.
            self.refreshed_at = started
        return views

    def _report(self, cell, exc):
        if cell.uuid not in self._reported:
            self._reported.add(cell.uuid)
            LOG.error('Cell %s publishes an aggregate that cannot be read '
                      '(%s): it is sent no request until it publishes one',
                      cell.name, exc)

    def refresh_unless_read_since(self, context, since):
        """``refresh`` unless a read began at or after ``since`` (a
        ``time.monotonic()`` value): whatever the cells published before
        ``since`` is then known. Concurrent requests share one read."""
        last = self.refreshed_at
        if last is None or last < since or self._room_published:
            self.refresh(context)

    def read_before_refusing(self):
        """A cell published room since the last read: the next refusal
        reads the cells again, however recent that read."""
        with self._lock:
            self._room_published = True

    def take(self, cell, document):
        """A cell's aggregate from its answer; ignored when malformed."""
        try:
            aggregate = aggregate_mod.validated(document)
        except exception.Invalid as exc:
            self._report(cell, exc)
            return
        with self._lock:
            view = self._views.get(cell.uuid)
            if view is None:
                view = self._views[cell.uuid] = CellView(cell)
            view.aggregate = aggregate
            view.learnt_at = time.time()
            view.published_at = timeutils.utcnow()
            view.silent = None
            self._tree.changed(view)

    def mark_silent(self, cell, why):
        with self._lock:
            view = self._views.get(cell.uuid)
            if view is not None:
                view.silent = why
                self._tree.changed(view)

    # -- the periodic reads ------------------------------------------------

    def start(self, interval=None):
        self._periodic.start(CONF.scheduler.cell_check_interval
                             if interval is None else interval)

    @staticmethod
    def _read_failed(exc, interval):
        # The API database (cell mappings) may be down: the figures stay
        # as they are until a read gets through.
        LOG.exception('Reading the cells\' aggregates failed; trying again '
                      'in %s s', interval)

    def stop(self):
        self._periodic.stop()
