"""The reschedule flow's atoms: walk a cell's alternates for one build.

``alternates`` is the retry controller: each try provides the next
alternate (a Selection dict of the same cell, unclaimed), ``claim-
alternate`` claims it through the scheduler and ``cast-to-compute``
sends the build there. A failed claim or cast reverts the try and moves
on; once the alternates or the attempts are used up, the controller's
revert puts the instance in ERROR with a fault that starts
``Exceeded maximum number of retries``.
"""

from oslo_log import log as logging
from taskflow import retry
from taskflow import task
from taskflow.types import failure as tf_failure

from cellboot.builds import fates
from cellboot.builds import handback
from cellboot import context as cb_context
from cellboot.db import batches
from cellboot.db.cell import connection as cell_connection
from cellboot import exception
from cellboot.objects import build_args
from cellboot.objects import instance as instance_obj
from cellboot.workflows import tasks
from cellboot.workflows.tasks import compute

LOG = logging.getLogger(__name__)


def candidates(host_list, build_retry, max_attempts):
    """The alternates still allowed: max_attempts minus hosts tried."""
    left = max_attempts - (build_retry.get('num_attempts') or 0)
    return list(host_list)[:max(left, 0)]


def remaining_after(host_list, alternate):
    """The alternates after ``alternate``: the next reschedule's."""
    remaining = list(host_list)
    return remaining[remaining.index(alternate) + 1:]


def last_failure(history, build_retry):
    """What failed last: a claim or cast of this flow, else the host's."""
    last = build_retry.get('last_failure')
    for _provided, failures in history:
        for failure in failures.values():
            if not failure.check(exception.MaxRetriesExceeded):
                last = failure.exception_str
    return last or 'unknown'


class Alternates(retry.Retry):
    """Provide the next alternate to try, until none is left.

    Each try provides ``alternate``, None once the allowed alternates are
    used up (``claim-alternate`` then fails the try for good).

    Reversion strategy: when another cell may be tried
    (``cellboot.builds.handback.may_hand_back``), the build is handed
    back to the super conductors, which move it; otherwise the
    instance is put in ERROR in its cell with a fault naming the last
    failure and, when it tried several, every cell tried (its claims
    released, an action event recorded); one deleted or made ACTIVE
    meanwhile is left alone.
    """

    default_provides = 'alternate'

    def execute(self, history, host_list, build_retry, max_attempts):
        allowed = candidates(host_list, build_retry, max_attempts)
        tried = len(history)
        return allowed[tried] if tried < len(allowed) else None

    def on_failure(self, history, host_list, build_retry, max_attempts):
        allowed = candidates(host_list, build_retry, max_attempts)
        return retry.RETRY if len(history) < len(allowed) else retry.REVERT

    def revert(self, history, context, scheduler, cell_mapping, instance,
               build_retry, request_spec=None, handback_rpcapi=None,
               *args, **kwargs):
        uuid = instance['uuid']
        failure = last_failure(history, build_retry)
        if handback_rpcapi is not None and handback.may_hand_back(
                request_spec):
            if handback.hand_back(context, uuid, cell_mapping, failure,
                                  handback_rpcapi):
                return
        error = handback.give_up(
            [cell.get('name') or cell['uuid']
             for cell in handback.cells_tried(request_spec)] +
            [cell_mapping.name], failure)
        fates.fail_in_cell(context, scheduler, uuid, cell_mapping, error,
                           event=fates.RESCHEDULE_EVENT)


def _record_reschedule(cctxt, uuid, alternate, build_retry):
    """The reschedule's action event, in the transaction of its move.

    Its details say, for administrators, which host failed and why, and
    where the build goes next; the instance action API shows its owner
    a sentence for it. Written with the move, so that a move the fence
    refused records nothing.
    """
    tried = (build_retry or {}).get('hosts') or [[None]]
    details = (f'Rescheduled to host {alternate["service_host"]} after '
               f'the build failed on host {tried[-1][0]}: '
               f'{(build_retry or {}).get("last_failure") or "unknown"}')
    fates.record_event(cctxt, uuid, fates.RESCHEDULE_EVENT,
                       host=alternate['service_host'],
                       details=details[:handback.FAILURE_WIDTH])


class ClaimAlternate(task.Task):
    """Claim the alternate's resources and move the instance onto it.

    The instance's host and node become the alternate's, with what
    ``cast-to-compute`` sends it (``cellboot.objects.build_args``), so
    that a cell conductor can send it again if that cast is lost. That
    move is made with the run's fence held in the same transaction (the
    flow is in the cell's database too): a run taken over meanwhile
    moves nothing; the reschedule's action event, naming the host that
    failed and why, is written in that transaction too
    (``_record_reschedule``). A claim it made just before stays on the
    alternate that the new run, replaying the same try, claims again (a
    claim of a consumer on a host is made once).

    Provides ``claimed``: True, or False when the instance was deleted,
    left building, or taken by a host (spawning) meanwhile, in which
    case the claim is given back and nothing more is done. A claim that
    does not fit (ClaimFailed, ClaimConflict) fails this try: the next
    alternate is tried.

    Reversion strategy: the claim on this alternate is released (there is
    none after a failed claim; releasing is idempotent).
    """

    default_provides = 'claimed'

    def execute(self, context, scheduler, cell_mapping, instance, alternate,
                build_retry, host_list, request_spec, fence=None):
        uuid = instance['uuid']
        if alternate is None:
            raise exception.MaxRetriesExceeded(
                reason=f'No alternate host is left for instance {uuid} '
                       f'after {build_retry.get("num_attempts") or 0} '
                       f'attempt(s).')
        tasks.check_fence(fence)
        scheduler.claim_resources(context, uuid,
                                  alternate['compute_node_uuid'],
                                  alternate['allocation_request'])
        with cb_context.target_cell(context, cell_mapping) as cctxt, \
                batches.transaction(
                    cctxt, cell_connection.pick_context_manager(cctxt)):
            try:
                instance_obj.Instance(uuid=uuid).move_build(
                    cctxt, alternate['service_host'], alternate['nodename'],
                    build_args.make(remaining_after(host_list, alternate),
                                    request_spec, build_retry),
                    fence=fence)
                moved = True
            except (exception.InstanceNotFound,
                    exception.UnexpectedVMState) as exc:
                LOG.info('Not rescheduling instance %s: %s', uuid, exc)
                moved = False
            if moved:
                _record_reschedule(cctxt, uuid, alternate, build_retry)
        if not moved:
            scheduler.release_resources(context, uuid,
                                        alternate['compute_node_uuid'])
            return False
        return True

    def revert(self, context, scheduler, instance, alternate, result,
               **kwargs):
        if alternate is None:
            return
        if isinstance(result, tf_failure.Failure) and result.check(
                exception.ClaimFailed, exception.ClaimConflict):
            return  # nothing was claimed
        scheduler.release_resources(context, instance['uuid'],
                                    alternate['compute_node_uuid'])


class CastAlternate(task.Task):
    """Cast the build to the claimed alternate's host.

    The alternates after this one go along, for the next reschedule. A
    cast that cannot be sent fails this try (the next alternate is
    tried).

    Reversion strategy: none; ``claim-alternate``'s revert gives the
    claim back.
    """

    default_provides = 'cast'

    def execute(self, context, compute_rpcapi, cell_mapping, instance,
                alternate, claimed, host_list, request_spec, build_retry,
                fence=None):
        if not claimed:
            return fates.DELETED
        remaining = remaining_after(host_list, alternate)
        with cb_context.target_cell(context, cell_mapping) as cctxt:
            try:
                current = instance_obj.Instance.get_by_uuid(
                    cctxt, instance['uuid'])
            except exception.InstanceNotFound:
                return fates.DELETED
        tasks.check_fence(fence)
        compute.cast_build(context, compute_rpcapi, cell_mapping, current,
                           alternate, remaining, request_spec, build_retry)
        return fates.OK
