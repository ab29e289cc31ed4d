"""``cellboot-compute``: the agent of one compute host in one cell.

A compute host lives inside its cell: it needs its cell's database
(``[database] connection``), its cell's bus (``[DEFAULT] transport_url``)
and its cell's name (``[DEFAULT] cell_name``), never the API database.
It reaches the scheduler (provider reports, claims given back: topic
``cellboot-scheduler.<cell>``, where it may act on its cell's resources
only) and its cell conductor (reschedules) over that bus.

Usage::

    cellboot-compute --host compute1 --config-file /etc/cellboot/cell1.conf
"""

import sys

from oslo_log import log as logging

from cellboot.cmd import service_runner
from cellboot.compute import manager as compute_manager
from cellboot.conductor import rpcapi as conductor_rpcapi
from cellboot.conf import CONF
from cellboot import exception
from cellboot import rpc
from cellboot.rpc import topics
from cellboot.scheduler import rpcapi as scheduler_rpcapi
from cellboot import service

LOG = logging.getLogger(__name__)

PROG = 'cellboot-compute'

DESCRIPTION = """\
Run the compute host agent of one host in one cell: register the host
(service, compute node, resource provider), heartbeat, and build the
servers cast to it with the [compute] driver. Needs [database] connection
(the cell's database), [DEFAULT] transport_url (the cell's bus) and
[DEFAULT] cell_name; the cellboot-scheduler must serve that bus. Runs
until SIGTERM or SIGINT, then finishes the builds in flight and exits 0.

  cellboot-compute --host compute1 --config-file /etc/cellboot/cell1.conf"""


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


def compute_host(context, host, cell_name, transport, scheduler=None,
                 driver=None):
    """A compute host as one service (``start``/``stop``/``wait``).

    ``scheduler`` defaults to the scheduler's RPC client on
    ``transport``, calling the cell's own topic; an embedded deployment
    may give the in-process one. Used by this command and by anything
    that runs hosts in-process.
    """
    manager = compute_manager.ComputeManager(
        host,
        scheduler or scheduler_rpcapi.SchedulerRPCAPI(transport,
                                                      cell_name=cell_name),
        conductor_rpcapi.CellConductorAPI(cell_name, transport),
        driver=driver, cell_name=cell_name)
    rpc_service = service.RPCService(
        host, topics.compute(cell_name),
        [compute_manager.ComputeEndpoint(manager)], transport)
    return ComputeHost(manager, rpc_service, context)


def build(context, args):
    if args.host:
        # Logs, the node and the service rows all use [DEFAULT] host.
        CONF.set_override('host', args.host)
    if not CONF.database.connection:
        raise exception.ConfigurationError(
            reason=f'{PROG} needs [database] connection, the database of '
                   f'its cell')
    if not CONF.cell_name:
        raise exception.ConfigurationError(
            reason=f'{PROG} needs [DEFAULT] cell_name, the name of its '
                   f'cell as in `cellboot-manage cell_v2 list_cells`')
    return [compute_host(context, CONF.host, CONF.cell_name,
                         rpc.get_local_cell_transport())]


def add_arguments(parser):
    parser.add_argument(
        '--host', metavar='NAME',
        help='name of this compute host, unique in the deployment '
             '(default: [DEFAULT] host, the machine\'s hostname)')


def main(argv=None):
    return service_runner.main(PROG, DESCRIPTION, build, argv=argv,
                               add_arguments=add_arguments)


if __name__ == '__main__':
    sys.exit(main())
