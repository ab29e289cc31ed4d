"""``cellboot-conductor``: the super conductor, or a cell's conductor.

Without ``--cell`` it is the super conductor: it serves topic
``cellboot-conductor`` on ``[DEFAULT] transport_url`` and runs the boot
flow of each request, persisted in ``[flow_persistence] connection``,
with the scheduler in-process (``[conductor] scheduler = local``) or over
RPC (``rpc``). It needs the API database.

With ``--cell NAME`` it is a conductor of cell NAME: it serves
``cellboot-conductor.NAME`` on the cell's own transport (its
``[DEFAULT] transport_url``) and runs the reschedule flows of that
cell's compute hosts, persisted in the cell database (``[database]
connection``). It needs no API database credentials: the scheduler is
reached over RPC.

With ``--cell NAME --super`` one process is both: the super conductor
and the conductor of cell NAME (devstack's single-conductor layout; its
configuration has the API database too).

Without a jobboard, either kind resumes, when it starts, the flows that
a conductor of the same ``[DEFAULT] host`` left unfinished; with one
(``[jobboard] backend = redis``) it claims jobs from its kind's board,
the dead conductors' included. Each conductor logs its name
(``HOST:PID``, the owner its flows and claims record) when it starts.

Usage::

    cellboot-conductor --config-file /etc/cellboot/cellboot.conf
    cellboot-conductor --cell cell1 --config-file /etc/cellboot/cell1.conf
    cellboot-conductor --cell cell1 --super \
        --config-file /etc/cellboot/cellboot.conf
"""

import sys

from oslo_log import log as logging

from cellboot.conductor import handbacks
from cellboot.conductor import manager
from cellboot.conductor import nova_door
from cellboot.conductor import nova_mirror
from cellboot.conf import CONF
from cellboot.db import pools
from cellboot import exception
from cellboot.nova import casts
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot import rpc
from cellboot.rpc import topics
from cellboot import service
from cellboot import service_runner

LOG = logging.getLogger(__name__)

PROG = 'cellboot-conductor'

DESCRIPTION = """\
Run the super conductor (boot flows, topic cellboot-conductor, needs
[api_database] and [flow_persistence]) or, with --cell NAME, a conductor of
cell NAME (reschedule flows, topic cellboot-conductor.NAME on the cell's
transport, needs only [database] connection and [DEFAULT] transport_url).
With --cell NAME --super, one process serves both. With [nova] enabled, the
super conductor also takes the builds an unmodified nova-api casts to its
conductor topic, and with [nova] api_database_connection keeps nova-api's
view of them true (docs/nova.md).
Runs until SIGTERM or SIGINT, then finishes the flows in flight and exits 0.

  cellboot-conductor --config-file /etc/cellboot/cellboot.conf
  cellboot-conductor --cell cell1 --config-file /etc/cellboot/cell1.conf
  cellboot-conductor --cell cell1 --super --config-file /etc/cellboot/all.conf
"""


def add_arguments(parser):
    parser.add_argument(
        '--cell', metavar='NAME',
        help='serve as a conductor of cell NAME (as listed by '
             '`cellboot-manage cell_v2 list_cells`); sets [DEFAULT] '
             'cell_name')
    parser.add_argument(
        '--super', action='store_true',
        help='with --cell: also serve as the super conductor, in the same '
             'process (needs [api_database] and [flow_persistence] too)')


class Conductor:
    """A conductor manager and its RPC server, as one runnable service.

    The manager starts first (the in-process scheduler's host states,
    resumed flows), so the first request finds it ready.
    """

    def __init__(self, conductor, rpc_service, context, more_services=()):
        self.conductor = conductor
        self.rpc_service = rpc_service
        self.context = context
        # Other buses served for this conductor (the Nova door).
        self.more_services = list(more_services)

    def start(self):
        resumed = self.conductor.start(self.context)
        if resumed:
            LOG.info('Resumed %d unfinished flow(s)', resumed)
        self.rpc_service.start()
        for more in self.more_services:
            more.start()
        board = self.conductor.runner.board
        LOG.info('Conductor %s started: %s flows, topic %s, %s',
                 self.conductor.runner.owner, self.conductor.KIND,
                 self.rpc_service.topic,
                 f'jobboard {board.name}' if board is not None
                 else 'no jobboard')

    def stop(self):
        self.rpc_service.stop()
        for more in self.more_services:
            more.stop()

    def wait(self):
        self.rpc_service.wait()
        for more in self.more_services:
            more.wait()
        self.conductor.stop()


def build_super_conductor(context):
    if not CONF.api_database.connection:
        raise exception.ConfigurationError(
            reason=f'the super conductor needs [api_database] connection '
                   f'(or run `{PROG} --cell NAME` for a cell conductor)')
    conductor = manager.SuperConductorManager()
    server = service.RPCService(CONF.host, topics.CONDUCTOR, [conductor],
                                rpc.get_api_transport())
    # Each cell's hand-backs, on that cell's bus, with that cell's
    # rights (cells mapped later are served after a restart).
    more = [service.RPCService(
        CONF.host, topics.super_conductor(cell.name),
        [handbacks.HandBackEndpoint(conductor, cell)],
        rpc.get_cell_transport(cell))
        for cell in cell_mapping_obj.CellMapping.get_all(context)
        if cell.uuid != cell_mapping_obj.CELL0_UUID]
    if CONF.nova.enabled:
        more.append(service.RPCService(
            CONF.host, casts.TOPIC, [nova_door.NovaDoor(conductor)],
            rpc.get_nova_transport(), exchange=CONF.nova.exchange))
        if CONF.nova.api_database_connection:
            more.append(nova_mirror.MirrorService(conductor))
        else:
            LOG.warning('[nova] enabled without [nova] '
                        'api_database_connection: nova-api will show the '
                        'servers it casts here in BUILD for ever')
    return Conductor(conductor, server, context, more_services=more)


def build_cell_conductor(context, cell_name):
    CONF.set_override('cell_name', cell_name)
    conductor = manager.CellConductorManager(cell_name=cell_name)
    server = service.RPCService(CONF.host, topics.cell_conductor(cell_name),
                                [conductor], rpc.get_local_cell_transport())
    return Conductor(conductor, server, context)


def build(context, args):
    pools.serve_as('conductor')
    if args.cell and args.super:
        return [build_super_conductor(context),
                build_cell_conductor(context, args.cell)]
    if args.cell:
        return [build_cell_conductor(context, args.cell)]
    return [build_super_conductor(context)]


def main(argv=None):
    return service_runner.main(PROG, DESCRIPTION, build, argv=argv,
                               add_arguments=add_arguments)


if __name__ == '__main__':
    sys.exit(main())
