"""Client of ``cellboot-scheduler``: the scheduler's API over RPC.

It has the methods of ``cellboot.scheduler.api.SchedulerAPI`` with the
same arguments, except that ``update_provider`` names the cell by its
name (services inside a cell know their cell's name, not the uuid that
only the API database holds). Code that talks to "the scheduler" takes
either object, so the super conductor can use the library in-process
(``[conductor] scheduler = local``) and services inside a cell use this
client on their cell's transport. Every method is a call: the answer (or
the remote NoValidHost / ClaimFailed / ClaimConflict, re-raised as
itself) is what the caller acts on.
"""

from cellboot import rpc
from cellboot.rpc import client
from cellboot.rpc import topics


class SchedulerRPCAPI:
    """Calls to the scheduler on ``transport``.

    ``transport`` defaults to the API transport, where topic
    ``cellboot-scheduler`` acts for the API level. A service inside a
    cell passes ``rpc.get_local_cell_transport()`` and its ``cell_name``:
    it calls ``cellboot-scheduler.<cell_name>``, where the scheduler lets
    it act on that cell's providers and instances only.
    """

    def __init__(self, transport=None, cell_name=None):
        self.cell_name = cell_name
        topic = topics.scheduler(cell_name) if cell_name else \
            topics.SCHEDULER
        self.client = client.RPCClient(
            transport or rpc.get_api_transport(), topic)

    def select_destinations(self, ctxt, request_spec, instance_uuids,
                            return_alternates=True):
        """Per instance ``[chosen, alternates...]`` (Selection dicts)."""
        return self.client.call(ctxt, 'select_destinations',
                                request_spec=request_spec,
                                instance_uuids=instance_uuids,
                                return_alternates=return_alternates)

    def update_provider(self, ctxt, uuid, name, cell_name, inventories,
                        availability_zone='nova'):
        """Report a compute node's inventory; returns its generation."""
        return self.client.call(ctxt, 'update_provider', uuid=uuid,
                                name=name, cell_name=cell_name,
                                inventories=inventories,
                                availability_zone=availability_zone)

    def claim_resources(self, ctxt, consumer_uuid, provider_uuid,
                        resources):
        """Claim ``resources`` ({rc: amount}) on a provider for a consumer.

        Raises ClaimFailed (no room) or ClaimConflict (contention).
        """
        return self.client.call(ctxt, 'claim_resources',
                                consumer_uuid=consumer_uuid,
                                provider_uuid=provider_uuid,
                                resources=resources)

    def release_resources(self, ctxt, consumer_uuid, provider_uuid=None):
        """Give back a consumer's allocations; returns what was released."""
        return self.client.call(ctxt, 'release_resources',
                                consumer_uuid=consumer_uuid,
                                provider_uuid=provider_uuid)

    def record_build_result(self, ctxt, provider_uuid, succeeded):
        """Count a failed build against a host, or clear its count."""
        return self.client.call(ctxt, 'record_build_result',
                                provider_uuid=provider_uuid,
                                succeeded=succeeded)
