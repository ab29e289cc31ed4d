"""The boot flow: one request's instances, from build requests to hosts.

Run by the super conductor for each ``schedule_and_build_instances``
request (one instance, or a multi-create sharing one request spec).
"""

from taskflow.patterns import linear_flow

from cellboot.workflows.tasks import cells
from cellboot.workflows.tasks import compute
from cellboot.workflows.tasks import mappings
from cellboot.workflows.tasks import schedule


def get_flow():
    """The boot flow; each atom works on the whole batch.

    1. ``schedule`` — one ``select_destinations`` call claims a host and
       finds alternates for every instance; NoValidHost buries them all
       in cell0 and the flow ends REVERTED;
    2. ``map-host-to-cell`` — the chosen host's cell, from the host
       mappings; an unmapped host buries that instance alone in cell0;
    3. ``create-in-cell`` — the instance row, building, in its cell;
    4. ``map-instance`` — the instance mapping points at that cell;
    5. ``delete-build-request`` — the API now serves the server from its
       cell; a build request already gone (the owner deleted the server)
       cleans the build up instead;
    6. ``cast-to-compute`` — ``build_and_run_instance`` to the chosen
       host, with the alternates for a reschedule inside the cell.

    Store: ``instance_uuids`` (list), ``build_requests`` ({uuid: build
    request payload}), ``request_spec`` (dict); transient: ``context``,
    ``scheduler``, ``compute_rpcapi`` (see ``tasks``).
    """
    return linear_flow.Flow('boot').add(
        schedule.Schedule('schedule'),
        cells.MapHostToCell('map-host-to-cell'),
        cells.CreateInCell('create-in-cell'),
        mappings.MapInstance('map-instance'),
        mappings.DeleteBuildRequest('delete-build-request'),
        compute.CastToCompute('cast-to-compute'),
    )
