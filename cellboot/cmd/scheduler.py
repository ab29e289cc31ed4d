"""``cellboot-scheduler``: the scheduler's API served over RPC.

The scheduler owns the host states and the resource tables of the API
database. This service loads the host states once, keeps them current,
and answers ``select_destinations``, ``update_provider``,
``claim_resources``, ``release_resources`` and ``record_build_result`` on
topic ``cellboot-scheduler``: on the API transport (for the super
conductor with ``[conductor] scheduler = rpc``) and on every distinct
transport of the mapped cells (compute hosts and cell conductors, which
have no API database credentials, call it from inside their cell). Cells
mapped after it started are served from its next start.

Usage::

    cellboot-scheduler --config-file /etc/cellboot/cellboot.conf
"""

import sys

from oslo_log import log as logging

from cellboot.cmd import service_runner
from cellboot.conf import CONF
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot import rpc
from cellboot.rpc import topics
from cellboot.scheduler import api as scheduler_api
from cellboot.scheduler import rpc_endpoint
from cellboot import service

LOG = logging.getLogger(__name__)

PROG = 'cellboot-scheduler'

DESCRIPTION = """\
Serve the scheduler's API (select_destinations, update_provider,
claim_resources, release_resources, record_build_result) over RPC on topic
cellboot-scheduler, on [DEFAULT] transport_url and on the transport of
every mapped cell. Needs [api_database] connection. Runs until SIGTERM or
SIGINT, then finishes the requests in flight and exits 0.

  cellboot-scheduler --config-file /etc/cellboot/cellboot.conf"""


class HostStates:
    """The scheduler's in-memory host states as a runnable service.

    Started before the RPC servers, so the first request finds them
    loaded; stopping ends the periodic refresh.
    """

    def __init__(self, scheduler, context):
        self.scheduler = scheduler
        self.context = context

    def start(self):
        summary = self.scheduler.start(self.context)
        LOG.info('Host states loaded: %s', summary)

    def stop(self):
        self.scheduler.stop()

    def wait(self):
        pass


def serving_transports(context):
    """The API transport, then each distinct transport of the cells.

    cell0 has no bus. A cell whose transport URL cannot be used is
    logged and skipped: the others must still be served.
    """
    transports = [rpc.get_api_transport()]
    for cell in cell_mapping.CellMapping.get_all(context):
        if cell.is_cell0:
            continue
        try:
            transport = rpc.get_cell_transport(cell)
        except exception.InvalidTransportURL as exc:
            LOG.error('Not serving cell %s: %s', cell.name, exc)
            continue
        if not any(transport is known for known in transports):
            transports.append(transport)
    return transports


def build(context, args):
    """The host states, then one RPC server per distinct transport."""
    scheduler = scheduler_api.SchedulerAPI()
    endpoint = rpc_endpoint.SchedulerEndpoint(scheduler)
    services = [HostStates(scheduler, context)]
    for transport in serving_transports(context):
        services.append(service.RPCService(CONF.host, topics.SCHEDULER,
                                           [endpoint], transport))
    return services


def main(argv=None):
    return service_runner.main(PROG, DESCRIPTION, build, argv=argv)


if __name__ == '__main__':
    sys.exit(main())
