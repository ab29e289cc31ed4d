"""``cast-to-compute``: hand each instance to its chosen compute host."""

from oslo_log import log as logging
from taskflow import task

from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import instance as instance_obj
from cellboot.workflows import fates
from cellboot.workflows import tasks

LOG = logging.getLogger(__name__)


def first_retry():
    """The retry record of a build's first attempt.

    ``num_attempts`` counts the hosts that failed the build so far and
    ``hosts`` lists them as ``[host, node]``: the compute host that fails
    adds itself and the cell conductor gives up after ``[scheduler]
    max_attempts`` (DESIGN §4, reschedule).
    """
    return {'num_attempts': 0, 'hosts': [], 'last_failure': None}


def cast_build(context, compute_rpcapi, cell_mapping, instance_uuid, chosen,
               alternates, request_spec, retry):
    """Cast ``build_and_run_instance`` to ``chosen``'s host.

    The instance is read from its cell first, so the host gets it as it
    is now. Returns False, casting nothing, when it is gone (deleted).
    """
    with cb_context.target_cell(context, cell_mapping) as cctxt:
        try:
            instance = instance_obj.Instance.get_by_uuid(cctxt, instance_uuid)
        except exception.InstanceNotFound:
            return False
    compute_rpcapi(cell_mapping).build_and_run_instance(
        context, chosen['service_host'], instance.to_dict(),
        list(alternates), request_spec, retry)
    return True


class CastToCompute(task.Task):
    """Cast each settled instance's build to its chosen host.

    The instance's remaining selections go along as its alternates, for
    a reschedule inside the cell. An instance whose cast cannot be sent
    (its cell's bus is down) is put in ERROR with a fault and its claim
    released; one deleted meanwhile is skipped (its deleter releases it).

    Reversion strategy: none; a cast cannot be taken back. It is the
    last atom, so only its own failure could revert the flow, and it
    handles each instance's failure itself.
    """

    default_provides = 'cast'

    def execute(self, context, scheduler, compute_rpcapi, cells, selections,
                settled, request_spec):
        mappings = tasks.CellMappings(context)
        cast = dict(settled)
        for uuid in tasks.going_on(settled):
            cell = mappings.get(cells[uuid])
            hosts = selections[uuid]
            try:
                sent = cast_build(context, compute_rpcapi, cell, uuid,
                                  hosts[0], hosts[1:], request_spec,
                                  first_retry())
            except Exception as exc:
                LOG.exception('Could not cast the build of instance %s to '
                              '%s', uuid, hosts[0]['service_host'])
                # None: a compute host made it ACTIVE after all.
                cast[uuid] = fates.fail_in_cell(
                    context, scheduler, uuid, cell, exc) or fates.OK
            else:
                cast[uuid] = fates.OK if sent else fates.DELETED
        return cast
