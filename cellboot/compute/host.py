"""A compute host as one service: its manager and its RPC server.

What ``cellboot-compute`` runs, and what anything running compute hosts
in-process (``cellboot all-in-one``, the tests' clusters) runs too, so
that the order in which a host becomes reachable is written once. Who
the host calls (its cell's conductor, the scheduler) is its composer's
choice: the entry point (``cellboot.cmd.compute``) or the all-in-one
deployment build the manager and hand it over.
"""

from oslo_log import log as logging

from cellboot.conf import CONF

LOG = logging.getLogger(__name__)


class ComputeHost:
    """A compute manager and its RPC server, started in the safe order.

    The host is registered (service, node) first, so the node is known
    when the first build arrives; the RPC server listens next; only then
    is the provider reported, which makes the host schedulable: a build
    cast before the host listened would be lost on RabbitMQ.
    """

    def __init__(self, manager, rpc_service, context):
        self.manager = manager
        self.rpc_service = rpc_service
        self.context = context

    def start(self):
        self.manager.init_host(self.context, report_provider=False)
        self.rpc_service.start()
        try:
            self.manager.report_provider(self.context)
        except Exception:
            # Not started, so the runner will not stop it: do it here.
            self.rpc_service.stop()
            self.rpc_service.wait()
            raise
        self.manager.start_heartbeat()
        LOG.info('Compute host %s of cell %s registered, heartbeating '
                 'every %s s', self.manager.host, self.manager.cell_name,
                 CONF.compute.report_interval)

    def stop(self):
        self.manager.stop()
        self.rpc_service.stop()

    def wait(self):
        """Returns once the builds in flight are done."""
        self.rpc_service.wait()
