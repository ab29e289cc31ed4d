"""The embedded bus: oslo.messaging's fake driver, woken on delivery.

``fake://`` carries calls and casts between the services of one process
(``cellboot all-in-one``, the tests, the benchmarks). oslo.messaging's
own fake driver does that, but its listeners look at their queues every
50 ms when they are empty, so each hop of a boot (API to conductor,
conductor to compute) waits half of that on average: most of a boot's
latency on SQLite.

This driver keeps everything else of the fake driver (payloads checked
to be JSON, replies on a queue, ``cleanup()``) and changes two things:

* the waiting: every delivery rings one process-wide doorbell, and an
  idle listener sleeps on it until a message may have arrived, its poll
  timeout passes, or it is stopped;
* the buses: oslo.messaging's fake exchanges are shared by every
  transport of the process, whatever its URL; here each bus (the URL's
  host names and virtual host, ``buses.Bus.key``) has exchanges of its
  own, so that ``fake:///cell1`` and ``fake:///cell2`` are two buses as
  two RabbitMQ vhosts are, and a test or ``cellboot all-in-one`` can give
  each cell a bus of its own. Transports of one URL (or of URLs that
  differ only in credentials) share theirs.

``rpc.get_transport`` builds ``fake://`` transports with it; the URL,
and every other driver, stay as oslo.messaging makes them.
"""

import threading
import time

import oslo_messaging
from oslo_messaging._drivers import base
from oslo_messaging._drivers import impl_fake

from cellboot.rpc import buses

# The URL scheme (oslo.messaging driver name) this driver serves.
DRIVER = 'fake'


class _Doorbell:
    """Counts deliveries; lets listeners sleep until the count moves.

    A listener reads the count before it looks at its queues, then waits
    for a different count: a message delivered between its look and its
    wait cannot be missed.
    """

    def __init__(self):
        self._condition = threading.Condition()
        self.rings = 0

    def ring(self):
        with self._condition:
            self.rings += 1
            self._condition.notify_all()

    def wait(self, seen, timeout):
        """Until a ring after ``seen``, or ``timeout`` seconds (None: ever)."""
        with self._condition:
            self._condition.wait_for(lambda: self.rings != seen, timeout)


class _Exchange(impl_fake.FakeExchange):
    """A fake exchange that rings the doorbell after each delivery."""

    def __init__(self, name, doorbell):
        super().__init__(name)
        self._doorbell = doorbell

    def deliver_message(self, topic, ctxt, message,
                        server=None, fanout=False, reply_q=None):
        # A requeue calls this method again, so it rings too.
        super().deliver_message(topic, ctxt, message, server=server,
                                fanout=fanout, reply_q=reply_q)
        self._doorbell.ring()


class _ExchangeManager(impl_fake.FakeExchangeManager):
    """The exchanges of one embedded bus (``bus_key``) of the process.

    Kept apart from oslo.messaging's own fake exchanges (class attributes
    of our own), so that a plain ``FakeDriver`` elsewhere in the process
    never hands our listeners an exchange that does not ring.
    """

    _exchanges_lock = threading.Lock()
    # {(bus key, exchange name): exchange}, for the whole process.
    _exchanges = {}
    doorbell = _Doorbell()

    def __init__(self, default_exchange, bus_key):
        super().__init__(default_exchange)
        self._bus_key = bus_key

    def get_exchange(self, name):
        if name is None:
            name = self._default_exchange
        with self._exchanges_lock:
            exchange = self._exchanges.get((self._bus_key, name))
            if exchange is None:
                exchange = _Exchange(name, self.doorbell)
                self._exchanges[(self._bus_key, name)] = exchange
            return exchange


class _Listener(impl_fake.FakeListener):
    """A fake listener that sleeps on the doorbell instead of polling."""

    def __init__(self, exchange_manager, targets, pool=None):
        super().__init__(exchange_manager, targets, pool)
        self._doorbell = exchange_manager.doorbell

    def _take(self):
        for target in self._targets:
            exchange = self._exchange_manager.get_exchange(target.exchange)
            ctxt, message, reply_q, requeue = exchange.poll(target,
                                                            self._pool)
            if message is not None:
                return impl_fake.FakeIncomingMessage(ctxt, message, reply_q,
                                                     requeue)
        return None

    @base.batch_poll_helper
    def poll(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._stopped.is_set():
            seen = self._doorbell.rings
            incoming = self._take()
            if incoming is not None:
                return incoming
            if deadline is None:
                remaining = None
            else:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
            self._doorbell.wait(seen, remaining)
        return None

    def stop(self):
        super().stop()
        # Wake this listener (and, harmlessly, the others) to see it.
        self._doorbell.ring()


class InProcessDriver(impl_fake.FakeDriver):
    """``fake://`` with listeners woken as soon as a message arrives."""

    def __init__(self, conf, url, default_exchange=None,
                 allowed_remote_exmods=None):
        super().__init__(conf, url, default_exchange, allowed_remote_exmods)
        self._exchange_manager = _ExchangeManager(
            default_exchange, buses.of_parsed(url).key)

    def listen(self, target, batch_size, batch_timeout):
        exchange = target.exchange or self._default_exchange
        # The server's own queue first, then the topic's shared one.
        targets = [oslo_messaging.Target(topic=target.topic,
                                         server=target.server,
                                         exchange=exchange),
                   oslo_messaging.Target(topic=target.topic,
                                         exchange=exchange)]
        return base.PollStyleListenerAdapter(
            _Listener(self._exchange_manager, targets),
            batch_size, batch_timeout)

    def listen_for_notifications(self, targets_and_priorities, pool,
                                 batch_size, batch_timeout):
        targets = [oslo_messaging.Target(topic=f'{target.topic}.{priority}',
                                         exchange=target.exchange)
                   for target, priority in targets_and_priorities]
        return base.PollStyleListenerAdapter(
            _Listener(self._exchange_manager, targets, pool),
            batch_size, batch_timeout)


def new_transport(conf, url, allowed_remote_exmods):
    """An RPC transport over the in-process driver for parsed ``url``.

    Built the way oslo.messaging builds every transport (its driver
    wrapped in ``RPCTransport``), minus the driver lookup by name.
    """
    driver = InProcessDriver(conf, url,
                             default_exchange=conf.control_exchange,
                             allowed_remote_exmods=allowed_remote_exmods)
    return oslo_messaging.transport.RPCTransport(driver)
