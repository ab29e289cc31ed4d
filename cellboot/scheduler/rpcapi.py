"""Clients of ``cellboot-scheduler``: the two levels' APIs over RPC.

* ``CellSchedulerRPCAPI`` calls the schedulers of one cell, on the
  cell's own bus (topic ``cellboot-scheduler.<cell>``): the cell's
  compute hosts (``update_provider``, ``record_build_result``) and
  conductors (``claim_resources``, ``release_resources``) use it, and so
  does the API level (``select_destinations``, ``aggregate``,
  ``host_states``, ``release_resources``: ``cell_clients.RemoteCell``).
  It has the methods of ``cellboot.scheduler.api.CellScheduler``, with
  ``update_provider`` also naming the cell (which the scheduler checks is
  its own) and ``select_destinations`` answering with the cell's
  aggregate too.
* ``SchedulerRPCAPI`` calls the API level's scheduler, on the API's bus
  (topic ``cellboot-scheduler``), for a super conductor with
  ``[conductor] scheduler = rpc``.

Every method is a call: the answer (or the remote NoValidHost /
ClaimFailed / ClaimConflict, re-raised as itself) is what the caller
acts on.
"""

from cellboot import rpc
from cellboot.rpc import client
from cellboot.rpc import topics


class SchedulerRPCAPI:
    """Calls to the API level's scheduler (default: the API transport)."""

    def __init__(self, transport=None):
        self.client = client.RPCClient(
            transport or rpc.get_api_transport(), topics.SCHEDULER)

    def select_destinations(self, ctxt, request_spec, instance_uuids,
                            return_alternates=True):
        """Per instance ``[chosen, alternates...]`` (Selection dicts)."""
        return self.client.call(ctxt, 'select_destinations',
                                request_spec=request_spec,
                                instance_uuids=instance_uuids,
                                return_alternates=return_alternates)

    def release_resources(self, ctxt, consumer_uuid, provider_uuid=None,
                          cell_uuid=None):
        """Give back a consumer's allocations; returns what was released.

        ``cell_uuid`` names the cell that holds them, when the caller
        knows it.
        """
        return self.client.call(ctxt, 'release_resources',
                                consumer_uuid=consumer_uuid,
                                provider_uuid=provider_uuid,
                                cell_uuid=cell_uuid)

    def claim_pools(self, ctxt, consumer_uuid, entries, replay=False):
        """Claim a selection's ``pools`` for the consumer, all or none."""
        return self.client.call(ctxt, 'claim_pools',
                                consumer_uuid=consumer_uuid,
                                entries=entries, replay=replay)

    def release_pools(self, ctxt, consumer_uuid):
        """Give back the consumer's pool shares (idempotent)."""
        return self.client.call(ctxt, 'release_pools',
                                consumer_uuid=consumer_uuid)

    def create_allocation(self, ctxt, request):
        """Hold ``request`` (``{'resources': {CLASS: N}, 'required_traits',
        'forbidden_traits', 'near', 'far', 'availability_zone'}``) for
        the context's project on one pool or host; the allocation as
        ``GET /os-allocations/{id}`` shows it."""
        return self.client.call(ctxt, 'create_allocation', request=request)

    def get_allocation(self, ctxt, allocation_id):
        return self.client.call(ctxt, 'get_allocation',
                                allocation_id=allocation_id)

    def delete_allocation(self, ctxt, allocation_id):
        """Release and delete one of the context's project's."""
        return self.client.call(ctxt, 'delete_allocation',
                                allocation_id=allocation_id)


class CellSchedulerRPCAPI:
    """Calls to the schedulers of cell ``cell_name`` on ``transport``.

    ``timeout`` (seconds; None: ``rpc_response_timeout``) bounds every
    call: the API level gives ``[scheduler] cell_call_timeout``, so that
    a cell that does not answer is skipped rather than waited for.
    """

    def __init__(self, transport, cell_name, timeout=None):
        self.cell_name = cell_name
        self.timeout = timeout
        self.client = client.RPCClient(transport, topics.scheduler(cell_name))

    def _call(self, ctxt, method, **kwargs):
        return self.client.call(ctxt, method, timeout=self.timeout, **kwargs)

    def select_destinations(self, ctxt, request_spec, instance_uuids,
                            return_alternates=True):
        """``{'selections': [...], 'aggregate': {...}}``."""
        return self._call(ctxt, 'select_destinations',
                          request_spec=request_spec,
                          instance_uuids=instance_uuids,
                          return_alternates=return_alternates)

    def aggregate(self, ctxt):
        """The cell's aggregate, as its scheduler has it now."""
        return self._call(ctxt, 'aggregate')

    def host_states(self, ctxt):
        """Every host of the cell as plain values."""
        return self._call(ctxt, 'host_states')

    def update_provider(self, ctxt, uuid, name, cell_name, inventories,
                        availability_zone='nova', traits=None):
        """Report a compute node's inventory (and traits, a list of
        names); returns its generation."""
        kwargs = {} if traits is None else {'traits': traits}
        return self._call(ctxt, 'update_provider', uuid=uuid, name=name,
                          cell_name=cell_name, inventories=inventories,
                          availability_zone=availability_zone, **kwargs)

    def claim_resources(self, ctxt, consumer_uuid, provider_uuid,
                        resources):
        """Claim ``resources`` ({rc: amount}) on a provider for a consumer.

        Raises ClaimFailed (no room) or ClaimConflict (contention).
        """
        return self._call(ctxt, 'claim_resources',
                          consumer_uuid=consumer_uuid,
                          provider_uuid=provider_uuid, resources=resources)

    def release_resources(self, ctxt, consumer_uuid, provider_uuid=None):
        """Give back a consumer's allocations; returns what was released."""
        return self._call(ctxt, 'release_resources',
                          consumer_uuid=consumer_uuid,
                          provider_uuid=provider_uuid)

    def record_build_result(self, ctxt, provider_uuid, succeeded):
        """Count a failed build against a host, or clear its count."""
        return self._call(ctxt, 'record_build_result',
                          provider_uuid=provider_uuid, succeeded=succeeded)
