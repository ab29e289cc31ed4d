"""Message buses: one oslo.messaging transport per distinct URL.

cellboot talks over two kinds of bus. API-level services (the API, the
super conductor, the scheduler) share ``[DEFAULT] transport_url``; each
cell has its own ``transport_url`` in its cell mapping, which the services
living in that cell also find as their own ``[DEFAULT] transport_url``.
Transports are cached per URL, so every client and server on one bus
shares one connection pool, and two cells with the same URL share one
transport (their topics carry the cell name, see ``topics``).

The embedded default is ``fake://``: calls and casts inside one process,
which is all ``cellboot all-in-one`` and most tests need; it runs on
``inprocess.InProcessDriver``, which wakes a listener as soon as a
message is delivered. ``rabbit://`` spans processes and machines.

Remote errors: every transport lets ``cellboot.exception`` classes travel,
so a ``NoValidHost`` raised by a remote scheduler is a ``NoValidHost`` for
the caller (``client.RPCClient`` strips the remote traceback from it).

Messages that must arrive: a boot's casts (``schedule_and_build_instances``,
``build_and_run_instance``, ``build_instances``) sit in a topic queue until
their service takes them. oslo.messaging declares those queues (and the
exchange) non-durable by default, so a RabbitMQ restart deletes them with
every message they hold, and a cast published after the restart but before
its consumer declared the queue again is routed nowhere. cellboot makes
``[oslo_messaging_rabbit] amqp_durable_queues`` true by default: the queues
and the exchange survive a restart, and kombu publishes every message
persistent (delivery_mode 2), so what was queued is still there afterwards
(docs/reliability.md, "A broker restart", says what it costs and how an
existing deployment moves over).
"""

from importlib import metadata
import threading

from oslo_config import cfg
import oslo_messaging
from oslo_messaging._drivers import amqp as om_amqp
from oslo_messaging import transport as om_transport

from cellboot.conf import CONF
from cellboot import exception
from cellboot import masking
from cellboot.rpc import idle_polls
from cellboot.rpc import inprocess
from cellboot.rpc import nova_bus

# The embedded mode needs no broker; a deployment sets its rabbit:// URL.
DEFAULT_TRANSPORT_URL = 'fake://'
CONTROL_EXCHANGE = 'cellboot'
# Topic queues and the exchange survive a broker restart (module doc).
DURABLE_QUEUES = True

# Modules whose exceptions a client rebuilds as themselves.
ALLOWED_REMOTE_EXMODS = [exception.__name__]

_LOCK = threading.Lock()
_transports = {}


def set_defaults():
    """``fake://``, the ``cellboot`` exchange, durable queues by default.

    The option objects' own defaults are changed (not ``CONF``'s), so
    they survive ``CONF.reset()`` in tests and show in the generated
    sample configuration (this is also the ``oslo.config.opts.defaults``
    hook of the ``cellboot`` namespace).
    """
    oslo_messaging.set_transport_defaults(control_exchange=CONTROL_EXCHANGE)
    # oslo.messaging has no public setter for the transport_url default.
    cfg.set_defaults(om_transport._transport_opts,
                     transport_url=DEFAULT_TRANSPORT_URL)
    CONF.register_opts(om_transport._transport_opts)
    # Nor for the AMQP drivers' options, which it registers (in group
    # oslo_messaging_rabbit) only when a rabbit transport is made: the
    # option objects' default is what that registration picks up.
    cfg.set_defaults(om_amqp.amqp_opts, amqp_durable_queues=DURABLE_QUEUES)
    # Not an option oslo.messaging has: see ``idle_polls``.
    idle_polls.space_out()


set_defaults()


def get_transport(url, conf=None):
    """The shared RPC transport for ``url``; raises InvalidTransportURL.

    ``conf``: the configuration its driver reads (default: cellboot's;
    nova-api's bus has one of its own, ``nova_bus``).

    A URL that cannot be parsed, or names a driver that is not
    installed, is refused here with an operator's message; a broker that
    is down is only noticed when a client or server first uses it.
    """
    if not url:
        raise exception.InvalidTransportURL(
            url=url, reason='no transport URL is configured')
    conf = CONF if conf is None else conf
    key = (url, id(conf))
    transport = _transports.get(key)
    if transport is not None:
        return transport
    with _LOCK:
        transport = _transports.get(key)
        if transport is None:
            transport = _new_transport(url, conf)
            _transports[key] = transport
    return transport


def _new_transport(url, conf):
    try:
        parsed = oslo_messaging.TransportURL.parse(conf, url)
    except (oslo_messaging.InvalidTransportURL, ValueError) as exc:
        # ValueError: a port that is not a number.
        raise exception.InvalidTransportURL(
            url=masking.mask_url(url),
            reason='it is not a transport URL (expected '
            'driver://[user:pass@]host:port[,...]/vhost)') from exc
    drivers = sorted(ep.name for ep in metadata.entry_points(
        group='oslo.messaging.drivers'))
    if parsed.transport not in drivers:
        # Checked here: oslo.messaging would log a warning of its own
        # before failing, a second line for the operator to read.
        raise exception.InvalidTransportURL(
            url=masking.mask_url(url),
            reason=f'there is no messaging driver '
            f'{parsed.transport!r} (installed: {", ".join(drivers)})')
    if parsed.transport.split('+')[0] == inprocess.DRIVER:
        # The embedded bus: oslo.messaging's fake driver, but woken on
        # delivery instead of polling every 50 ms (see ``inprocess``).
        return inprocess.new_transport(conf, parsed, ALLOWED_REMOTE_EXMODS)
    return oslo_messaging.get_rpc_transport(
        conf, url=parsed, allowed_remote_exmods=ALLOWED_REMOTE_EXMODS)


def get_api_transport():
    """The API-level bus: ``[DEFAULT] transport_url``."""
    return get_transport(CONF.transport_url)


def get_nova_transport():
    """nova-api's bus: ``[nova] transport_url``, else the API-level one,
    declared with Nova's settings (``nova_bus``)."""
    return get_transport(CONF.nova.transport_url or CONF.transport_url,
                         conf=nova_bus.nova_conf())


def get_local_cell_transport():
    """The bus of the cell this service lives in.

    Services inside a cell (compute hosts, cell conductors) know their
    cell's bus as their own ``[DEFAULT] transport_url``.
    """
    return get_transport(CONF.transport_url)


def get_cell_transport(cell_mapping):
    """The bus of ``cell_mapping``, as recorded in the API database."""
    if cell_mapping.is_cell0:
        raise exception.InvalidTransportURL(
            url=masking.mask_url(cell_mapping.transport_url),
            reason='cell0 has no message bus: it only holds instances whose '
                   'build failed before reaching a cell')
    try:
        return get_transport(cell_mapping.transport_url)
    except exception.InvalidTransportURL as exc:
        raise exception.InvalidTransportURL(
            url=masking.mask_url(cell_mapping.transport_url),
            reason=f'cell {cell_mapping.name} ({cell_mapping.uuid}): '
                   f'{exc.kwargs.get("reason")}; fix the transport_url of '
                   f'its cell mapping') from exc


def describe(transport):
    """The (masked) URL of a cached transport, for error messages."""
    for (url, _conf), cached in list(_transports.items()):
        if cached is transport:
            return masking.mask_url(url)
    return '<unknown transport>'


def cleanup():
    """Close every cached transport (tests, and service shutdown)."""
    with _LOCK:
        transports = list(_transports.values())
        _transports.clear()
    for transport in transports:
        transport.cleanup()
