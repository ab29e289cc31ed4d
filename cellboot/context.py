"""Request context: who is asking, and which cell database it targets.

The context is an oslo.db enginefacade transaction provider, so functions
decorated with the API or cell database readers/writers open their
transaction on it. ``target_cell`` returns a *copy* that carries one cell's
database (the cell's context manager), so the same DB API function reads
the cell that the caller chose without passing URLs around.
"""

import contextlib
import copy
import queue
import threading
import time

from oslo_context import context as oslo_context
from oslo_db.sqlalchemy import enginefacade
from oslo_log import log as logging

from cellboot.db.cell import reachability
from cellboot.db import outage as db_outage

LOG = logging.getLogger(__name__)


@enginefacade.transaction_context_provider
class RequestContext(oslo_context.RequestContext):
    """A user or service request, optionally targeted at one cell."""

    def __init__(self, *args, cell_uuid=None, db_connection=None, **kwargs):
        super().__init__(*args, **kwargs)
        # Set by target_cell: the cell's uuid and its transaction context
        # manager. None means "the local cell" ([database] connection).
        self.cell_uuid = cell_uuid
        self.db_connection = db_connection

    def to_dict(self):
        values = super().to_dict()
        values['cell_uuid'] = self.cell_uuid
        return values


def get_admin_context():
    """A context for services and commands acting on their own behalf."""
    return RequestContext(user_id=None, project_id=None, is_admin=True,
                          overwrite=False)


def targeted_copy(context, cell_mapping):
    """A shallow copy of ``context`` whose cell DB is ``cell_mapping``'s.

    The copy has no transaction state of its own, so it can be used from
    another thread (scatter-gather) while the original is in use.
    """
    from cellboot.db.cell import connection as cell_connection

    cctxt = copy.copy(context)
    # enginefacade keeps its transaction state in this attribute; a copy
    # must start with none or it would join the original's transaction.
    cctxt.__dict__.pop('_enginefacade_context', None)
    cctxt.cell_uuid = cell_mapping.uuid
    cctxt.db_connection = cell_connection.get_context_manager(
        cell_mapping.database_connection)
    return cctxt


@contextlib.contextmanager
def target_cell(context, cell_mapping):
    """Yield a copy of ``context`` that reads and writes ``cell_mapping``."""
    yield targeted_copy(context, cell_mapping)


class _Sentinel:
    """A named marker object, readable in logs and reprs."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return self._name


# A cell that did not answer within the timeout yields this.
did_not_respond_sentinel = _Sentinel('<cell did not respond>')


class CellFailure:
    """What a cell yields when its function raised instead of returning."""

    def __init__(self, cell_uuid, exc):
        self.cell_uuid = cell_uuid
        self.exception = exc

    def __repr__(self):
        return f'<cell {self.cell_uuid} failed: {self.exception!r}>'


def is_cell_failure(result):
    """True when a scatter-gather result is a timeout or a failure."""
    return result is did_not_respond_sentinel or isinstance(result,
                                                            CellFailure)


def scatter_gather_cells(context, cell_mappings, timeout, fn, *args,
                         skip_down_cells=False, **kwargs):
    """Run ``fn(cell_context, *args, **kwargs)`` in every cell in parallel.

    Returns ``{cell_uuid: result}``. A cell that raises yields a
    ``CellFailure``; a cell that has not answered after ``timeout`` seconds
    (None: wait for all) yields ``did_not_respond_sentinel``. Neither stops
    the other cells, so one broken or partitioned cell never fails a whole
    listing.

    Every call tells ``cellboot.db.cell.reachability`` whether the cell
    answered. With ``skip_down_cells``, a cell found down yields
    ``did_not_respond_sentinel`` at once instead of being waited for; it
    is still called in the background (unless a call to it is running
    already), which is how it is found up again. For reads only: a
    background call's result is dropped.

    Each cell runs in its own daemon thread. A cell whose server hangs
    keeps its thread blocked for as long as the server does; a daemon
    thread is abandoned there, whereas a thread pool's workers are joined
    when the interpreter exits, so one hung cell would keep a command
    such as ``cellboot-manage cell_v2 discover_hosts`` from ever exiting.
    """
    cell_mappings = list(cell_mappings)
    results = {cm.uuid: did_not_respond_sentinel for cm in cell_mappings}
    answers = queue.SimpleQueue()
    cells = reachability.CELLS

    def _run(cell_mapping):
        try:
            result = fn(targeted_copy(context, cell_mapping), *args,
                        **kwargs)
        except Exception as exc:
            LOG.warning('Cell %s (%s) failed: %s', cell_mapping.name,
                        cell_mapping.uuid, exc)
            result = CellFailure(cell_mapping.uuid, exc)
            if db_outage.is_connection_lost(exc):
                _not_answered(cell_mapping, exc)
            else:
                _answered(cell_mapping)
        else:
            _answered(cell_mapping)
        finally:
            cells.end_call(cell_mapping.uuid)
        answers.put((cell_mapping.uuid, result))

    waited = []
    for cm in cell_mappings:
        skip = skip_down_cells and cells.is_down(cm.uuid)
        if not skip:
            waited.append(cm)
        if cells.start_call(cm.uuid, skip_if_down=skip):
            threading.Thread(target=_run, args=(cm,), daemon=True,
                             name=f'scatter-gather-{cm.name}').start()

    deadline = None if timeout is None else time.monotonic() + timeout
    waiting = {cm.uuid for cm in waited}
    while waiting:
        wait = None if deadline is None else deadline - time.monotonic()
        if wait is not None and wait <= 0:
            break
        try:
            cell_uuid, result = answers.get(timeout=wait)
        except queue.Empty:
            break
        if cell_uuid in waiting:
            waiting.discard(cell_uuid)
            results[cell_uuid] = result

    for cm in cell_mappings:
        if cm.uuid in waiting:
            LOG.warning('Cell %s (%s) did not respond within %s s',
                        cm.name, cm.uuid, timeout)
            _not_answered(cm, f'no answer within {timeout} s')
        elif results[cm.uuid] is did_not_respond_sentinel:
            LOG.debug('Cell %s (%s) skipped: not answering', cm.name,
                      cm.uuid)
    return results


def _answered(cell_mapping):
    down_for = reachability.CELLS.answered(cell_mapping.uuid,
                                           cell_mapping.name)
    if down_for is not None:
        LOG.warning('Cell %s (%s) answers again after %.1f s',
                    cell_mapping.name, cell_mapping.uuid, down_for)


def _not_answered(cell_mapping, why):
    if reachability.CELLS.not_answered(cell_mapping.uuid, cell_mapping.name,
                                       why):
        LOG.warning('Cell %s (%s) is not answering (%s); until a call '
                    'reaches it again, reads that may skip it get its '
                    'answer as missing at once', cell_mapping.name,
                    cell_mapping.uuid, why)
