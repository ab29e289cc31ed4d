"""``cellboot-scheduler``: a cell's scheduler, or the API level's.

With ``--cell NAME`` it is a scheduler of cell NAME, inside the cell: it
needs only the cell's ``[database] connection`` and ``[DEFAULT]
transport_url`` (the cell's bus), loads the host states of the cell's
hosts, publishes the cell's aggregate in the cell database, and answers
on topic ``cellboot-scheduler.NAME`` the cell's compute hosts
(``update_provider``, ``record_build_result``), its conductors
(``claim_resources``, ``release_resources``) and the API level
(``select_destinations``, ``aggregate``, ``host_states``). Several may
run per cell.

Without ``--cell`` it is the API level's scheduler as a service, for
super conductors with ``[conductor] scheduler = rpc``: it holds no host,
reads each cell's aggregate from the cell databases, and answers
``select_destinations`` and ``release_resources`` on topic
``cellboot-scheduler`` of ``[DEFAULT] transport_url`` by asking the
cells' schedulers. It needs ``[api_database] connection``.

Either logs one INFO line of its counters as it stops (``COUNTERS``,
``key=value`` pairs, ``parse_counters`` reads them back): a cell's
scheduler the claims it tried and how many failed, its change feed's
pulls, lag and view age (the staleness bound); the API level's
requests placed and cells that refused; both their process's
generation conflicts and database retries. What an operator reads
after a busy day, and what the race benchmark sums over its services.

Usage::

    cellboot-scheduler --cell cell1 --config-file /etc/cellboot/cell1.conf
    cellboot-scheduler --config-file /etc/cellboot/cellboot.conf
"""

import re
import sys

from oslo_log import log as logging

from cellboot.conf import CONF
from cellboot.db import pools
from cellboot import exception
from cellboot import rpc
from cellboot.rpc import topics
from cellboot.scheduler import api as scheduler_api
from cellboot.scheduler import cells as cells_scheduler
from cellboot.scheduler import host_state_cache
from cellboot.scheduler.resources import contention
from cellboot.scheduler import rpc_endpoint
from cellboot import service
from cellboot import service_runner

LOG = logging.getLogger(__name__)

PROG = 'cellboot-scheduler'

# What the line of counters logged at stop begins with.
COUNTERS = 'Scheduler counters at stop:'
_COUNTERS_LINE = re.compile(re.escape(COUNTERS) + r'(.*)$', re.MULTILINE)
_COUNTER = re.compile(r'^([a-z][a-z0-9_]*)=(-?[0-9]+(?:\.[0-9]+)?)$')

DESCRIPTION = """\
With --cell NAME: schedule the hosts of cell NAME (needs only the cell's
[database] connection and [DEFAULT] transport_url): answer the cell's
compute hosts and conductors, and the API level, on topic
cellboot-scheduler.NAME of the cell's bus, and publish the cell's
aggregate in its database. Without --cell: the API level's scheduler
(needs [api_database] connection), which picks a cell from the cells'
aggregates and asks its scheduler, on topic cellboot-scheduler of
[DEFAULT] transport_url, for super conductors with [conductor] scheduler
= rpc. Runs until SIGTERM or SIGINT, then finishes the requests in
flight and exits 0.

  cellboot-scheduler --cell cell1 --config-file /etc/cellboot/cell1.conf
  cellboot-scheduler --config-file /etc/cellboot/cellboot.conf"""


def add_arguments(parser):
    parser.add_argument(
        '--cell', metavar='NAME',
        help='schedule the hosts of cell NAME (as listed by '
             '`cellboot-manage cell_v2 list_cells`); sets [DEFAULT] '
             'cell_name')


class Started:
    """A scheduler's background work as a runnable service.

    Started before the RPC server, so the first request finds the host
    states (or the aggregates) loaded; stopping ends the refreshes.
    """

    def __init__(self, scheduler, context):
        self.scheduler = scheduler
        self.context = context

    def start(self):
        summary = self.scheduler.start(self.context)
        LOG.info('Scheduler started: %s', summary)

    def stop(self):
        self.scheduler.stop()
        counters = dict(self.scheduler.counters())
        # Process-wide: in a service, this scheduler's alone.
        counters.update(contention.STATS.snapshot())
        LOG.info('%s %s', COUNTERS, format_counters(counters))

    def wait(self):
        pass


def format_counters(counters):
    """``{name: number}`` as ``name=number`` pairs, sorted by name."""
    return ' '.join(f'{name}={counters[name]}' for name in sorted(counters))


def parse_counters(log_text):
    """Every line of counters in ``log_text``, as ``{name: number}``
    dicts in order; a pair that is not ``name=number`` is left out."""
    found = []
    for match in _COUNTERS_LINE.finditer(log_text):
        counters = {}
        for pair in match.group(1).split():
            counter = _COUNTER.match(pair)
            if counter is not None:
                text = counter.group(2)
                counters[counter.group(1)] = (float(text) if '.' in text
                                              else int(text))
        found.append(counters)
    return found


def build_cell_scheduler(context, cell_name):
    if not CONF.database.connection:
        raise exception.ConfigurationError(
            reason=f'a scheduler of cell {cell_name} needs the cell\'s '
                   f'[database] connection')
    CONF.set_override('cell_name', cell_name)
    scheduler = scheduler_api.CellScheduler(
        host_state_cache.CellScope(cell_name), name=CONF.host)
    topic = topics.scheduler(cell_name)
    LOG.info('Serving %s on %s', topic,
             rpc.describe(rpc.get_local_cell_transport()))
    return [Started(scheduler, context),
            service.RPCService(CONF.host, topic,
                               [rpc_endpoint.CellSchedulerEndpoint(scheduler)],
                               rpc.get_local_cell_transport())]


def build_api_scheduler(context):
    if not CONF.api_database.connection:
        raise exception.ConfigurationError(
            reason=f'the API level\'s scheduler needs [api_database] '
                   f'connection (or run `{PROG} --cell NAME` for a cell\'s '
                   f'scheduler)')
    scheduler = cells_scheduler.CellsScheduler()
    return [Started(scheduler, context),
            service.RPCService(CONF.host, topics.SCHEDULER,
                               [rpc_endpoint.SchedulerEndpoint(scheduler)],
                               rpc.get_api_transport())]


def build(context, args):
    pools.serve_as('scheduler')
    if args.cell:
        return build_cell_scheduler(context, args.cell)
    return build_api_scheduler(context)


def main(argv=None):
    return service_runner.main(PROG, DESCRIPTION, build, argv=argv,
                               add_arguments=add_arguments)


if __name__ == '__main__':
    sys.exit(main())
