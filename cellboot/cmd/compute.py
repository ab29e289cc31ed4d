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

from cellboot.compute import host as compute_host
from cellboot.compute import manager as compute_manager
from cellboot.compute import rpc_endpoint as compute_endpoint
from cellboot.conductor import rpcapi as conductor_rpcapi
from cellboot.conf import CONF
from cellboot.db import pools
from cellboot import exception
from cellboot import rpc
from cellboot.rpc import topics
from cellboot.scheduler import rpcapi as scheduler_rpcapi
from cellboot import service
from cellboot import service_runner

PROG = 'cellboot-compute'

DESCRIPTION = """\
Run the compute host agent of one host in one cell: register the host
(service, compute node, resource provider), heartbeat, and build the
servers cast to it with the [compute] driver. Needs [database] connection
(the cell's database), [DEFAULT] transport_url (the cell's bus) and
[DEFAULT] cell_name; the cellboot-scheduler must serve that bus. Runs
until SIGTERM or SIGINT, then finishes the builds in flight and exits 0.

  cellboot-compute --host compute1 --config-file /etc/cellboot/cell1.conf"""


def build(context, args):
    pools.serve_as('compute')
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
    return [_compute_host(context, CONF.host, CONF.cell_name,
                          rpc.get_local_cell_transport())]


def _compute_host(context, host, cell_name, transport):
    """The host's manager, calling its cell's conductor and the scheduler
    on the cell's own topic, behind its RPC server."""
    manager = compute_manager.ComputeManager(
        host, scheduler_rpcapi.CellSchedulerRPCAPI(transport, cell_name),
        conductor_rpcapi.CellConductorAPI(cell_name, transport),
        cell_name=cell_name)
    rpc_service = service.RPCService(
        host, topics.compute(cell_name),
        [compute_endpoint.ComputeEndpoint(manager)], transport)
    return compute_host.ComputeHost(manager, rpc_service, context)


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
