"""``schedule``: one scheduler decision for every instance of a request."""

from taskflow import task
from taskflow.types import failure as tf_failure

from cellboot.builds import fates
from cellboot.builds import handback
from cellboot import exception
from cellboot.objects import instance_mapping as mapping_obj
from cellboot.workflows import tasks


def _has_cell(context, instance_uuid):
    """True when the instance is settled in a cell (mapped to it)."""
    try:
        mapping = mapping_obj.InstanceMapping.get_by_instance_uuid(
            context, instance_uuid)
    except exception.InstanceMappingNotFound:
        return False
    return mapping.cell_mapping is not None


class Schedule(task.Task):
    """Choose and claim a host, plus alternates, for every instance.

    One ``select_destinations`` call for the whole request: the
    scheduler claims each chosen host atomically and returns, per
    instance, ``[chosen, alternates...]`` (Selection dicts) from the
    chosen host's cell. Run again after a conductor died (``resumed``),
    it first gives back whatever the dead run had claimed.

    A request spec that says ``refused`` (the Nova door's, for what
    cellboot cannot build) is not scheduled: BuildRefused, with its
    reason, buries every instance as NoValidHost would.

    Reversion strategy: when scheduling failed (NoValidHost,
    BuildRefused), every instance is buried in cell0 with the reason.
    When a later atom failed the whole flow, each instance that no later
    atom settled in a cell (its mapping still has no cell) is buried in
    cell0 with that failure, which also releases its claim.
    """

    default_provides = 'selections'

    def execute(self, context, scheduler, request_spec, instance_uuids,
                resumed=False, fence=None):
        tasks.check_fence(fence)
        if request_spec.get('refused'):
            raise exception.BuildRefused(reason=request_spec['refused'])
        if resumed:
            # A conductor died while this step ran: what it claimed
            # then may sit on other hosts than what is claimed now.
            for uuid in instance_uuids:
                scheduler.release_resources(context, uuid)
            tasks.check_fence(fence)
        spec = dict(request_spec, num_instances=len(instance_uuids))
        hosts = scheduler.select_destinations(
            context, spec, list(instance_uuids), return_alternates=True)
        return dict(zip(instance_uuids, hosts))

    def revert(self, context, scheduler, request_spec, instance_uuids,
               build_requests, result, flow_failures, **kwargs):
        if isinstance(result, tf_failure.Failure):
            error = tasks.failure_error(result)
            pending = list(instance_uuids)
        else:
            error = tasks.first_failure(flow_failures)
            pending = [uuid for uuid in instance_uuids
                       if not _has_cell(context, uuid)]
        # A build moved out of other cells (the cross-cell flow): its
        # fault names them all.
        error = handback.with_cells_tried(error, request_spec)
        cell0 = fates.get_cell0(context)
        tasks.revert_each(
            pending,
            lambda uuid: fates.bury_in_cell0(
                context, scheduler, build_requests[uuid], request_spec,
                error, cell0=cell0),
            'bury in cell0')
