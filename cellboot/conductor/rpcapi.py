"""Clients of the conductors: the super conductor and the cell conductors.

The super conductor listens on ``cellboot-conductor`` on the API transport;
the API (or any nova-api-like service, see docs/rpc.md) casts each boot
request to it. A cell conductor listens on ``cellboot-conductor.<cell>`` on
its cell's transport; compute hosts of that cell cast reschedules to it.
Both are casts: the caller learns the outcome from the databases (build
request, instance state, fault), never from a reply. The boot's cast
gives up after ``[api] cast_retries`` reconnections to a broker that is
down (the API must answer; the super conductors' sweep starts the
request); a reschedule's after ``[conductor] cast_retries`` (the
compute host then ends the build in ERROR).
"""

from cellboot.conf import CONF
from cellboot import rpc
from cellboot.rpc import client
from cellboot.rpc import topics


class ConductorAPI:
    """Client of the super conductor (topic ``cellboot-conductor``)."""

    def __init__(self, transport=None):
        self.client = client.RPCClient(
            transport or rpc.get_api_transport(), topics.CONDUCTOR)

    def schedule_and_build_instances(self, ctxt, build_requests,
                                     request_specs):
        """Boot the instances of one request (cast).

        ``build_requests``: one ``{'instance_uuid', 'project_id',
        'user_id', 'instance': {...}}`` per instance; ``request_specs``:
        the spec of each, aligned with ``build_requests``. Both are
        already in the API database, which stays the source of truth.
        """
        self.client.cast(ctxt, 'schedule_and_build_instances',
                         reconnects=CONF.api.cast_retries,
                         build_requests=build_requests,
                         request_specs=request_specs)


class CellConductorAPI:
    """Client of one cell's conductors (``cellboot-conductor.<cell>``)."""

    def __init__(self, cell_name, transport):
        self.cell_name = cell_name
        self.client = client.RPCClient(transport,
                                       topics.cell_conductor(cell_name))

    def build_instances(self, ctxt, instance, request_spec, host_list,
                        retry):
        """Reschedule one instance onto its remaining alternates (cast).

        ``instance``: the instance dict; ``host_list``: the alternates not
        yet tried (Selection dicts, best first); ``retry``:
        ``{'num_attempts', 'hosts': [[host, node], ...],
        'last_failure'}``.
        """
        self.client.cast(ctxt, 'build_instances',
                         reconnects=CONF.conductor.cast_retries,
                         instance=instance,
                         request_spec=request_spec, host_list=host_list,
                         retry=retry)


class HandBackAPI:
    """Client of the super conductors on one cell's bus (topic
    ``cellboot-super-conductor.<cell>``), for that cell's conductors."""

    def __init__(self, cell_name, transport):
        self.cell_name = cell_name
        self.client = client.RPCClient(transport,
                                       topics.super_conductor(cell_name))

    def hand_back_instance(self, ctxt, instance_uuid):
        """Hand back a build this cell cannot place (cast).

        The instance is marked handed back in the cell database first
        (``cellboot.builds.handback``): that mark, not this message, is
        what the super conductors act on.
        """
        self.client.cast(ctxt, 'hand_back_instance',
                         reconnects=CONF.conductor.cast_retries,
                         instance_uuid=instance_uuid)
