"""The embedded ``fake://`` bus: fake's semantics, listeners woken on send.

``fake://`` runs on ``cellboot.rpc.inprocess``. These tests hold it to
what oslo.messaging's fake driver promises (delivery, calls and casts,
JSON-only payloads, ``cleanup()``) and to its own promises: an idle
listener sleeps until a message arrives or it is stopped, and URLs of
other buses (``fake:///cell1``, ``fake:///cell2``) are other buses, as
two RabbitMQ vhosts are. Its speed is left to the benchmark: no test here times
it, as a loaded machine would make such a test flaky.
"""

import threading

import oslo_messaging
from oslo_utils import uuidutils

from cellboot.conf import CONF
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot import rpc
from cellboot.rpc import client as rpc_client
from cellboot.rpc import inprocess
from cellboot.rpc import topics
from tests import base
from tests.functional.rpc import base as rpc_base


class Echo(rpc_base.Recorder):
    """An endpoint that answers calls and records casts."""

    @oslo_messaging.expose
    def echo(self, context, value):
        return {'echoed': value}

    @oslo_messaging.expose
    def note(self, context, value):
        self.record('note', context, value=value)


def _topic():
    return f'inprocess-test-{uuidutils.generate_uuid()[:8]}'


class _Poller(threading.Thread):
    """Polls a listener once, with no timeout, in a thread of its own."""

    def __init__(self, listener):
        super().__init__(daemon=True)
        self.listener = listener
        self.result = None

    def run(self):
        self.result = self.listener.poll(timeout=None)


class InProcessTransportTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.buses = self.useFixture(rpc_base.Buses())
        self.transport = rpc.get_transport('fake://')
        self.ctx = rpc_base.user_context()
        self.topic = _topic()

    def _listener(self, topic, server=None):
        """A bare listener of the driver, as a server's thread polls it."""
        target = oslo_messaging.Target(topic=topic, server=server,
                                       exchange=CONF.control_exchange)
        return inprocess._Listener(
            self.transport._driver._exchange_manager,
            [target, oslo_messaging.Target(topic=topic,
                                           exchange=CONF.control_exchange)])

    def _serve(self, transport, topic=None, host='host1'):
        endpoint = Echo()
        self.buses.serve(host, topic or self.topic, [endpoint], transport)
        return endpoint

    def test_fake_url_runs_on_the_in_process_driver(self):
        self.assertIsInstance(self.transport._driver,
                              inprocess.InProcessDriver)

    def test_fake_transport_is_an_rpc_transport(self):
        self.assertIsInstance(self.transport,
                              oslo_messaging.transport.RPCTransport)

    def test_rabbit_url_keeps_oslo_messagings_own_driver(self):
        # Building a rabbit transport connects to no broker yet.
        transport = rpc.get_transport('rabbit://guest:guest@127.0.0.1:5672/')
        self.assertNotIsInstance(transport._driver,
                                 inprocess.InProcessDriver)

    def test_cast_is_delivered_to_the_server(self):
        endpoint = self._serve(self.transport)
        rpc_client.RPCClient(self.transport, self.topic).cast(
            self.ctx, 'note', value=7)
        (method, context, kwargs), = endpoint.wait_for(1)
        self.assertEqual(('note', {'value': 7}), (method, kwargs))

    def test_call_returns_the_endpoints_answer(self):
        self._serve(self.transport)
        answer = rpc_client.RPCClient(self.transport, self.topic).call(
            self.ctx, 'echo', timeout=rpc_base.DELIVERY_TIMEOUT, value='hi')
        self.assertEqual({'echoed': 'hi'}, answer)

    def test_casts_arrive_in_the_order_sent(self):
        endpoint = self._serve(self.transport)
        client = rpc_client.RPCClient(self.transport, self.topic)
        for value in range(20):
            client.cast(self.ctx, 'note', value=value)
        received = endpoint.wait_for(20)
        self.assertEqual(list(range(20)),
                         [kwargs['value'] for _, _, kwargs in received])

    def test_call_without_a_server_times_out(self):
        client = rpc_client.RPCClient(self.transport, self.topic)
        self.assertRaises(exception.RPCTimeout, client.call, self.ctx,
                          'echo', timeout=0.2, value=1)

    def test_payload_that_is_not_json_is_refused_at_send(self):
        client = oslo_messaging.get_rpc_client(
            self.transport, oslo_messaging.Target(topic=self.topic))
        self.assertRaises(ValueError, client.cast, {}, 'note',
                          value=object())

    def test_transports_of_one_bus_share_the_exchanges(self):
        # Other credentials, same bus: a transport of its own, one bus.
        other = rpc.get_transport('fake://user:secret@/')
        self.assertIsNot(self.transport, other)
        endpoint = self._serve(other)
        rpc_client.RPCClient(self.transport, self.topic).cast(
            self.ctx, 'note', value='across')
        self.assertEqual('across', endpoint.wait_for(1)[0][2]['value'])

    def test_another_virtual_host_is_another_bus(self):
        in_cell1 = self._serve(rpc.get_transport('fake:///cell1'))
        in_cell2 = self._serve(rpc.get_transport('fake:///cell2'),
                               host='host2')
        rpc_client.RPCClient(rpc.get_transport('fake:///cell1'),
                             self.topic).cast(self.ctx, 'note', value='c1')
        self.assertEqual('c1', in_cell1.wait_for(1)[0][2]['value'])
        self.assertTrue(in_cell2.nothing_after())

    def test_a_call_on_another_bus_finds_no_server(self):
        self._serve(rpc.get_transport('fake:///cell1'))
        client = rpc_client.RPCClient(self.transport, self.topic)
        self.assertRaises(exception.RPCTimeout, client.call, self.ctx,
                          'echo', timeout=0.2, value=1)

    def test_cleanup_drops_undelivered_messages(self):
        rpc_client.RPCClient(self.transport, self.topic).cast(
            self.ctx, 'note', value='lost')
        rpc.cleanup()
        endpoint = self._serve(rpc.get_transport('fake://'))
        self.assertTrue(endpoint.nothing_after())

    def test_idle_listener_wakes_for_a_message_sent_while_it_waits(self):
        listener = self._listener(self.topic)
        poller = _Poller(listener)
        poller.start()
        rpc_client.RPCClient(self.transport, self.topic).cast(
            self.ctx, 'note', value='wake')
        poller.join(rpc_base.DELIVERY_TIMEOUT)
        listener.stop()
        self.assertFalse(poller.is_alive())
        self.assertEqual('note', poller.result[0].message['method'])

    def test_stop_ends_a_listener_waiting_without_timeout(self):
        listener = self._listener(self.topic)
        poller = _Poller(listener)
        poller.start()
        listener.stop()
        poller.join(rpc_base.DELIVERY_TIMEOUT)
        self.assertFalse(poller.is_alive())
        self.assertEqual([], poller.result)

    def test_poll_with_a_timeout_returns_nothing_when_idle(self):
        self.assertEqual([], self._listener(self.topic).poll(timeout=0.05))

    def test_cells_sharing_the_bus_get_only_their_own_casts(self):
        suffix = uuidutils.generate_uuid()[:8]
        cell1, cell2 = (cell_mapping.CellMapping(
            uuid=uuidutils.generate_uuid(), name=f'{name}-{suffix}',
            transport_url='fake://') for name in ('cell1', 'cell2'))
        in_cell1, in_cell2 = (
            self._serve(rpc.get_cell_transport(cell), topics.compute(
                cell.name)) for cell in (cell1, cell2))
        rpc_client.RPCClient(self.transport, topics.compute(cell1.name)).cast(
            self.ctx, 'note', server='host1', value='cell1 only')
        self.assertEqual('cell1 only', in_cell1.wait_for(1)[0][2]['value'])
        self.assertTrue(in_cell2.nothing_after())
