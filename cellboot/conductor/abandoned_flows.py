"""Reschedule flows an operator abandoned: their instances settled.

An operator abandons a cell's reschedule flow (``flowrun.abandoning``)
to give up on the instance it was moving to another host: the flow is
FAILURE, fenced, and nothing resumes it. The instance it leaves is
building with no host building it (its last host failed it, and the
flow had not cast it to the next one, or cast it and no host took it
yet). The cell conductors' sweep settles it here, at once rather than
after ``[conductor] build_timeout``: ended in ERROR with a fault that
says an operator abandoned the flow (``abandons.fault_message``), an
event and the create action ended (``fates.end_build_in_error``), and
its claims given back (retried at every sweep while the scheduler does
not answer: ``claims.ClaimReleaser``).

Only an instance unchanged since the abandon is ended (a conditional
update: ``Instance.fail_abandoned_build``), so a compute host that took
the build meanwhile keeps it: it finishes it, or the BUILD timeout ends
it with its own, true, fault. The flow's note then records
``settled_at`` and the flow drops out of later sweeps. This runs before
``build_timeouts`` in the sweep, so the instance is settled with the
operator's fault, not re-sent or timed out.
"""

import functools

from oslo_log import log as logging

from cellboot.builds import claims
from cellboot.builds import fates
from cellboot import context as cb_context
from cellboot import exception
from cellboot.flowrun import abandons
from cellboot.flowrun import backend as flow_db
from cellboot.objects import fault_messages
from cellboot.objects import instance as instance_obj

LOG = logging.getLogger(__name__)

# The event of a build ended because an operator abandoned its flow.
EVENT = 'conductor_abandoned_flow'


class AbandonedFlows:
    """The cell conductors' check; ``manager`` is a cell conductor's.

    Uses ``manager.persistence()`` (the cell's flows),
    ``manager.cell_mapping`` and ``manager.scheduler``
    (``release_resources``). Two conductors of the cell sweeping at once
    settle an instance once (the ERROR is conditional).
    """

    def __init__(self, manager):
        self.manager = manager
        self.claims = claims.ClaimReleaser('instance of an abandoned flow')

    def sweep_once(self, context):
        """``{'settled': instances}``; {} when flows are not persisted."""
        persistence = self.manager.persistence()
        if persistence is None:
            return {}
        self.claims.retry(context, self.manager.scheduler)
        engine = flow_db.get_backend(persistence).engine
        settled = 0
        for flow_uuid, note in abandons.unsettled(engine).items():
            try:
                settled += self._settle(context, flow_uuid, note)
            except Exception:
                LOG.exception('Could not settle the instances of abandoned '
                              'flow %s; trying again at the next sweep',
                              flow_uuid)
                continue
            abandons.mark_settled(engine, flow_uuid)
        return {'settled': settled}

    def _settle(self, context, flow_uuid, note):
        """End the flow's instances no host builds; how many this did."""
        cutoff = abandons.moment(note)
        message = abandons.fault_message(flow_uuid, note)
        cell = self.manager.cell_mapping
        settled = 0
        for uuid in note['instance_uuids']:
            with cb_context.target_cell(context, cell) as cctxt:
                try:
                    instance = instance_obj.Instance.get_by_uuid(cctxt, uuid)
                except exception.InstanceNotFound:
                    continue   # deleted by its owner
            if cutoff is None or not fates.end_build_in_error(
                    context, instance,
                    functools.partial(instance.fail_abandoned_build,
                                      cutoff=cutoff),
                    message, EVENT, host=instance.host, cell_mapping=cell,
                    user_message=fault_messages.BUILD_ABANDONED):
                continue   # a host builds it, or it ended meanwhile
            LOG.warning('Instance %s: %s; set to ERROR', uuid, message)
            self.claims.release(context, self.manager.scheduler, uuid)
            settled += 1
        return settled
