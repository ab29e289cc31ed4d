"""What of a compute host the bus may call: its builds, nothing else."""

import oslo_messaging

from cellboot.rpc import client as rpc_client


class ComputeEndpoint:
    """Version 1.0 of a compute host's RPC interface.

    Only the builds are served: the manager's start-up and heartbeat
    methods are its owner's to call, not the bus's.
    """

    target = oslo_messaging.Target(version=rpc_client.VERSION)

    def __init__(self, manager):
        self.manager = manager

    @oslo_messaging.expose
    def build_and_run_instance(self, context, instance, host_list,
                               request_spec, retry=None):
        self.manager.build_and_run_instance(context, instance, host_list,
                                            request_spec, retry)
