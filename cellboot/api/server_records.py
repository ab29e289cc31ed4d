"""Where a server is now: its build request, its cell, or nowhere.

The instance mapping is the starting point of every lookup: with no cell
the server is still a build request; with a cell, the instance row is in
that cell's database. The boot flow moves a server from one to the other
(mapping set, then build request deleted), so a lookup that finds the
build request gone reads the mapping again.

Deleting follows the same path. A server that is only a build request is
deleted with its mapping in one transaction; the boot flow notices
either row missing (``map-instance`` / ``delete-build-request``) and
cleans up whatever it made (``builds.fates.clean_up_deleted``). A
server in a cell (cell0 included) is deleted in the idempotent steps of
``cellboot.builds.deletes``: soft-deleted in its cell, its mapping
marked queued for delete, its claims released, a build request left by
the flow removed. A delete that fails before the mapping is marked
answers an error and changes nothing the owner sees; one that fails
after answers 204 and leaves the rest to a retried DELETE (204 if it
found something left, 404 if not) or to the super conductors' sweep. A
compute host still building the server finds it gone and stops.

Listing goes a page at a time (``list_servers``): the page is chosen in
the API database among the project's live mappings, and only its
servers are read, from their build requests and their cells.
"""

import collections

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from cellboot.api import auth
from cellboot.builds import deletes
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import build_request
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_fault
from cellboot.objects import instance_mapping
from cellboot.policies import servers as server_policies

LOG = logging.getLogger(__name__)


# What a cell that did not answer yields per server.
UNREACHABLE = 'unreachable'

# A server read from its cell: the instance and its latest fault.
InCell = collections.namedtuple('InCell', 'instance fault cell')

# Errors of a cell database that is down or broken.
CELL_ERRORS = (db_exc.DBError, sa.exc.SQLAlchemyError)


class ServerNotFound(exception.NotFound):
    msg_fmt = 'Server %(uuid)s could not be found.'


class CellUnreachable(exception.CellbootException):
    """The cell database holding a server failed or did not answer.

    The message is for users: the cell's name and the database's error
    are logged for the operator, not answered.
    """

    msg_fmt = ('The cell holding server %(uuid)s did not answer; try again '
               'later.')
    code = 503


class DeleteNotFinished(exception.CellbootException):
    msg_fmt = ('Server %(uuid)s could not be deleted completely now; '
               'delete it again.')
    code = 503


def _unreachable(uuid, cell, exc):
    LOG.warning('Cell %s (%s) did not answer for server %s: %s', cell.name,
                cell.uuid, uuid, exc)
    return CellUnreachable(uuid=uuid)


def get_mapping(context, uuid):
    """The mapping of a server the context may see; 404 otherwise.

    A server the policy does not let the caller see (another project's,
    by default) is reported as missing, not forbidden, so that its
    existence is not revealed.
    """
    try:
        mapping = instance_mapping.InstanceMapping.get_by_instance_uuid(
            context, uuid)
    except exception.InstanceMappingNotFound:
        raise ServerNotFound(uuid=uuid)
    if not auth.may(context, server_policies.SHOW, mapping.project_id,
                    mapping.user_id):
        raise ServerNotFound(uuid=uuid)
    return mapping


def in_cell(context, uuid, cell, fn, read=False):
    """``fn(cctxt)`` in ``cell``, waiting ``[api] cell_timeout`` at most.

    A cell that fails or does not answer in time raises CellUnreachable
    (503); the thread left waiting on a silent cell ends with the
    driver's timeouts (``[api] cell_read_timeout``). A ``read`` does not
    wait for a cell that this process found not answering (see
    ``cellboot.db.cell.reachability``): 503 at once. InstanceNotFound
    becomes ServerNotFound; other errors are raised as they are.
    """
    result = cb_context.scatter_gather_cells(
        context, [cell], CONF.api.cell_timeout, fn,
        skip_down_cells=read)[cell.uuid]
    if result is cb_context.did_not_respond_sentinel:
        raise _unreachable(uuid, cell, 'no answer within [api] '
                                       'cell_timeout')
    if isinstance(result, cb_context.CellFailure):
        if isinstance(result.exception, exception.InstanceNotFound):
            raise ServerNotFound(uuid=uuid)
        if isinstance(result.exception, CELL_ERRORS):
            raise _unreachable(uuid, cell, result.exception)
        raise result.exception
    return result


def _read_in_cell(context, uuid, cell):
    def read(cctxt):
        instance = instance_obj.Instance.get_by_uuid(cctxt, uuid)
        fault = instance_fault.InstanceFault.get_latest_for_instances(
            cctxt, [uuid]).get(uuid)
        return InCell(instance, fault, cell)
    return in_cell(context, uuid, cell, read, read=True)


def get(context, uuid):
    """A ``BuildRequest`` or an ``InCell``; ServerNotFound if neither."""
    mapping = get_mapping(context, uuid)
    if mapping.cell_mapping is None:
        try:
            return build_request.BuildRequest.get_by_instance_uuid(
                context, uuid)
        except exception.BuildRequestNotFound:
            # The flow moved it to a cell meanwhile, or its owner
            # deleted it: the mapping says which.
            mapping = get_mapping(context, uuid)
            if mapping.cell_mapping is None:
                raise ServerNotFound(uuid=uuid)
    return _read_in_cell(context, uuid, mapping.cell_mapping)


def delete(context, uuid, scheduler):
    """Delete a server wherever it is; ServerNotFound if it is not.

    The steps are those of the module docstring; a server whose delete
    already passed step 2 only has the later steps finished (404 when
    there was nothing left to finish: it is deleted).
    """
    mapping = get_mapping(context, uuid)
    auth.authorize(context, server_policies.DELETE,
                   {'project_id': mapping.project_id,
                    'user_id': mapping.user_id})
    if mapping.cell_mapping is None and not mapping.queued_for_delete:
        if deletes.delete_pending(context, uuid):
            return
        # The boot flow created it in a cell just now.
        mapping = get_mapping(context, uuid)
        if mapping.cell_mapping is None and not mapping.queued_for_delete:
            raise ServerNotFound(uuid=uuid)
    if mapping.queued_for_delete:
        if not deletes.finish(context, uuid, scheduler):
            raise ServerNotFound(uuid=uuid)
        return
    cell = mapping.cell_mapping
    if not in_cell(context, uuid, cell, lambda cctxt: deletes.
                   soft_delete_in_cell(cctxt, uuid, cell)):
        LOG.info('Server %s has no instance in cell %s; finishing its '
                 'delete', uuid, cell.name)
    try:
        mapping.set_queued_for_delete(context)
    except CELL_ERRORS as exc:
        # The API database: the delete is retried whole, or finished by
        # the conductors' sweep, which finds the instance soft-deleted.
        LOG.warning('Could not mark server %s queued for delete: %s', uuid,
                    exc)
        raise DeleteNotFinished(uuid=uuid)
    try:
        deletes.finish(context, uuid, scheduler)
    except Exception as exc:
        # Deleted for its owner; what is left is finished by a retry or
        # by the super conductors' sweep.
        LOG.warning('Server %s is deleted but its claims or build request '
                    'could not be removed yet (%s); the conductors\' sweep '
                    'will finish it', uuid, exc)


def _cell_servers(cctxt, uuids, where=None):
    """``[(instance, fault)]`` of the live instances of ``uuids`` that
    pass ``where`` (a clause over the instances table, or None)."""
    instances = instance_obj.Instance.get_by_uuids(cctxt, uuids, where)
    faults = instance_fault.InstanceFault.get_latest_for_instances(
        cctxt, [inst.uuid for inst in instances
                if inst.vm_state == instance_obj.vm_states.ERROR])
    return [(inst, faults.get(inst.uuid)) for inst in instances]


def _read(context, mappings, timeout, where=None):
    """``[(uuid, record or None)]`` of ``mappings``, in their order.

    A record is a ``BuildRequest``, an ``InCell`` or ``(uuid,
    UNREACHABLE)`` for a cell that did not answer within ``timeout``
    seconds, or that this process found not answering lately (it is not
    waited for: see ``cellboot.db.cell.reachability``); None for a server
    that is gone (deleted meanwhile). Only these servers are read: their
    build requests in one query, and each cell once, in parallel, for
    its servers of the page. ``where`` narrows each cell's query: a
    server it leaves out is None, as a deleted one.
    """
    mappings = {mapping.instance_uuid: mapping for mapping in mappings}
    waiting = [uuid for uuid, mapping in mappings.items()
               if mapping.cell_mapping is None]
    pending = build_request.BuildRequest.get_by_instance_uuids(context,
                                                               waiting)
    moved = [uuid for uuid in waiting if uuid not in pending]
    # The boot flow may have moved these into a cell since their mapping
    # was read: the mapping says where they are now.
    for uuid, mapping in instance_mapping.InstanceMapping \
            .get_by_instance_uuids(context, moved).items():
        if not mapping.queued_for_delete:
            mappings[uuid] = mapping
    by_cell = collections.defaultdict(list)
    cells = {}
    for uuid, mapping in mappings.items():
        if mapping.cell_mapping is not None:
            by_cell[mapping.cell_mapping.uuid].append(uuid)
            cells[mapping.cell_mapping.uuid] = mapping.cell_mapping
    results = cb_context.scatter_gather_cells(
        context, cells.values(), timeout,
        lambda cctxt: _cell_servers(cctxt, by_cell[cctxt.cell_uuid], where),
        skip_down_cells=True)
    found = dict(pending)
    for cell_uuid, result in results.items():
        if cb_context.is_cell_failure(result):
            found.update((uuid, (uuid, UNREACHABLE))
                         for uuid in by_cell[cell_uuid])
            continue
        for instance, fault in result:
            found[instance.uuid] = InCell(instance, fault, cells[cell_uuid])
    return [(uuid, found.get(uuid)) for uuid in mappings]


# Servers read at a time for a filtered page: a page of 1 that matches
# one server in a thousand costs ten rounds, not a thousand.
FILTERED_BATCH = 100

# A page of a listing: its records, whether more may follow, and the
# instance uuid to give as the next page's marker.
ServerPage = collections.namedtuple('ServerPage', 'records more marker')


def list_servers(context, project_id, timeout, limit, marker=None,
                 keep=None, where=None, descending=False):
    """A page of up to ``limit`` of a project's servers, oldest first.

    The page is read in the API database (the project's live instance
    mappings after ``marker``, in id order), then only its servers are
    read from their build requests and cells (see ``_read``), never the
    project's whole history. ``marker`` is an instance uuid of the
    project (MarkerNotFound otherwise). ``keep(record)``, a filter,
    makes the page read on until it holds ``limit`` servers that pass it
    or the list ends; ``where``, a clause over a cell's instances, is
    the part of that filter each cell's query applies itself, so that a
    cell returns only matching rows. ``project_id`` None lists every
    project's; ``descending``: newest first. Returns a ServerPage.
    """
    records = []
    # A filter may pass few servers of many: read more of them at a time.
    batch = limit if keep is None else max(limit, FILTERED_BATCH)
    while True:
        mappings = instance_mapping.InstanceMapping.get_page(
            context, project_id, batch + 1, marker, descending)
        more = len(mappings) > batch
        mappings = mappings[:batch]
        if not mappings:
            return ServerPage(records, False, marker)
        for index, (uuid, record) in enumerate(_read(context, mappings,
                                                     timeout, where)):
            marker = uuid
            if record is None or (keep is not None and not keep(record)):
                continue
            records.append(record)
            if len(records) == limit:
                return ServerPage(records, more or index < len(mappings) - 1,
                                  marker)
        if not more:
            return ServerPage(records, False, marker)
