"""The atoms of cellboot's flows, and the little they share.

Boot atoms work on the whole batch of a request and return one outcome
per instance (``{instance_uuid: outcome}``, see
``cellboot.builds.fates``): an instance whose outcome is not OK was
settled (buried, failed, cleaned up) by the atom that gave up on it, and
the later atoms skip it. Per-instance atoms
would cost five persisted atoms per instance, which a multi-create of
hundreds cannot afford.

Collaborators that cannot be persisted arrive as transient store values
named ``context`` (the RequestContext), ``scheduler`` (the scheduler
library or its RPC client, same methods), ``compute_rpcapi`` (a
callable: cell mapping -> compute RPC client), for the boot flow
``cell_mappings`` (a ``CellMappings``, one per run), and ``fence``, the
run's ``cellboot.flowrun.fencing.Fence``: each atom checks it right
before a side effect outside the flow's records (``check_fence``), so
that a run taken over while it stalled inside a step stops there. A run
without a fence (an atom called directly) is not checked.
"""

from oslo_log import log as logging

from cellboot.builds import fates
from cellboot import exception
from cellboot.objects import cell_mapping as cell_mapping_obj

LOG = logging.getLogger(__name__)


def check_fence(fence):
    """Raise FencedOut unless this run still owns its flow (or has no fence).

    ``Fence.check``: free when the run proved it owns the flow a moment
    ago, one query on the flow's database otherwise.
    """
    if fence is not None:
        fence.check()


def going_on(outcomes):
    """The instance uuids whose outcome so far is OK, in order."""
    return [uuid for uuid, outcome in outcomes.items()
            if outcome == fates.OK]


def failure_error(failure):
    """The exception behind a TaskFlow Failure, for a fault.

    A failure loaded back from persistence has lost its exception object
    and kept its message; it becomes a plain CellbootException.
    """
    if failure.exception is not None:
        return failure.exception
    return exception.CellbootException(message=failure.exception_str)


def first_failure(flow_failures):
    """The first failure of a reverting flow, as an exception."""
    for failure in (flow_failures or {}).values():
        return failure_error(failure)
    return exception.CellbootException(message='the flow was reverted')


class CellMappings:
    """Cell mappings by uuid, each read once per flow run.

    The boot flow's transient store value ``cell_mappings``: whoever runs
    the flow gives each run a new one (``values_for_run`` in
    ``cellboot.workflows.boot``), so that a cell mapping read by
    ``create-in-cell`` is reused by ``map-instance``,
    ``delete-build-request`` and ``cast-to-compute`` of the same run, and
    never outlives it. It lives in TaskFlow's store like the other
    collaborators, so each task that uses it says so in its signature.
    """

    def __init__(self, context):
        self._context = context
        self._cells = {}

    def get(self, cell_uuid):
        cell = self._cells.get(cell_uuid)
        if cell is None:
            cell = cell_mapping_obj.CellMapping.get_by_uuid(
                self._context, cell_uuid)
            self._cells[cell_uuid] = cell
        return cell


def revert_each(instance_uuids, revert_one, what):
    """Call ``revert_one(uuid)`` for every instance, whatever fails.

    One instance that cannot be reverted must not keep its siblings from
    being reverted; the first error is raised once all were tried, so
    that the flow ends in FAILURE (an operator must look) rather than
    REVERTED.
    """
    errors = []
    for uuid in instance_uuids:
        try:
            revert_one(uuid)
        except Exception as exc:
            LOG.exception('Could not %s instance %s', what, uuid)
            errors.append(exc)
    if errors:
        raise errors[0]
