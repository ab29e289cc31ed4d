"""The cross-cell flow's own atoms: take a handed-back build out of its cell.

``recreate-build-request``, ``unmap-instance``, ``release-old-cell`` and
``remove-from-old-cell`` turn a build its cell handed back
(``cellboot.builds.handback``) into a build request again, which the
boot flow's atoms then place in another cell; ``carry-history`` ends
the flow by writing the old cell's events into the new cell's action.

What the API shows stays one BUILD server throughout: the build
request is written while the mapping still points at the old cell
(the API reads the mapping first, so it shows the old cell's building
row), then the mapping is pointed at no cell (the API shows the build
request), and only then does the old row go. A listing reads one record
per mapping, so it never shows the server twice.

A delete by the owner at any moment is found by the next atom (mapping
gone or queued for delete, old row deleted): that atom finishes the
delete (``_finish_delete``) and raises ServerGone, which reverts the
flow; the reverts then find nothing to undo.
"""

from oslo_log import log as logging
from taskflow import task

from cellboot.builds import fates
from cellboot.builds import handback
from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import build_request as build_request_obj
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_history
from cellboot.objects import instance_mapping as mapping_obj
from cellboot.objects import request_spec as request_spec_obj
from cellboot.workflows import tasks

LOG = logging.getLogger(__name__)


class ServerGone(exception.CellbootException):
    msg_fmt = ('Server %(uuid)s was deleted by its owner while it moved '
               'out of cell %(cell)s; nothing is left of it.')


class MoveRefused(exception.CellbootException):
    msg_fmt = 'Build %(uuid)s is not moved out of cell %(cell)s: %(reason)s'


def _mapping(context, uuid):
    try:
        return mapping_obj.InstanceMapping.get_by_instance_uuid(context,
                                                                uuid)
    except exception.InstanceMappingNotFound:
        return None


def _old_row(context, cell, uuid):
    with cb_context.target_cell(context, cell) as cctxt:
        try:
            return instance_obj.Instance.get_by_uuid(cctxt, uuid,
                                                     read_deleted=True)
        except exception.InstanceNotFound:
            return None


def _finish_delete(context, scheduler, uuid, cell):
    """What a delete racing the move leaves, removed; then ServerGone."""
    LOG.info('Instance %s was deleted while it moved out of cell %s; '
             'finishing its delete', uuid, cell.name)
    row = _old_row(context, cell, uuid)
    if row is not None and not row.deleted:
        with cb_context.target_cell(context, cell) as cctxt:
            try:
                row.destroy(cctxt)
            except exception.InstanceNotFound:
                pass
    scheduler.release_resources(context, uuid)
    scheduler.release_pools(context, uuid)
    build_request_obj.BuildRequest.destroy_by_instance_uuid(context, uuid)
    raise ServerGone(uuid=uuid, cell=cell.name)


def _gone(mapping):
    return mapping is None or mapping.queued_for_delete


def build_request_of(instance):
    """The build request payload of a cell's instance (same uuid)."""
    return {
        'instance_uuid': instance.uuid, 'project_id': instance.project_id,
        'user_id': instance.user_id,
        'instance': {
            'uuid': instance.uuid, 'display_name': instance.display_name,
            'reservation_id': instance.reservation_id,
            'flavor': instance.flavor, 'image_ref': instance.image_ref,
            'availability_zone': instance.availability_zone,
            'metadata': instance.metadata or {},
            'project_id': instance.project_id,
            'user_id': instance.user_id}}


class RecreateBuildRequest(task.Task):
    """Make the handed-back build a build request again.

    Checks that the instance mapping points at the old cell and that the
    old row is live and marked handed back (else: a delete is finished,
    anything else refused). Reads the old cell's history (persisted with
    this atom's result), records the old cell in the API database's
    request spec (``handback.with_cell_left``: the tried cells, which
    ``schedule`` excludes) and writes the build request, same uuid, from
    the cell's row. A build that may not move on (``[conductor]
    max_cells`` reached by the API level's record, the option off, or no
    other cell) is ended in ERROR in the old cell, with a fault naming
    every cell tried and the last failure, and MoveRefused ends the flow.

    Provides ``build_requests``, ``request_spec`` and ``history``.

    Reversion strategy: while the mapping still points at the old cell
    (a later atom failed before the move), the old row is put in ERROR
    there with the flow's failure and the build request is removed.
    """

    def execute(self, context, scheduler, instance_uuids, old_cell,
                cell_mappings):
        (uuid,) = instance_uuids
        cell = cell_mappings.get(old_cell)
        mapping = _mapping(context, uuid)
        if _gone(mapping):
            _finish_delete(context, scheduler, uuid, cell)
        row = _old_row(context, cell, uuid)
        if row is None or row.deleted:
            _finish_delete(context, scheduler, uuid, cell)
        if mapping.cell_mapping is None or \
                mapping.cell_mapping.uuid != cell.uuid or not row.handed_back:
            raise MoveRefused(uuid=uuid, cell=cell.name,
                              reason='it is not a build this cell handed '
                                     'back')
        with cb_context.target_cell(context, cell) as cctxt:
            history = instance_history.read(cctxt, uuid, cell.name)
        spec_row = request_spec_obj.RequestSpec.get_by_instance_uuid(
            context, uuid)
        spec = handback.with_cell_left(spec_row.spec, cell.uuid, cell.name,
                                       handback.failure_of(history))
        if not handback.may_move(context, spec):
            error = handback.give_up(
                [c['name'] for c in handback.cells_tried(spec)],
                handback.last_failure(spec))
            fates.fail_in_cell(context, scheduler, uuid, cell, error,
                               event=fates.RESCHEDULE_EVENT)
            raise MoveRefused(uuid=uuid, cell=cell.name, reason=str(error))
        if spec != spec_row.spec:
            spec_row.spec = spec
            spec_row.save(context)
        payload = build_request_of(row)
        try:
            build_request_obj.BuildRequest.create(
                context, uuid, payload['project_id'], payload['instance'],
                user_id=payload['user_id'])
        except exception.BuildRequestExists:
            pass  # a replay of this step
        return {uuid: payload}, spec, history

    def revert(self, context, scheduler, instance_uuids, old_cell,
               cell_mappings, result, flow_failures, **kwargs):
        (uuid,) = instance_uuids
        cell = cell_mappings.get(old_cell)
        mapping = _mapping(context, uuid)
        if _gone(mapping) or mapping.cell_mapping is None or \
                mapping.cell_mapping.uuid != cell.uuid:
            return  # deleted, or moved on: settled by a later atom
        failure = tasks.first_failure(flow_failures)
        if isinstance(failure, (ServerGone, MoveRefused)):
            return
        row = _old_row(context, cell, uuid)
        if row is not None and row.handed_back:
            fates.fail_in_cell(context, scheduler, uuid, cell, failure,
                               event=fates.RESCHEDULE_EVENT)
        build_request_obj.BuildRequest.destroy_by_instance_uuid(
            context, uuid)


class UnmapInstance(task.Task):
    """Point the instance mapping of the old cell at no cell.

    From now on the API shows the build request. A mapping that does not
    point at the old cell any more was unmapped by a run before (a
    replay) when it points at no cell, or deleted by its owner.

    Reversion strategy: a mapping still pointing at no cell is pointed
    back at the old cell while its row is there (``recreate-build-
    request``'s revert then ends it in ERROR); once the row is gone,
    the build is buried in cell0 with the failure (as ``schedule``
    would).
    """

    def execute(self, context, scheduler, instance_uuids, old_cell,
                cell_mappings):
        (uuid,) = instance_uuids
        cell = cell_mappings.get(old_cell)
        if mapping_obj.InstanceMapping.unmap_from(context, uuid, cell):
            return True
        mapping = _mapping(context, uuid)
        if _gone(mapping) or mapping.cell_mapping is not None:
            _finish_delete(context, scheduler, uuid, cell)
        return True

    def revert(self, context, scheduler, instance_uuids, old_cell,
               cell_mappings, build_requests, request_spec, flow_failures,
               **kwargs):
        (uuid,) = instance_uuids
        mapping = _mapping(context, uuid)
        if _gone(mapping) or mapping.cell_mapping is not None:
            return
        cell = cell_mappings.get(old_cell)
        row = _old_row(context, cell, uuid)
        if row is not None and row.handed_back:
            mapping_obj.InstanceMapping.remap_to(context, uuid, cell)
            return
        error = handback.with_cells_tried(
            tasks.first_failure(flow_failures), request_spec)
        fates.bury_in_cell0(context, scheduler, build_requests[uuid],
                            request_spec, error)


class ReleaseOldCell(task.Task):
    """Give back what the build holds: its host claim in the old cell
    and its shares of the shared pools, through the API level's
    scheduler (consumer = the instance).

    Reversion strategy: none; ``schedule`` claims anew.
    """

    def execute(self, context, scheduler, instance_uuids):
        for uuid in instance_uuids:
            scheduler.release_resources(context, uuid)
            scheduler.release_pools(context, uuid)
        return True


class RemoveFromOldCell(task.Task):
    """The instance row leaves the old cell, with its actions, events and
    faults (``instance_history.remove``; the history travels in this
    flow, see ``recreate-build-request``). Gone already is a replay.

    Reversion strategy: the history is carried to wherever the instance
    is now (cell0 after ``schedule``'s burial), so it is not lost.
    """

    def execute(self, context, instance_uuids, old_cell, cell_mappings):
        cell = cell_mappings.get(old_cell)
        with cb_context.target_cell(context, cell) as cctxt:
            for uuid in instance_uuids:
                instance_history.remove(cctxt, uuid)
        return True

    def revert(self, context, instance_uuids, history, **kwargs):
        for uuid in instance_uuids:
            carry(context, uuid, history)


def carry(context, uuid, history):
    """Write ``history`` into the instance's action where it is now."""
    mapping = _mapping(context, uuid)
    if _gone(mapping) or mapping.cell_mapping is None:
        return 0
    with cb_context.target_cell(context, mapping.cell_mapping) as cctxt:
        return instance_history.carry(cctxt, uuid, history,
                                      context.request_id)


class CarryHistory(task.Task):
    """Write the old cell's events into the new cell's create action.

    Rerun-safe: a cell's events are written once (``carry``).

    Reversion strategy: none (last atom).
    """

    rerun_safe = True

    def execute(self, context, instance_uuids, history):
        return sum(carry(context, uuid, history) for uuid in instance_uuids)
