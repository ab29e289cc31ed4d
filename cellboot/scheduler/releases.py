"""Where the API level gives a consumer's claims back: the cell holding them.

The API level keeps no allocation: a consumer's claims are in the
database of the one cell whose scheduler made them, and only that cell
can give them back. Asking every cell for every release would cost a
call per cell, and one cell that does not answer would hold up the
rest, so the API level remembers the cell of each consumer it claimed
for (``Releases.remember``), and a release goes, in order, to the cell
the caller names, the cell remembered, the cell the instance is mapped
to, and failing all of them every cell (``Releases.release``).

This is the API-level scheduler's (``cells.CellsScheduler``) memory of
its claims, kept apart from its placement: the memory is written by
placements and read by releases, and by nothing else.
"""

import collections
import threading

from oslo_log import log as logging

from cellboot import exception
from cellboot.objects import instance_mapping
from cellboot.scheduler import cell_clients
from cellboot.scheduler import routing

LOG = logging.getLogger(__name__)

# The cell of each consumer the API level claimed for (None once it
# holds nothing), so that a release finds its cell without a query:
# bounded, oldest forgotten first (a forgotten one is found through its
# mapping, or asked of every cell).
CLAIMS_REMEMBERED = 100000


class Releases:
    """The cell of each consumer claimed for; releases routed to it.

    ``client`` is a callable that gives a cell's client
    (``cell_clients``); ``aggregates`` the API level's
    ``cell_aggregates.CellAggregates``, told of the room a release gives
    back, so that the next request sees it.
    """

    def __init__(self, client, aggregates):
        self._client = client
        self._aggregates = aggregates
        self._lock = threading.Lock()
        # consumer uuid -> cell uuid, or None: holds nothing (oldest first).
        self.claimed_in = collections.OrderedDict()

    # -- the memory --------------------------------------------------------

    def remember(self, consumer_uuid, cell_uuid):
        """``consumer_uuid`` holds claims in ``cell_uuid`` (None: in no
        cell any more: a release then asks no cell)."""
        with self._lock:
            self.claimed_in[consumer_uuid] = cell_uuid
            self.claimed_in.move_to_end(consumer_uuid)
            while len(self.claimed_in) > CLAIMS_REMEMBERED:
                self.claimed_in.popitem(last=False)

    def forget(self, consumer_uuid):
        """Where ``consumer_uuid`` holds claims is not known (a cell that
        did not answer may have claimed): a release must look for it."""
        with self._lock:
            self.claimed_in.pop(consumer_uuid, None)

    # -- releases ----------------------------------------------------------

    def release_placed(self, context, placed):
        """Give back the claims of ``placed`` (``{uuid: (cell, hosts)}``),
        those of a request that could not be placed whole; a failure is
        logged, not raised, so that the request's own error is."""
        for uuid, (cell, _hosts) in placed.items():
            try:
                self.release_in(context, cell, uuid)
            except Exception:
                LOG.exception('Could not release the claim of instance %s '
                              'in cell %s; its allocations stay until the '
                              'instance is cleaned up', uuid, cell.name)

    def release_in(self, context, cell, consumer_uuid, provider_uuid=None):
        """Ask ``cell`` to release; what it released (``{}``: nothing)."""
        client = self._client(cell)
        released = client.release(context, consumer_uuid, provider_uuid)
        if provider_uuid is None:
            self.remember(consumer_uuid, None)  # holds nothing now
        if released:
            # The cell published its new figures as it released: an
            # in-process one is asked at once, a remote one is read
            # again before any request is refused.
            if client.local:
                self._aggregates.take(cell, client.aggregate(context))
            else:
                self._aggregates.read_before_refusing()
        return released or {}

    def release(self, context, consumer_uuid, provider_uuid=None,
                cell_uuid=None):
        """Give back a consumer's allocations; returns what was released.

        In the cell that holds them: ``cell_uuid`` when the caller knows
        it, else the cell the API level claimed them in, else the cell
        the instance is mapped to; failing all, every cell is asked
        (releasing is idempotent, and a consumer holds claims in one cell
        at most; a cell that does not answer then is skipped: the sweep of
        claims that no instance holds gives them back later).
        """
        with self._lock:
            known = consumer_uuid in self.claimed_in
            cell_uuid = cell_uuid or self.claimed_in.get(consumer_uuid)
        if cell_uuid is None and known and provider_uuid is None:
            return {}  # the API level released them, or never claimed
        if cell_uuid is None:
            cell_uuid = _mapped_cell(context, consumer_uuid)
        cells = cell_clients.every_cell(context)
        if cell_uuid is not None:
            cells = [cell for cell in cells if cell.uuid == cell_uuid]
            if not cells:
                return {}  # a cell that is gone holds nothing any more
            return self.release_in(context, cells[0], consumer_uuid,
                                   provider_uuid)
        released = {}
        for cell in cells:
            try:
                released.update(self.release_in(
                    context, cell, consumer_uuid, provider_uuid))
            except cell_clients.CellUnreachable as exc:
                # Whatever it holds there, the cell's own sweep of
                # claims no instance holds gives back (unfinished_deletes).
                LOG.warning('Could not ask cell %s to release the claims '
                            'of %s: %s', cell.name, consumer_uuid, exc)
        return released


def _mapped_cell(context, instance_uuid):
    """The uuid of the cell ``instance_uuid`` is mapped to, or None (not
    mapped, or mapped to cell0, where no claim is)."""
    try:
        mapping = instance_mapping.InstanceMapping.get_by_instance_uuid(
            context, instance_uuid)
    except exception.InstanceMappingNotFound:
        return None
    if mapping.cell_mapping is None \
            or mapping.cell_mapping.uuid == routing.CELL0:
        return None
    return mapping.cell_mapping.uuid
