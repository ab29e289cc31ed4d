"""The boot flow: one request's instances, from build requests to hosts.

Run by the super conductor for each ``schedule_and_build_instances``
request (one instance, or a multi-create sharing one request spec).
"""

from taskflow.patterns import linear_flow

from cellboot.workflows import tasks
from cellboot.workflows.tasks import cells
from cellboot.workflows.tasks import compute
from cellboot.workflows.tasks import mappings
from cellboot.workflows.tasks import pools
from cellboot.workflows.tasks import schedule


def get_flow():
    """The boot flow; each atom works on the whole batch.

    1. ``schedule`` — one ``select_destinations`` call claims a host and
       finds alternates for every instance; NoValidHost buries them all
       in cell0 and the flow ends REVERTED;
    2. ``claim-pool`` — what the shared pools must give each instance
       (``selection['pools']``: what no host of its cell provides),
       claimed with the instance as consumer; when no pool can, the
       atom fails, its revert releases the pool claims and
       ``schedule``'s buries the instances (releasing their hosts);
    3. ``map-host-to-cell`` — the chosen host's cell, from the host
       mappings; an unmapped host buries that instance alone in cell0;
    4. ``create-in-cell`` — the instance row, building, in its cell;
    5. ``map-instance`` — the instance mapping points at that cell;
    6. ``delete-build-request`` — the API now serves the server from its
       cell; a build request already gone (the owner deleted the server)
       cleans the build up instead;
    7. ``cast-to-compute`` — ``build_and_run_instance`` to the chosen
       host, with the alternates for a reschedule inside the cell.

    Store: ``instance_uuids`` (list), ``build_requests`` ({uuid: build
    request payload}), ``request_spec`` (dict); transient, for each run
    (``values_for_run``): ``context``, ``scheduler``, ``compute_rpcapi``,
    ``cell_mappings`` (see ``tasks``). Each atom's inputs beyond
    ``context`` and ``scheduler`` are written out below with what it
    provides, so that the data flow reads here.
    """
    return linear_flow.Flow('boot').add(
        schedule.Schedule(
            'schedule', provides='selections',
            requires=('request_spec', 'instance_uuids')),
        pools.ClaimPool(
            'claim-pool', provides='pool_claims',
            requires=('selections',)),
        cells.MapHostToCell(
            'map-host-to-cell', provides='cells',
            requires=('selections', 'build_requests', 'request_spec')),
        cells.CreateInCell(
            'create-in-cell', provides='created',
            requires=('cells', 'selections', 'build_requests',
                      'request_spec', 'cell_mappings')),
        mappings.MapInstance(
            'map-instance', provides='mapped',
            requires=('cells', 'created', 'cell_mappings')),
        mappings.DeleteBuildRequest(
            'delete-build-request', provides='settled',
            requires=('cells', 'mapped', 'cell_mappings')),
        compute.CastToCompute(
            'cast-to-compute', provides='cast',
            requires=('compute_rpcapi', 'cells', 'selections', 'settled',
                      'request_spec', 'cell_mappings')),
    )


def values_for_run(context, scheduler, compute_rpcapi):
    """The transient store values of one run of the boot flow.

    Never persisted: they are given again to every run, resumptions
    included. ``cell_mappings`` is new for each run: the cell mappings
    one run read are never those of another.
    """
    return {'context': context, 'scheduler': scheduler,
            'compute_rpcapi': compute_rpcapi,
            'cell_mappings': tasks.CellMappings(context)}
