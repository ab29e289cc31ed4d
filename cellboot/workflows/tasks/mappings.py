"""``map-instance`` and ``delete-build-request``: hand over to the cell.

Once an instance exists in its cell, its mapping is pointed there and
then its build request is removed, in that order, so that at every
moment the API finds the server through one of the two. Either being
gone already means that the owner deleted the server meanwhile: the
build is cleaned up (``fates.clean_up_deleted``) and nothing is cast.
"""

from taskflow import task

from cellboot.builds import api_records
from cellboot.builds import fates
from cellboot.db.api import connection as api_connection
from cellboot.db import batches
from cellboot.workflows import tasks


class MapInstance(task.Task):
    """Point each created instance's mapping at its cell.

    A missing mapping means the owner deleted the server: its instance
    is destroyed in the cell, its claim released.

    Reversion strategy: none; the mapping points at the cell that holds
    the instance, which stays true when a later atom fails (the instance
    is then put in ERROR in that cell by ``create-in-cell``'s revert).

    Rerun-safe (``cellboot.flowrun.storage``): pointing a mapping at the
    cell it points at already changes nothing.
    """

    default_provides = 'mapped'
    rerun_safe = True

    def execute(self, context, scheduler, cells, created, cell_mappings,
                fence=None):
        mappings = cell_mappings

        def map_chunk(uuids):
            by_cell = {}
            for uuid in uuids:
                by_cell.setdefault(cells[uuid], []).append(uuid)
            found = {}
            for cell_uuid, in_cell in by_cell.items():
                found.update(api_records.map_many_to_cell(
                    context, in_cell, mappings.get(cell_uuid)))
            return found

        found = batches.in_chunks(
            context, api_connection.get_context_manager(),
            tasks.going_on(created), map_chunk,
            before_chunk=lambda: tasks.check_fence(fence))
        mapped = dict(created)
        for uuid, still_there in found.items():
            if not still_there:
                mapped[uuid] = fates.clean_up_deleted(
                    context, scheduler, uuid, mappings.get(cells[uuid]))
        return mapped


class DeleteBuildRequest(task.Task):
    """Remove each mapped instance's build request.

    A build request already gone means the owner deleted the server:
    its instance is destroyed in the cell, its claim released, its
    mapping removed, and it is not cast to a compute host.

    Reversion strategy: none; the instance lives in its cell from now on,
    where ``create-in-cell``'s revert puts it in ERROR if the flow fails.

    Rerun-safe (``cellboot.flowrun.storage``): a build request this step
    removed itself is told from the owner's delete by the instance
    mapping (``api_records.delete_build_request``).
    """

    default_provides = 'settled'
    rerun_safe = True

    def execute(self, context, scheduler, cells, mapped, cell_mappings,
                fence=None):
        mappings = cell_mappings
        found = batches.in_chunks(
            context, api_connection.get_context_manager(),
            tasks.going_on(mapped),
            lambda uuids: api_records.delete_build_requests(context, uuids),
            before_chunk=lambda: tasks.check_fence(fence))
        settled = dict(mapped)
        for uuid, still_there in found.items():
            if not still_there:
                settled[uuid] = fates.clean_up_deleted(
                    context, scheduler, uuid, mappings.get(cells[uuid]))
        return settled
