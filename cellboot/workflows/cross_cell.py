"""The cross-cell flow: a build its cell handed back, booted in another.

Run by a super conductor when a cell hands back a build it could not
place (``cellboot.builds.handback``; the cast ``hand_back_instance`` on
the cell's bus, or the sweep of handed-back builds), persisted in the
flow database like ``boot``.
"""

from taskflow.patterns import linear_flow

from cellboot.workflows import boot
from cellboot.workflows.tasks import moves


def get_flow():
    """The cross-cell flow: four atoms of its own, then the boot flow's.

    1. ``recreate-build-request`` — the build request again, from the
       old cell's row; the old cell recorded as tried in the request
       spec (refused, ERROR in the old cell, when ``[conductor]
       max_cells`` is reached or no other cell exists);
    2. ``unmap-instance`` — the mapping points at no cell;
    3. ``release-old-cell`` — the host claim and pool shares given back;
    4. ``remove-from-old-cell`` — the old row goes, its history kept in
       the flow;
    5. to 11. the boot flow's atoms (``schedule`` excludes the cells
       tried; its NoValidHost buries the instance in cell0 with a fault
       naming every cell tried);
    12. ``carry-history`` — the old cell's events into the new cell's
       create action.

    Store: ``instance_uuids`` ([uuid]), ``old_cell`` (the cell uuid the
    build leaves); transient: those of the boot flow.
    """
    flow = linear_flow.Flow('cross-cell').add(
        moves.RecreateBuildRequest(
            'recreate-build-request',
            provides=('build_requests', 'request_spec', 'history')),
        moves.UnmapInstance('unmap-instance', provides='unmapped'),
        moves.ReleaseOldCell('release-old-cell', provides='released'),
        moves.RemoveFromOldCell('remove-from-old-cell', provides='left'),
    )
    flow.add(*boot.get_flow())
    return flow.add(moves.CarryHistory('carry-history',
                                       provides='carried'))


values_for_run = boot.values_for_run
