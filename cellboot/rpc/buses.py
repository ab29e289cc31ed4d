"""Which transport URLs name the same message bus.

Two URLs that differ as strings may reach the same queues: other
credentials, ``localhost`` for ``127.0.0.1``, a host name in capitals,
the default port written out or left out, ``/``, ``%2F`` or nothing for
RabbitMQ's default vhost, a cluster's brokers listed in another order or
only some of them, a query string. What a request to the scheduler may
do is decided by the bus it arrives on, so ``cellboot-manage`` (which
maps a cell onto the API's bus, or onto another cell's, only when told
to) and ``cellboot-scheduler`` (which serves each bus once, with the
rights of the cells on it) compare buses, never strings.

A bus is its driver, its virtual host and its brokers' addresses (names
resolved, so that an alias and its address are one broker). Two URLs
name the same bus when driver and virtual host are equal and they have a
broker in common. ``fake://`` buses live in one process and have no
brokers to resolve: their host names and virtual host, as written, tell
them apart (``inprocess`` keeps one set of queues per such key), so
``fake://`` and ``fake:///cell1`` are two buses.
"""

import socket

import oslo_messaging

from cellboot.conf import CONF
from cellboot import exception
from cellboot import masking

# Ports a driver uses when the URL names none.
_DEFAULT_PORTS = {'rabbit': 5672, 'amqp': 5672, 'kafka': 9092}
# The virtual host a driver uses when the URL names none.
_DEFAULT_VHOSTS = {'rabbit': '/'}
# Drivers whose "brokers" are names inside this process.
_IN_PROCESS = frozenset({'fake'})


def _addresses(hostname, port):
    """The addresses ``hostname`` resolves to, or the name itself."""
    try:
        found = socket.getaddrinfo(hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        # Unresolvable here (a broker's name only its cell's DNS knows):
        # compared by name.
        return {hostname}
    return {info[4][0] for info in found}


class Bus:
    """The identity of one message bus; see the module docstring."""

    def __init__(self, driver, virtual_host, brokers):
        self.driver = driver
        self.virtual_host = virtual_host
        # {(address, port)}: any one in common makes two URLs one bus.
        self.brokers = frozenset(brokers)

    @property
    def key(self):
        """A hashable value equal for URLs of the same in-process bus."""
        return (self.driver, self.virtual_host, tuple(sorted(
            self.brokers, key=repr)))

    def same_as(self, other):
        if (self.driver, self.virtual_host) != (other.driver,
                                                other.virtual_host):
            return False
        if not self.brokers and not other.brokers:
            return True
        return bool(self.brokers & other.brokers)

    def __repr__(self):
        return (f'<Bus {self.driver} vhost={self.virtual_host!r} '
                f'brokers={sorted(self.brokers, key=repr)}>')


def of_parsed(parsed, resolve=True):
    """The ``Bus`` of an ``oslo_messaging.TransportURL``."""
    driver = (parsed.transport or '').lower()
    virtual_host = parsed.virtual_host or _DEFAULT_VHOSTS.get(driver, '')
    port_default = _DEFAULT_PORTS.get(driver)
    brokers = set()
    hosts = [(host.hostname, host.port) for host in parsed.hosts
             if host.hostname]
    if not hosts and driver not in _IN_PROCESS:
        # oslo.messaging's drivers connect to the local broker then.
        hosts = [('localhost', None)]
    for hostname, port in hosts:
        port = port or port_default
        name = hostname.lower()
        if resolve and driver not in _IN_PROCESS:
            brokers.update((address, port)
                           for address in _addresses(name, port))
        else:
            brokers.add((name, port))
    return Bus(driver, virtual_host, brokers)


def of_url(url):
    """The ``Bus`` a transport URL names; InvalidTransportURL if none."""
    try:
        parsed = oslo_messaging.TransportURL.parse(CONF, url)
    except (oslo_messaging.InvalidTransportURL, ValueError) as exc:
        # ValueError: a port that is not a number.
        raise exception.InvalidTransportURL(
            url=masking.mask_url(url), reason='it is not a transport URL '
            '(expected driver://[user:pass@]host:port[,...]/vhost)') from exc
    return of_parsed(parsed)
