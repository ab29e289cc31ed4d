"""Host discovery: give every compute host of a cell its host mapping.

A compute host records its nodes in its own cell's database (unmapped);
the boot flow finds a host's cell through ``host_mappings`` in the API
database. Discovery bridges the two. It is safe to run again and to run
concurrently, because the unique host mapping decides every race: the
run that loses gets HostMappingExists, finds the host mapped to the same
cell, and only marks the nodes as mapped.

Cells are visited in parallel (``scatter_gather_cells``); a cell whose
database is down or slow is reported and the others are still
discovered.
"""

from cellboot.console import output
from cellboot import context as cb_context
from cellboot.db.api import connection as api_db
from cellboot import exception
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.objects import compute_node as compute_node_obj
from cellboot.objects import host_mapping as host_mapping_obj

# Seconds one cell may take before it is reported as not answering. A
# cell with thousands of new hosts maps them one transaction each, which
# takes seconds, not minutes.
DISCOVERY_TIMEOUT_SECONDS = 120


class CellDiscovery:
    """What discovery did in one cell.

    ``mapped``: hosts given a mapping by this run (a host that a
    concurrent run mapped is that run's to report); ``conflicts``: host ->
    the other cell it is already mapped to (its nodes stay unmapped so the
    next run reports them again); ``failure``: why the cell was skipped.
    """

    def __init__(self, cell, mapped=(), conflicts=None, failure=None):
        self.cell = cell
        self.mapped = list(mapped)
        self.conflicts = dict(conflicts or {})
        self.failure = failure

    @property
    def ok(self):
        return self.failure is None and not self.conflicts


def cells_to_discover(context, cell=None):
    """The cell named by uuid or name, or every enabled cell but cell0."""
    if cell is not None:
        return [cell_mapping_obj.CellMapping.get_by_uuid_or_name(context,
                                                                 cell)]
    return [mapping for mapping in
            cell_mapping_obj.CellMapping.get_enabled(context)
            if not mapping.is_cell0]


def discover_hosts(context, cell=None, timeout=DISCOVERY_TIMEOUT_SECONDS):
    """Map the unmapped hosts of the cells; one CellDiscovery per cell."""
    cells = cells_to_discover(context, cell)
    results = cb_context.scatter_gather_cells(context, cells, timeout,
                                              _discover_cell)
    reports = []
    for mapping in cells:
        result = results[mapping.uuid]
        if result is cb_context.did_not_respond_sentinel:
            reports.append(CellDiscovery(
                mapping, failure=f'it did not answer within {timeout} s'))
        elif isinstance(result, cb_context.CellFailure):
            reports.append(CellDiscovery(
                mapping, failure=_describe(result.exception)))
        else:
            mapped, conflicts = result
            reports.append(CellDiscovery(mapping, mapped, conflicts))
    return reports


def _describe(exc):
    return output.describe(exc) or f'{type(exc).__name__}: {exc}'


def _discover_cell(cctxt):
    """Map the hosts of the cell ``cctxt`` targets; ``(mapped, conflicts)``.

    Runs in a scatter-gather thread with a context targeted at the cell;
    API database writes go through the same context (they ignore the
    cell target).
    """
    nodes_by_host = {}
    for node in compute_node_obj.ComputeNode.get_unmapped(cctxt):
        nodes_by_host.setdefault(node.host, []).append(node)
    mapped, conflicts = [], {}
    for host, nodes in nodes_by_host.items():
        created, other_cell = _map_host(cctxt, host)
        if other_cell is not None:
            conflicts[host] = other_cell
            continue
        for node in nodes:
            node.mark_mapped(cctxt)
        if created:
            mapped.append(host)
    return mapped, conflicts


def _map_host(cctxt, host):
    """Map ``host`` to the targeted cell: ``(created, other_cell)``.

    A host already mapped to this cell (by a concurrent run, or a new node
    on a known host) is fine: ``(False, None)``, and the caller marks its
    nodes mapped. A host mapped to another cell gives that cell.
    """
    try:
        _create_host_mapping(cctxt, host, cctxt.cell_uuid)
        return True, None
    except exception.HostMappingExists:
        existing = host_mapping_obj.HostMapping.get_by_host(cctxt, host)
    if existing.cell_mapping.uuid == cctxt.cell_uuid:
        return False, None
    return False, existing.cell_mapping


@api_db.writer
def _create_host_mapping(context, host, cell_uuid):
    """HostMapping.create, in a transaction that locks SQLite first.

    oslo.db opens SQLite transactions with a deferred BEGIN: creating the
    mapping reads the cell's id, then inserts, and SQLite refuses at once
    ("database is locked", without waiting) to turn that read snapshot
    into a write if another discovery committed in between. The writer
    decorator takes the write lock before anything is read
    (``facade.take_sqlite_write_lock``), so that concurrent runs (and the
    cells of one run) queue instead. Server databases lock rows and need
    none of this.
    """
    return host_mapping_obj.HostMapping.create(context, host, cell_uuid)
