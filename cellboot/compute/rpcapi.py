"""Client of the compute hosts of one cell.

Hosts listen on ``cellboot-compute.<cell>`` with ``server=<host>`` on their
cell's transport, so a cast names both the cell (through the topic) and
the host: two cells may share a transport and even host names, and a
build is still delivered to exactly one host of the right cell.

The conductors cast with a bounded retry (``[conductor] cast_retries``):
a cast that cannot be sent raises, and the instance, untaken, is sent
again by the cell conductors' check of untaken builds.
"""

from cellboot.conf import CONF
from cellboot.rpc import client
from cellboot.rpc import topics


class ComputeAPI:
    """Casts to the compute hosts of cell ``cell_name``."""

    def __init__(self, cell_name, transport):
        self.cell_name = cell_name
        self.client = client.RPCClient(transport, topics.compute(cell_name))

    def build_and_run_instance(self, ctxt, host, instance, host_list,
                               request_spec, retry):
        """Spawn ``instance`` on ``host``, whose claim is made (cast).

        ``host_list``: the alternates left for a reschedule (Selection
        dicts); ``retry``: as for the cell conductor's build_instances.
        """
        self.client.cast(ctxt, 'build_and_run_instance', server=host,
                         reconnects=CONF.conductor.cast_retries,
                         instance=instance, host_list=host_list,
                         request_spec=request_spec, retry=retry)
