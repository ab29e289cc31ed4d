"""``cellboot-scheduler``: the scheduler's API served over RPC.

The scheduler owns the host states and the resource tables of the API
database. This service loads the host states once, keeps them current,
and answers ``select_destinations``, ``update_provider``,
``claim_resources``, ``release_resources`` and ``record_build_result``:
on the API transport, topic ``cellboot-scheduler``, for the super
conductor (``[conductor] scheduler = rpc``) and the API, with every
right; on each mapped cell's transport, topic
``cellboot-scheduler.<cell>``, for that cell's compute hosts and
conductors (which have no API database credentials), with the rights of
that cell only (``cellboot.scheduler.doors`` and ``access``). Cells
mapped after it started are served from its next start.

Usage::

    cellboot-scheduler --config-file /etc/cellboot/cellboot.conf
"""

import sys

from oslo_log import log as logging

from cellboot.conf import CONF
from cellboot.db import pools
from cellboot import rpc
from cellboot.scheduler import api as scheduler_api
from cellboot.scheduler import doors
from cellboot.scheduler import rpc_endpoint
from cellboot import service
from cellboot import service_runner

LOG = logging.getLogger(__name__)

PROG = 'cellboot-scheduler'

DESCRIPTION = """\
Serve the scheduler's API (select_destinations, update_provider,
claim_resources, release_resources, record_build_result) over RPC: on
[DEFAULT] transport_url, topic cellboot-scheduler, with every right; on
the transport of each mapped cell, topic cellboot-scheduler.CELL, with
the rights of that cell only (its providers, its instances). Needs
[api_database] connection. Runs until SIGTERM or SIGINT, then finishes
the requests in flight and exits 0.

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


def build(context, args):
    """The host states, then one RPC server per door (``doors.plan``)."""
    pools.serve_as('scheduler')
    scheduler = scheduler_api.SchedulerAPI()
    services = [HostStates(scheduler, context)]
    for door in doors.plan(context, CONF.host):
        endpoint = rpc_endpoint.SchedulerEndpoint(scheduler, door.access)
        services.append(service.RPCService(CONF.host, door.topic,
                                           [endpoint], door.transport))
        LOG.info('Serving %s on %s for %s', door.topic,
                 rpc.describe(door.transport), door.access.caller)
    return services


def main(argv=None):
    return service_runner.main(PROG, DESCRIPTION, build, argv=argv)


if __name__ == '__main__':
    sys.exit(main())
