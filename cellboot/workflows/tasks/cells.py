"""``map-host-to-cell`` and ``create-in-cell``: give each instance a cell."""

from oslo_log import log as logging
from taskflow import task

from cellboot.builds import fates
from cellboot.builds import handback
from cellboot import context as cb_context
from cellboot.db import batches
from cellboot.db.cell import connection as cell_connection
from cellboot.db import outage as db_outage
from cellboot import exception
from cellboot.objects import build_args
from cellboot.objects import host_mapping as host_mapping_obj
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action as action_obj
from cellboot.workflows import tasks
from cellboot.workflows.tasks import compute

LOG = logging.getLogger(__name__)


class MapHostToCell(task.Task):
    """Find the cell of each instance's chosen host (host mappings).

    Provides ``cells``: ``{instance_uuid: cell_uuid}``, None for an
    instance whose host is not mapped to a cell, or is mapped to another
    cell than the one whose scheduler offered it (a cell may only offer
    its own hosts: a compromised one must not send builds into another):
    that instance alone is buried in cell0 with a fault saying so (its
    claim released), and its siblings go on.

    Reversion strategy: none; it only reads, and a burial is final.

    Rerun-safe (``cellboot.flowrun.storage``): its answer follows from
    the selections and the host mappings, and a burial replays.
    """

    default_provides = 'cells'
    rerun_safe = True

    def execute(self, context, scheduler, selections, build_requests,
                request_spec):
        host_cells = {}
        cells = {}
        for uuid, hosts in selections.items():
            host = hosts[0]['service_host']
            if host not in host_cells:
                try:
                    host_cells[host] = host_mapping_obj.HostMapping.\
                        get_by_host(context, host).cell_mapping.uuid
                except exception.HostMappingNotFound as exc:
                    host_cells[host] = exc
            found = host_cells[host]
            offered_by = hosts[0].get('cell_uuid')
            if not isinstance(found, Exception) and offered_by and \
                    found != offered_by:
                found = exception.HostInAnotherCell(cell=offered_by,
                                                    host=host)
            if isinstance(found, Exception):
                fates.bury_in_cell0(context, scheduler, build_requests[uuid],
                                    request_spec, found)
                found = None
            cells[uuid] = found
        return cells


class CreateInCell(task.Task):
    """Create each instance in its cell, building, on its chosen host.

    The instance row (vm_state building, task_state scheduling until
    ``cast-to-compute`` hands it to its host, host and node of the chosen
    host, and what ``cast-to-compute`` will send it with: the
    alternates, the spec, the first retry state, for a cell conductor
    to send it again if that cast is lost, see
    ``cellboot.objects.build_args``) and its 'create' action are
    written together. An instance that
    already exists is a replay of this step and counts as created.
    An instance its cell refuses is buried in cell0 with the error; its
    siblings go on. A cell database that cannot be reached fails the
    step instead, which the engine runs again until the database is back
    or ``[database] outage_retry_seconds`` ran out (the flow then
    reverts, and the instances end in cell0 or ERROR in their cell).

    Reversion strategy: each instance created in a cell that is still
    building is put in ERROR with the flow's failure as its fault, its
    claim released, mapped to its cell and its build request removed, so
    that it is settled where it is. Instances that never reached their
    cell are left to ``schedule``'s revert (cell0).

    Rerun-safe (``cellboot.flowrun.storage``): an instance that exists,
    deleted or not, counts as created. A resumed run leaves alone the
    instances that moved to another cell since (``handback.left_cells``:
    outcome MOVED, which the next steps skip).
    """

    default_provides = 'created'
    rerun_safe = True

    def execute(self, context, scheduler, cells, selections, build_requests,
                request_spec, cell_mappings, fence=None, resumed=False):
        mappings = cell_mappings
        created = {uuid: fates.BURIED for uuid, cell_uuid in cells.items()
                   if cell_uuid is None}
        if resumed:
            # A late replay: what moved on to another cell is not ours.
            for uuid in handback.left_cells(context, {
                    uuid: cell_uuid for uuid, cell_uuid in cells.items()
                    if cell_uuid is not None}):
                LOG.info('Instance %s left cell %s for another since this '
                         'flow placed it there; not created there again',
                         uuid, cells[uuid])
                created[uuid] = fates.MOVED
        by_cell = {}
        for uuid, cell_uuid in cells.items():
            if cell_uuid is not None and uuid not in created:
                by_cell.setdefault(cell_uuid, []).append(uuid)

        def bury(uuid, exc):
            if db_outage.is_connection_lost(exc):
                # Not the instance's fault: the step waits for the cell
                # (cellboot.flowrun.outages runs it again; what it created
                # already is a replay then).
                raise exc
            LOG.error('Could not create instance %s in cell %s: %s', uuid,
                      cells[uuid], exc)
            return fates.bury_in_cell0(context, scheduler,
                                       build_requests[uuid], request_spec,
                                       exc)

        for cell_uuid, uuids in by_cell.items():
            try:
                cell = mappings.get(cell_uuid)
            except exception.CellMappingNotFound as exc:
                created.update((uuid, bury(uuid, exc)) for uuid in uuids)
                continue
            with cb_context.target_cell(context, cell) as cctxt:
                created.update(batches.in_chunks(
                    cctxt, cell_connection.pick_context_manager(cctxt),
                    uuids,
                    lambda chunk: self._create(
                        cctxt, chunk, build_requests, request_spec,
                        selections),
                    on_error=bury,
                    before_chunk=lambda: tasks.check_fence(fence)))
        return {uuid: created[uuid] for uuid in cells}

    @staticmethod
    def _create(cctxt, uuids, build_requests, request_spec, selections):
        """The instances and their 'create' actions, in the targeted cell.

        All in one transaction (see ``cellboot.db.batches``), one
        statement for the instances and one for the actions, so an
        instance never exists without its action. One that exists
        already is a replay.
        """
        existing = instance_obj.Instance.existing_uuids(cctxt, uuids)
        if existing:
            LOG.debug('Instances %s already exist (a replayed step)',
                      ', '.join(sorted(existing)))
        new = [uuid for uuid in uuids if uuid not in existing]
        instances, actions = [], []
        for uuid in new:
            build_request, hosts = build_requests[uuid], selections[uuid]
            project_id, user_id = fates.owner(build_request)
            chosen = hosts[0]
            instances.append(dict(
                fates.instance_values(build_request, request_spec),
                uuid=uuid, project_id=project_id, user_id=user_id,
                vm_state=instance_obj.vm_states.BUILDING,
                task_state=instance_obj.task_states.SCHEDULING,
                host=chosen['service_host'], node=chosen['nodename'],
                build_args=build_args.make(hosts[1:], request_spec,
                                           compute.first_retry())))
            actions.append({'instance_uuid': uuid,
                            'action': fates.CREATE_ACTION,
                            'request_id': cctxt.request_id,
                            'user_id': user_id, 'project_id': project_id})
        if new:
            instance_obj.Instance.create_many(cctxt, instances)
            action_obj.InstanceAction.start_many(cctxt, actions)
        return dict.fromkeys(uuids, fates.OK)

    def revert(self, context, scheduler, cells, cell_mappings, result,
               flow_failures, **kwargs):
        error = tasks.first_failure(flow_failures)
        mappings = cell_mappings
        done = result if isinstance(result, dict) else {}

        def fail_one(uuid):
            cell = mappings.get(cells[uuid])
            outcome = fates.fail_in_cell(context, scheduler, uuid, cell,
                                         error)
            if outcome != fates.DELETED:
                # In its cell (ERROR, or ACTIVE already): settle it there.
                fates.settle(context, scheduler, uuid, cell)

        tasks.revert_each(
            [uuid for uuid, cell_uuid in cells.items()
             if cell_uuid is not None and done.get(uuid, fates.OK) ==
             fates.OK],
            fail_one, 'fail')
