"""Build requests that outlived their boot flow: the sweep settles them.

The boot flow removes each build request once its instance is mapped to
a cell (or buried in cell0). A build request older than ``[conductor]
orphan_build_request_timeout`` whose boot flow has ended is stuck:
nothing will come back for it, and the API shows the server building
for ever. A flow that ended FAILURE (a revert that failed) leaves such
requests; one that ended SUCCESS or REVERTED should not, so every
request settled here is logged as a WARNING: it is a bug somewhere.
Each build request is settled where its instance is:

* the owner deleted the server (no instance mapping, or one queued for
  delete): the build request goes and the claims are given back;
* the instance lives in a cell, not deleted (its mapping points there;
  or it points nowhere yet, the flow having died before
  ``map-instance``, and a cell has the instance: it is mapped there):
  a build that no compute host took (building, no task), unchanged for
  the timeout, is ended in ERROR with a fault naming the flow's end
  (``fates.end_build_in_error``) and its claims given back; then the
  build request goes. A build a host took is that host's (or
  the cell's BUILD timeout's): only the build request goes;
* otherwise it never reached a cell: it is buried in cell0 with a fault
  naming the flow's end (``fates.bury_in_cell0``, which also maps it,
  removes the build request and gives the claims back).

The build requests of a boot flow an operator abandoned
(``flowrun.abandoning``) are settled the same way, without waiting the
timeout (``orphans``), each fault saying that an operator abandoned the
flow (``abandons.fault_message``); logged at INFO: it is no bug.

Every step is conditional or idempotent, so two conductors settling one
request at once, or a sweep racing the owner's delete, settle it once.
"""

import functools

from oslo_log import log as logging

from cellboot.builds import claims
from cellboot.builds import api_records
from cellboot.builds import fates
from cellboot import context as cb_context
from cellboot import exception
from cellboot.flowrun import abandons
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.objects import fault_messages
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_mapping as mapping_obj
from cellboot.objects import request_spec as request_spec_obj

LOG = logging.getLogger(__name__)

# The event of a build ended because its boot flow ended without it.
EVENT = 'conductor_settle_build_request'


def fault_message(flow_uuid, state):
    return (f'The boot flow {flow_uuid} ended {state} without finishing '
            f'this build')


class EndedFlowRequests:
    """Settles the build requests of requests whose boot flow ended.

    ``scheduler`` is the super conductor's (``release_resources``).
    """

    def __init__(self, scheduler):
        self.scheduler = scheduler
        # Claims the scheduler did not take back yet: tried again at
        # every sweep.
        self.claims = claims.ClaimReleaser('settled build request')

    def retry(self, context):
        self.claims.retry(context, self.scheduler)

    def settle(self, context, flow_uuid, state, build_requests, cutoff,
               note=None):
        """Settle one request's build requests; how many went.

        ``note``: the flow's abandon note (``flowrun.abandons``) if an
        operator abandoned it: the faults say so, and a build unchanged
        since the abandon is one the flow left.
        """
        uuids = ', '.join(br.instance_uuid for br in build_requests)
        if note is not None:
            LOG.info('Settling build request(s) %s of boot flow %s, which '
                     'an operator abandoned', uuids, flow_uuid)
            message = abandons.fault_message(flow_uuid, note)
            cutoff = max(cutoff, abandons.moment(note) or cutoff)
        else:
            LOG.warning('Build request(s) %s outlived their boot flow %s, '
                        'which ended %s: settling them', uuids, flow_uuid,
                        state)
            message = fault_message(flow_uuid, state)
        settled = 0
        for br in build_requests:
            try:
                settled += self._settle_one(context, br, message, cutoff)
            except Exception:
                LOG.exception('Could not settle build request %s; trying '
                              'again at the next sweep', br.instance_uuid)
        return settled

    def _settle_one(self, context, br, message, cutoff):
        uuid = br.instance_uuid
        try:
            mapping = mapping_obj.InstanceMapping.get_by_instance_uuid(
                context, uuid)
        except exception.InstanceMappingNotFound:
            mapping = None
        if mapping is None or mapping.queued_for_delete:
            LOG.info('Instance %s was deleted by its owner; removing its '
                     'build request', uuid)
            self._remove(context, br)
            self.claims.release(context, self.scheduler, uuid)
            return True
        cell = mapping.cell_mapping
        if cell is None:
            # The flow may have died between create-in-cell and
            # map-instance: an instance in a cell is mapped there, not
            # buried a second time in cell0.
            cell, instance = _find_in_cells(context, uuid)
            if instance is not None:
                api_records.map_to_cell(context, uuid, cell)
        else:
            instance = _live(context, cell, uuid)
        if instance is None:
            rctxt = cb_context.RequestContext(
                user_id=br.user_id, project_id=br.project_id,
                is_admin=True, overwrite=False)
            fates.bury_in_cell0(rctxt, self.scheduler, br.as_cast(),
                                _spec(context, uuid), message)
            return True
        if (instance.vm_state == instance_obj.vm_states.BUILDING and
                instance.task_state in (
                    None, instance_obj.task_states.SCHEDULING)):
            if not fates.end_build_in_error(
                    context, instance,
                    functools.partial(instance.fail_untaken_build,
                                      cutoff=cutoff),
                    message, EVENT, host=instance.host, cell_mapping=cell,
                    # BUILD_NOT_FINISHED, or BUILD_ABANDONED for an
                    # abandoned flow's (read from ``message``).
                    user_message=fault_messages.for_user(500, message)):
                # Taken, or changed within the timeout: next sweep.
                return False
            LOG.warning('Instance %s: %s; set to ERROR', uuid, message)
            self.claims.release(context, self.scheduler, uuid)
        self._remove(context, br)
        return True

    @staticmethod
    def _remove(context, br):
        try:
            br.destroy(context)
        except exception.BuildRequestNotFound:
            pass  # another conductor, or the owner, removed it


def _live(context, cell, uuid):
    """The live instance in ``cell``, or None."""
    with cb_context.target_cell(context, cell) as cctxt:
        try:
            return instance_obj.Instance.get_by_uuid(cctxt, uuid)
        except exception.InstanceNotFound:
            return None


def _find_in_cells(context, uuid):
    """``(cell mapping, live instance)`` of any cell, or (None, None)."""
    for cell in cell_mapping_obj.CellMapping.get_all(context):
        instance = _live(context, cell, uuid)
        if instance is not None:
            return cell, instance
    return None, None


def _spec(context, uuid):
    """The instance's request spec; {} if it has none (its build request
    holds what a cell0 instance needs)."""
    try:
        return request_spec_obj.RequestSpec.get_by_instance_uuid(
            context, uuid).spec
    except exception.RequestSpecNotFound:
        return {}
