"""Server lists in an order the API database cannot give: merged cells.

Listed in creation order (the default), a page is chosen among the
project's instance mappings in the API database, then read
(``server_records.list_servers``). Sorted by a server's name, host,
state, uuid or last change, the order is only known to the cells
holding the servers: each cell answers its next rows in ``(value,
uuid)`` order, limited, in one query (the project's rows found by
index, then sorted: no index holds these orders); the build requests not in
a cell yet are sorted here; and ``heapq.merge`` interleaves them. The
uuid breaks ties, so a page ends at a ``(value, uuid)`` pair no other
server shares: the next page is every server after the marker's pair,
each server once, whatever it shares its name or host with. Text is
compared byte by byte on every backend (``cellboot.db.ordering``),
which is the order Python merges in.

A list with ``changes-since`` is read this way whatever its sort key:
as in Nova, it holds the servers deleted since then (status DELETED),
which a cell keeps as soft-deleted rows while the API database no
longer maps them as live.

A cell that does not answer within ``timeout`` is left out of a sorted
list (logged): its servers' order is unknown. A server moving from its
build request into a cell while the list is read is listed once.
"""

import heapq

from oslo_log import log as logging
import sqlalchemy as sa

from cellboot.api import server_records
from cellboot import context as cb_context
from cellboot.db import ordering
from cellboot import exception
from cellboot.objects import build_request
from cellboot.objects import cell_mapping
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_fault
from cellboot.objects import instance_mapping
from cellboot.objects import instance_table

LOG = logging.getLogger(__name__)

_COLUMNS = instance_table.INSTANCES.c

# Each sort key (Nova's names): its expression over a cell's instances
# and its value for a build request's instance (a dict). NULL text
# sorts as '' and a row never updated by its creation time, so that
# SQL and Python compare the same values.
_SORTS = {
    'created_at': (lambda: _COLUMNS.created_at,
                   lambda created, inst: created),
    'updated_at': (instance_table.last_change,
                   lambda created, inst: created),
    'display_name': (
        lambda: ordering.binary(sa.func.coalesce(_COLUMNS.display_name,
                                                 '')),
        lambda created, inst: inst.get('display_name') or ''),
    'uuid': (lambda: ordering.binary(_COLUMNS.uuid),
             lambda created, inst: inst.get('uuid') or ''),
    'host': (lambda: ordering.binary(sa.func.coalesce(_COLUMNS.host, '')),
             lambda created, inst: ''),
    'vm_state': (lambda: ordering.binary(_COLUMNS.vm_state),
                 lambda created, inst: instance_table.vm_states.BUILDING),
}

# Sort keys; the first is the default and pages by the API database.
SORT_KEYS = tuple(_SORTS)
DEFAULT_SORT_KEY = SORT_KEYS[0]

# Rows a cell answers at a time when a filter reads on past them.
FILTERED_BATCH = 100


def _instance_value(key, inst):
    if key == 'updated_at':
        return inst.updated_at or inst.created_at
    return getattr(inst, key) or ''


def _value(key, record):
    """The sort value of a BuildRequest or an InCell."""
    if isinstance(record, build_request.BuildRequest):
        inst = dict(record.instance, uuid=record.instance_uuid)
        return _SORTS[key][1](record.created_at, inst)
    return _instance_value(key, record.instance)


def _marker_value(context, project_id, key, marker):
    """The ``(value, uuid)`` of the marker; MarkerNotFound if the
    project has no such server (a deleted one still has its place).

    A marker that was a build request may have moved into a cell since
    its page was read: its mapping is read again then.
    """
    try:
        for _attempt in range(2):
            mapping = instance_mapping.InstanceMapping.get_by_instance_uuid(
                context, marker)
            if project_id is not None and mapping.project_id != project_id:
                break
            if mapping.cell_mapping is not None:
                inst = server_records.in_cell(
                    context, marker, mapping.cell_mapping,
                    lambda cctxt: instance_obj.Instance.get_by_uuid(
                        cctxt, marker, read_deleted=True), read=True)
                return _instance_value(key, inst), marker
            try:
                record = build_request.BuildRequest.get_by_instance_uuid(
                    context, marker)
            except exception.BuildRequestNotFound:
                continue
            return _value(key, record), marker
    except (exception.InstanceMappingNotFound,
            server_records.ServerNotFound):
        pass
    raise exception.MarkerNotFound(marker=marker)


def _pending(context, project_id, key, descending, after):
    """The build requests' ``((value, uuid), record)``, sorted."""
    if project_id is None:
        requests = build_request.BuildRequest.get_all(context)
    else:
        requests = build_request.BuildRequest.get_by_project(context,
                                                             project_id)
    items = sorted((((_value(key, req), req.instance_uuid), req)
                    for req in requests), key=lambda item: item[0],
                   reverse=descending)
    if after is not None:
        items = [item for item in items
                 if (item[0] < after if descending else item[0] > after)]
    return items


class _CellRows:
    """One cell's rows in order, read ``batch`` at a time."""

    def __init__(self, cell, where, key, descending, after, batch, timeout):
        self.cell = cell
        self.where = where
        self.key = key
        self.descending = descending
        self.after = after
        self.batch = batch
        self.timeout = timeout

    def read(self, cctxt):
        """The next batch, ``[(instance, latest fault)]``."""
        instances = instance_obj.Instance.get_sorted_page(
            cctxt, self.where, _SORTS[self.key][0](), self.descending,
            self.after, self.batch)
        faults = instance_fault.InstanceFault.get_latest_for_instances(
            cctxt, [inst.uuid for inst in instances
                    if inst.vm_state == instance_table.vm_states.ERROR])
        return [(inst, faults.get(inst.uuid)) for inst in instances]

    def rows(self, context, first):
        """Iterate ``((value, uuid), InCell)`` from ``first``, the
        first batch read (with every cell's, in parallel), on."""
        found = first
        while found:
            for inst, fault in found:
                self.after = (_instance_value(self.key, inst), inst.uuid)
                yield self.after, server_records.InCell(inst, fault,
                                                        self.cell)
            if len(found) < self.batch:
                return
            found = _gather(context, [self], self.timeout)[self.cell.uuid]


def _gather(context, readers, timeout):
    """``{cell uuid: [(instance, fault)]}``; a cell that failed or did
    not answer yields none."""
    by_uuid = {reader.cell.uuid: reader for reader in readers}
    results = cb_context.scatter_gather_cells(
        context, [reader.cell for reader in readers], timeout,
        lambda cctxt: by_uuid[cctxt.cell_uuid].read(cctxt),
        skip_down_cells=True)
    for cell_uuid, result in results.items():
        if cb_context.is_cell_failure(result):
            LOG.warning('Cell %s did not answer a sorted server list; its '
                        'servers are left out', by_uuid[cell_uuid].cell.name)
            results[cell_uuid] = []
    return results


def _cell_where(project_id, where, read_deleted):
    clauses = [sa.true() if where is None else where]
    if project_id is not None:
        clauses.append(_COLUMNS.project_id == project_id)
    if not read_deleted:
        clauses.append(_COLUMNS.deleted == sa.false())
    return sa.and_(*clauses)


def list_servers(context, project_id, key, timeout, limit, marker=None,
                 keep=None, where=None, descending=False,
                 read_deleted=False):
    """A page of up to ``limit`` servers in ``key`` order; a ServerPage.

    The arguments are ``server_records.list_servers``'s, with the sort
    ``key`` and ``read_deleted`` (soft-deleted instances listed too).
    """
    after = None
    if marker is not None:
        after = _marker_value(context, project_id, key, marker)
    pending = _pending(context, project_id, key, descending, after)
    batch = limit + 1 if keep is None else max(limit + 1, FILTERED_BATCH)
    cell_where = _cell_where(project_id, where, read_deleted)
    readers = [_CellRows(cell, cell_where, key, descending, after, batch,
                         timeout)
               for cell in cell_mapping.CellMapping.get_all(context)]
    firsts = _gather(context, readers, timeout)
    merged = heapq.merge(
        pending, *(reader.rows(context, firsts[reader.cell.uuid])
                   for reader in readers),
        key=lambda item: item[0], reverse=descending)
    records, seen = [], set()
    for (_value_, uuid), record in merged:
        if uuid in seen or (keep is not None and not keep(record)):
            continue
        seen.add(uuid)
        records.append(record)
        if len(records) > limit:
            break
    page = records[:limit]
    last = _uuid(page[-1]) if page else marker
    return server_records.ServerPage(page, len(records) > limit, last)


def _uuid(record):
    if isinstance(record, build_request.BuildRequest):
        return record.instance_uuid
    return record.instance.uuid
