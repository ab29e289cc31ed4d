"""How the API level reaches each cell's scheduler: in-process or RPC.

The API level's scheduler (``cells``) asks a cell's scheduler to place a
request, to say its aggregate now, to give back a consumer's claims and
to list its hosts. In a deployment of separate processes the cell's
schedulers are ``cellboot-scheduler --cell NAME`` on the cell's bus
(``RemoteCell``: one RPC call each, bounded by ``[scheduler]
cell_call_timeout``); in one process (``cellboot all-in-one``, the
tests' clusters, the benchmarks) they are objects of the same process
(``LocalCell``: a method call). Both answer alike: ``select`` returns the
selections and the cell's aggregate after them; NoValidHost is the
cell's "no"; ``CellUnreachable`` says the cell did not answer.
"""

from oslo_db import exception as db_exc
from oslo_utils import uuidutils

from cellboot.conf import CONF
from cellboot import exception
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot import rpc
from cellboot.rpc import client as rpc_client
from cellboot.scheduler import rpcapi


class CellUnreachable(Exception):
    """The cell's scheduler did not answer (or its bus is down)."""


def every_cell(context):
    """Every cell that has a scheduler to ask, disabled ones too (they
    still hold claims and hosts): all but cell0, which has no host."""
    return [cell for cell in cell_mapping_obj.CellMapping.get_all(context)
            if not cell.is_cell0]


_SELECTION_KEYS = ('service_host', 'nodename', 'compute_node_uuid',
                   'allocation_request', 'claimed')


def checked_selections(cell, selections, instance_uuids):
    """A cell's answer to ``select``, checked (a cell is the least
    trusted part of a deployment), each selection's cell named by us."""
    if len(selections) != len(instance_uuids):
        raise CellUnreachable(
            f'cell {cell.name} answered {len(selections)} placements for '
            f'{len(instance_uuids)} instances')
    checked = []
    for hosts in selections:
        if not isinstance(hosts, list) or not hosts:
            raise CellUnreachable(
                f'cell {cell.name} answered a placement with no host')
        for host in hosts:
            if not isinstance(host, dict) or not isinstance(
                    host.get('service_host'), str) or not \
                    uuidutils.is_uuid_like(host.get('compute_node_uuid')):
                raise CellUnreachable(
                    f'cell {cell.name} answered a malformed selection')
        checked.append([dict({key: host.get(key) for key in _SELECTION_KEYS},
                             cell_uuid=cell.uuid) for host in hosts])
    return checked


class LocalCell:
    """A cell scheduler of this process (``api.CellScheduler``).

    A cell database that does not answer makes the cell unreachable, as
    a remote cell whose scheduler does not answer.
    """

    local = True

    def __init__(self, cell_mapping, scheduler):
        self.cell = cell_mapping
        self.scheduler = scheduler

    def select(self, context, spec, instance_uuids, return_alternates):
        try:
            selections = self.scheduler.select_destinations(
                context, spec, instance_uuids, return_alternates)
        except db_exc.DBError as exc:
            raise CellUnreachable(f'cell {self.cell.name}\'s database: '
                                  f'{str(exc)[:200]}') from None
        return selections, self.scheduler.aggregate(context)

    def aggregate(self, context):
        return self.scheduler.aggregate(context)

    def release(self, context, consumer_uuid, provider_uuid=None):
        return self.scheduler.release_resources(context, consumer_uuid,
                                                provider_uuid)

    def host_states(self, context):
        return self.scheduler.host_states(context)


class RemoteCell:
    """A cell's schedulers, over RPC on the cell's own bus."""

    local = False

    def __init__(self, cell_mapping):
        self.cell = cell_mapping
        self._api = None

    @property
    def api(self):
        # Made on first use: a cell whose transport URL is broken must
        # fail its own requests, not the scheduler's start.
        if self._api is None:
            self._api = rpcapi.CellSchedulerRPCAPI(
                rpc.get_cell_transport(self.cell), self.cell.name,
                timeout=CONF.scheduler.cell_call_timeout)
        return self._api

    def _call(self, method, *args, **kwargs):
        try:
            return getattr(self.api, method)(*args, **kwargs)
        except (exception.RPCTimeout, exception.InvalidTransportURL) as exc:
            raise CellUnreachable(str(exc)) from None
        except Exception as exc:
            # The cell's scheduler answers, but its database does not.
            if rpc_client.is_remote_outage(exc):
                raise CellUnreachable(
                    f'cell {self.cell.name}\'s database: '
                    f'{str(exc.value)[:200]}') from None
            raise

    def select(self, context, spec, instance_uuids, return_alternates):
        answer = self._call('select_destinations', context, spec,
                            instance_uuids, return_alternates)
        if not isinstance(answer, dict) or not isinstance(
                answer.get('selections'), list):
            raise CellUnreachable(f'cell {self.cell.name}\'s scheduler '
                                  f'answered something else than a '
                                  f'placement')
        return answer['selections'], answer.get('aggregate')

    def aggregate(self, context):
        return self._call('aggregate', context)

    def release(self, context, consumer_uuid, provider_uuid=None):
        return self._call('release_resources', context, consumer_uuid,
                          provider_uuid)

    def host_states(self, context):
        return self._call('host_states', context)
