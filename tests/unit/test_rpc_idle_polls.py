"""The rabbit driver's first idle wait, which ``cellboot.rpc`` spaces out.

``cellboot.rpc.idle_polls`` sets a constant of oslo.messaging's private
``amqpdriver`` module. These tests check that it is set once cellboot's
bus module is loaded and that both listening loops still read it at
each wait, by running each loop against a connection that records the
timeouts it is given: an oslo.messaging release that stops reading it
(or renames it) fails here rather than silently costing CPU again.
"""

import unittest

from oslo_messaging._drivers import amqpdriver
from oslo_messaging._drivers import common as rpc_common

from cellboot import rpc  # noqa: F401  (sets the first wait)
from cellboot.rpc import idle_polls


class _Driver:
    prefetch_size = 0


class _RecordingConnection:
    """A connection with nothing to read: every consume times out."""

    def __init__(self, waits_before_stop, on_stop):
        self.timeouts = []
        self._left = waits_before_stop
        self._on_stop = on_stop

    def consume(self, timeout=None):
        self.timeouts.append(timeout)
        self._left -= 1
        if self._left == 0:
            self._on_stop()
        raise rpc_common.Timeout()


class IdlePollsTest(unittest.TestCase):

    def test_the_constant_is_set_when_the_bus_module_loads(self):
        self.assertEqual(idle_polls.FIRST_IDLE_WAIT,
                         amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN)
        self.assertGreater(amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX,
                           idle_polls.FIRST_IDLE_WAIT)

    def test_the_server_listener_first_waits_that_long_then_doubles(self):
        listener = amqpdriver.AMQPListener(_Driver(), conn=None)
        listener.conn = _RecordingConnection(3, listener._shutdown.set)
        self.assertEqual([], listener.poll(timeout=60))
        first, second, third = listener.conn.timeouts
        self.assertEqual(idle_polls.FIRST_IDLE_WAIT, first)
        self.assertEqual(2 * first, second)
        self.assertEqual(4 * first, third)

    def test_the_reply_waiter_first_waits_that_long_then_doubles(self):
        waiter = amqpdriver.ReplyWaiter.__new__(amqpdriver.ReplyWaiter)
        waiter._thread_exit_event = amqpdriver.threading.Event()
        waiter.conn = _RecordingConnection(
            3, waiter._thread_exit_event.set)
        waiter.poll()
        first, second, third = waiter.conn.timeouts
        self.assertEqual(idle_polls.FIRST_IDLE_WAIT, first)
        self.assertEqual(2 * first, second)
        self.assertEqual(4 * first, third)
