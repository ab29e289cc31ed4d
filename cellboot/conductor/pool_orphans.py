"""Forgotten pool shares: pool allocations of servers that are gone.

Every path of the API level that releases an instance's claims releases
its share of the shared pools too (``CellsScheduler.release_resources``).
A cell's own paths cannot: a compute host or a cell conductor that puts
a server in ERROR after its reschedules releases its host claims
through the cell's scheduler, which knows nothing of the API database.
The super conductor's sweep therefore looks at the consumers holding
pool allocations older than ``ORPHAN_GRACE`` seconds and releases those
of servers that are deleted, in ERROR, or absent altogether (no
mapping, no build request). A server whose mapping has no cell yet is a
boot in flight, left to its flow. A consumer that is an allocation
request (``allocation_requests``, any status) is no server: its shares
are its own, and ``unplaced_allocations`` settles the unplaced
ones. Idempotent, and safe with several
conductors sweeping at once (a release of nothing does nothing).
"""

import datetime

from oslo_log import log as logging

from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import build_request as build_request_obj
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_mapping as mapping_obj
from cellboot.scheduler import allocation_records
from cellboot.scheduler.pools import claims as pool_claims

LOG = logging.getLogger(__name__)

# Consumers looked at per sweep.
PER_SWEEP = 500
# Seconds a pool share must be old before it is taken for forgotten:
# whoever claimed it acts first.
ORPHAN_GRACE = 30


def _why_gone(context, uuid):
    """Why ``uuid`` should hold no pool share, or None while it should."""
    try:
        mapping = mapping_obj.InstanceMapping.get_by_instance_uuid(
            context, uuid)
    except exception.InstanceMappingNotFound:
        try:
            build_request_obj.BuildRequest.get_by_instance_uuid(context,
                                                                uuid)
        except exception.BuildRequestNotFound:
            return 'absent'
        return None
    if mapping.cell_mapping is None:
        return None  # a boot in flight
    with cb_context.target_cell(context, mapping.cell_mapping) as cctxt:
        try:
            instance = instance_obj.Instance.get_by_uuid(
                cctxt, uuid, read_deleted=True)
        except exception.InstanceNotFound:
            return 'absent from its cell'
    if instance.deleted:
        return 'deleted'
    if instance.vm_state == instance_obj.vm_states.ERROR:
        return 'in ERROR'
    return None


class PoolOrphans:
    """The check; ``manager`` is a super conductor's."""

    def __init__(self, manager):
        self.manager = manager

    def sweep_once(self, context):
        """``{'released': consumers whose pool shares were given back}``."""
        before = (datetime.datetime.utcnow()
                  - datetime.timedelta(seconds=ORPHAN_GRACE))
        released = 0
        consumers = pool_claims.consumers_before(context, before,
                                                 PER_SWEEP)
        requests = allocation_records.known(context, consumers)
        for uuid in consumers:
            if uuid in requests:
                continue
            try:
                why = _why_gone(context, uuid)
                if why is None:
                    continue
                LOG.info('Server %s holds a share of a shared pool but is '
                         '%s; releasing it', uuid, why)
                pool_claims.release(context, uuid)
                released += 1
            except Exception as exc:
                LOG.warning('Could not look at the pool share of server %s '
                            'yet (%s); trying again at the next sweep',
                            uuid, exc)
        return {'released': released}
