"""Where the scheduler is served, and with whose rights.

``cellboot-scheduler``, and every in-process composition (``cellboot
all-in-one``, the tests' clusters), serves the scheduler's endpoint
through several RPC servers, "doors", each with the rights of whoever
can reach it (``access``):

* on the API's bus (``[DEFAULT] transport_url``), topic
  ``cellboot-scheduler``: the super conductor and the API, full rights;
* for each cell but cell0, on its bus, topic
  ``cellboot-scheduler.<cell>``: that cell's services, that cell's
  rights;
* on each cell bus that is not the API's, topic ``cellboot-scheduler``
  too: the services of a cell from before the per-cell topic (upgrades)
  get the rights of the one cell on that bus; where several cells share
  the bus nothing tells them apart, and every request there is refused
  with the topic to call instead.

Buses are compared as buses (``rpc.buses``), never as URL strings: two
URLs of one vhost must not get two servers of the same topic with other
rights, as the broker would hand each request to either. Cells that
share a bus, with each other or with the API, are warned about at start:
a service on a bus can send to any topic of that bus, so such cells are
not isolated from each other (or from the API level's rights).
"""

from oslo_log import log as logging

from cellboot.conf import CONF
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot import rpc
from cellboot.rpc import buses
from cellboot.rpc import topics
from cellboot.scheduler import access

LOG = logging.getLogger(__name__)


class Door:
    """One RPC server of the scheduler: a topic on a bus, with rights."""

    def __init__(self, transport, topic, access_rights):
        self.transport = transport
        self.topic = topic
        self.access = access_rights

    def __repr__(self):
        return (f'<Door {self.topic} on {rpc.describe(self.transport)} for '
                f'{self.access.caller}>')


class _Bus:
    """A bus and the cells found on it."""

    def __init__(self, bus, transport, is_api=False):
        self.bus = bus
        self.transport = transport
        self.is_api = is_api
        self.cells = []


def _buses(context):
    """The API's bus first, then each distinct bus of the cells.

    cell0 has no bus. A cell whose transport URL cannot be used is
    logged and skipped: the others must still be served.
    """
    found = [_Bus(buses.of_url(CONF.transport_url),
                  rpc.get_api_transport(), is_api=True)]
    for cell in cell_mapping.CellMapping.get_all(context):
        if cell.is_cell0:
            continue
        try:
            transport = rpc.get_cell_transport(cell)
            bus = buses.of_url(cell.transport_url)
        except exception.InvalidTransportURL as exc:
            LOG.error('Not serving cell %s: %s', cell.name, exc)
            continue
        for known in found:
            if known.bus.same_as(bus):
                known.cells.append(cell)
                break
        else:
            found.append(_Bus(bus, transport))
            found[-1].cells.append(cell)
    return found


def _warn_shared(bus):
    names = ', '.join(sorted(cell.name for cell in bus.cells))
    where = rpc.describe(bus.transport)
    if bus.is_api and bus.cells:
        LOG.warning('Cell(s) %s use the API\'s bus %s: their services can '
                    'call topic %s there with the API level\'s rights. '
                    'Give each cell a bus of its own to confine it.',
                    names, where, topics.SCHEDULER)
    elif len(bus.cells) > 1:
        LOG.warning('Cells %s share the bus %s: their services can act for '
                    'each other. Give each cell a bus of its own to confine '
                    'it.', names, where)


def _check_server_name(server, found):
    """Refuse a scheduler host named like a cell.

    On RabbitMQ the queue of a server ``S`` of topic ``T`` is ``T.S``:
    a scheduler whose ``[DEFAULT] host`` is a cell's name would consume
    that cell's topic through its own plain-topic server, whose rights
    are another door's.
    """
    for bus in found:
        for cell in bus.cells:
            if cell.name == server:
                raise exception.ConfigurationError(
                    reason=f'the scheduler\'s [DEFAULT] host is {server!r}, '
                           f'the name of a cell: its RPC queue '
                           f'{topics.SCHEDULER}.{server} would be that '
                           f'cell\'s topic; give the scheduler another host '
                           f'name')


def plan(context, server=None):
    """The doors to serve, as ``Door`` objects, the API level's last.

    Served in this order, the API level's door opens last: once it
    answers (what a service waiting for the scheduler asks), every
    cell's door is open too. ``server`` is the name the doors' RPC
    servers use (``[DEFAULT] host``); it may not be a cell's name.
    """
    doors = []
    found = _buses(context)
    _check_server_name(server, found)
    for bus in found:
        _warn_shared(bus)
        for cell in bus.cells:
            doors.append(Door(bus.transport, topics.scheduler(cell.name),
                              access.CellAccess(cell)))
        if bus.is_api:
            continue
        if len(bus.cells) == 1:
            legacy = access.CellAccess(bus.cells[0])
        else:
            legacy = access.UnattributedAccess(bus.cells)
        doors.append(Door(bus.transport, topics.SCHEDULER, legacy))
    doors.append(Door(found[0].transport, topics.SCHEDULER,
                      access.FullAccess()))
    return doors
