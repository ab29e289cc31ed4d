"""Cell clients for the API level's tests (not a test module).

The API level reaches a cell's scheduler through a client
(``cellboot.scheduler.cell_clients``). These stand in for the ways a
cell answers in a deployment of separate processes: a cell of this
process reached as if it were remote (the API level then knows only
what it publishes and answers), a cell that does not answer, and one
that counts what it is asked. The cells' databases stay real.
"""

import time

from cellboot.scheduler import cell_clients
from cellboot.scheduler import host_batch


class NotLocal(cell_clients.LocalCell):
    """A cell scheduler of this process, reached as a remote one: the
    API level never asks it for figures it did not publish."""

    local = False

    def __init__(self, cell_mapping, scheduler):
        super().__init__(cell_mapping, scheduler)
        self.calls = []

    def select(self, context, spec, instance_uuids, return_alternates):
        self.calls.append('select')
        return super().select(context, spec, instance_uuids,
                              return_alternates)

    def release(self, context, consumer_uuid, provider_uuid=None):
        self.calls.append('release')
        return super().release(context, consumer_uuid, provider_uuid)


class Unreachable:
    """A cell whose scheduler does not answer (its bus is down)."""

    local = False

    def __init__(self, cell_mapping):
        self.cell = cell_mapping
        self.calls = []

    def _no_answer(self, method):
        self.calls.append(method)
        raise cell_clients.CellUnreachable(
            f'cell {self.cell.name}\'s scheduler did not answer')

    def select(self, context, spec, instance_uuids, return_alternates):
        self._no_answer('select')

    def aggregate(self, context):
        self._no_answer('aggregate')

    def release(self, context, consumer_uuid, provider_uuid=None):
        self._no_answer('release')

    def host_states(self, context):
        self._no_answer('host_states')


def roomy(up_hosts=1, zones=('nova',), **amounts):
    """An aggregate saying that one host has ``amounts`` free (``VCPU=8``;
    a million of every class not given)."""
    resources = {}
    for rc in host_batch.BASE_CLASSES:
        amount = float(amounts.get(rc, 1e6))
        resources[rc] = {'capacity': amount, 'free': amount,
                         'max_free': amount}
    return {'hosts': up_hosts, 'up_hosts': up_hosts,
            'resources': resources, 'zones': list(zones),
            'computed_at': time.time()}
