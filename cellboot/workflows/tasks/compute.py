"""``cast-to-compute``: hand each instance to its chosen compute host."""

from oslo_log import log as logging
from taskflow import task

from cellboot.builds import fates
from cellboot import context as cb_context
from cellboot.db import batches
from cellboot.db import outage as db_outage
from cellboot.db.cell import connection as cell_connection
from cellboot import exception
from cellboot.objects import instance as instance_obj
from cellboot.rpc import fanout
from cellboot.workflows import tasks

LOG = logging.getLogger(__name__)


def first_retry():
    """The retry record of a build's first attempt.

    ``num_attempts`` counts the hosts that failed the build so far and
    ``hosts`` lists them as ``[host, node]``: the compute host that fails
    adds itself and the cell conductor gives up after ``[scheduler]
    max_attempts`` (docs/architecture.md, "The reschedule flow").
    """
    return {'num_attempts': 0, 'hosts': [], 'last_failure': None}


def cast_build(context, compute_rpcapi, cell_mapping, instance, chosen,
               alternates, request_spec, retry):
    """Cast ``build_and_run_instance`` of ``instance`` to ``chosen``'s host.

    ``instance`` is the Instance as read from its cell just before.
    """
    compute_rpcapi(cell_mapping).build_and_run_instance(
        context, chosen['service_host'], instance.to_dict(),
        list(alternates), request_spec, retry)


def hand_over(context, cell_mapping, uuids):
    """``{uuid: Instance or None (deleted)}``, ready to be cast.

    Per chunk, in one transaction: the instances stop scheduling
    (``Instance.end_scheduling``: from now on a host may take them, and
    the cell conductors send again a cast that is lost), then each is
    read as it will be sent.
    """
    def read(uuid):
        try:
            return instance_obj.Instance.get_by_uuid(cctxt, uuid)
        except exception.InstanceNotFound:
            return None

    found = {}
    with cb_context.target_cell(context, cell_mapping) as cctxt:
        manager = cell_connection.pick_context_manager(cctxt)
        for chunk in batches.chunks(uuids):
            with batches.transaction(cctxt, manager):
                instance_obj.Instance.end_scheduling(cctxt, chunk)
                found.update((uuid, read(uuid)) for uuid in chunk)
    return found


class CastToCompute(task.Task):
    """Cast each settled instance's build to its chosen host.

    The instance's remaining selections go along as its alternates, for
    a reschedule inside the cell. A cast that cannot be sent (its cell's
    bus is down, after ``[conductor] cast_retries``) leaves the instance
    building, untaken, with what the cast carries stored with it
    (``create-in-cell``): the cell conductors' check of untaken builds
    sends it again once the bus is back (``cellboot.conductor.
    untaken_builds``), where failing it would turn a broker blip into a
    failed server. A cell database that cannot be reached fails the
    step, which the engine runs again until it is back
    (``cellboot.flowrun.outages``); an instance whose cell could not be
    read for another reason is put in ERROR with a fault and its claim
    released. One deleted meanwhile is skipped (its deleter releases
    it).

    Reversion strategy: none; a cast cannot be taken back. It is the
    last atom, so only its own failure could revert the flow, and it
    handles each instance's failure itself.

    Right before its cast, each instance stops scheduling (``hand_over``):
    until then the cell conductors' check of untaken builds leaves it
    alone, since no cast was sent that could have been lost (a step
    before may have ridden out another cell's outage for longer than
    ``build_not_taken_timeout``).

    A multi-create's casts are sent several at once
    (``cellboot.rpc.fanout``): each waits for the broker's confirm.
    """

    default_provides = 'cast'

    def execute(self, context, scheduler, compute_rpcapi, cells, selections,
                settled, request_spec, cell_mappings, fence=None):
        mappings = cell_mappings
        cast = dict(settled)
        by_cell = {}
        for uuid in tasks.going_on(settled):
            by_cell.setdefault(cells[uuid], []).append(uuid)
        for cell_uuid, uuids in by_cell.items():
            cell = mappings.get(cell_uuid)
            try:
                instances = hand_over(context, cell, uuids)
            except Exception as exc:
                if db_outage.is_connection_lost(exc):
                    # The step waits for the cell (cellboot.flowrun.
                    # outages); the hosts drop what was cast already.
                    raise
                LOG.exception('Could not read the instances of cell %s',
                              cell.name)
                instances = dict.fromkeys(uuids, exc)
            to_send = {}
            for uuid in uuids:
                cast[uuid] = self._settle_unreadable(
                    context, scheduler, cell, instances[uuid], uuid)
                if cast[uuid] is None:
                    cast[uuid] = fates.OK
                    to_send[uuid] = instances[uuid]
            sent = fanout.send_each(
                context,
                lambda uuid: cast_build(
                    context, compute_rpcapi, cell, to_send[uuid],
                    selections[uuid][0], selections[uuid][1:],
                    request_spec, first_retry()),
                to_send, before_each=lambda: tasks.check_fence(fence))
            for uuid, exc in sent.items():
                if exc is not None:
                    LOG.warning('Could not cast the build of instance %s to '
                                '%s (%s); the conductors of cell %s send it '
                                'again once it has waited [conductor] '
                                'build_not_taken_timeout', uuid,
                                selections[uuid][0]['service_host'], exc,
                                cell.name)
        return cast

    @staticmethod
    def _settle_unreadable(context, scheduler, cell, instance, uuid):
        """The outcome of an instance that is not cast, else None."""
        if instance is None:
            return fates.DELETED
        if isinstance(instance, Exception):
            # None: a compute host made it ACTIVE after all.
            return fates.fail_in_cell(context, scheduler, uuid, cell,
                                      instance) or fates.OK
        return None
