"""A boot's casts survive what a broker restart does to queues.

On a real RabbitMQ, in a vhost of the test's own: the queues that
cellboot's services declare for the casts that must arrive
(``schedule_and_build_instances``, ``build_instances``,
``build_and_run_instance``) are durable, and a cast sent while its
service is away waits in its queue as a persistent message (which is
what RabbitMQ keeps across a restart), then reaches the service when it
comes back. The restart itself is the lead's ``make faults``: a test
here never stops the machine's broker.

And a cast to a broker that is down gives up after the bounded retries
instead of blocking its caller for as long as the broker is away.
"""

import socket
import subprocess
import threading

import kombu
import oslo_messaging
from oslo_utils import uuidutils

from cellboot.compute import rpcapi as compute_rpcapi
from cellboot.conductor import rpcapi as conductor_rpcapi
from cellboot import rpc
from cellboot.rpc import topics
from tests import base
from tests.functional.multiprocess import rabbit
from tests.functional.rpc import base as rpc_base

# Generous: a bounded cast gives up within seconds; an unbounded one
# (oslo.messaging's default) never does.
GIVES_UP_WITHIN = 60


def _queues(vhost, *columns):
    """``{queue name: {column: value}}`` of ``vhost``."""
    out = subprocess.run(
        ['rabbitmqctl', '-q', 'list_queues', '-p', vhost, '--no-table-headers',
         'name', *columns], capture_output=True, text=True, check=True,
        timeout=rabbit.RABBITMQCTL_TIMEOUT).stdout
    found = {}
    for line in out.splitlines():
        fields = line.split('\t')
        if len(fields) == len(columns) + 1:
            found[fields[0]] = dict(zip(columns, fields[1:]))
    return found


def _instance(uuid):
    return {'uuid': uuid, 'vm_state': 'building', 'host': 'host-1'}


class DurableCastsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.vhost = self.useFixture(rabbit.Vhost())
        self.flags(transport_url=self.vhost.url)
        self.buses = self.useFixture(rpc_base.Buses())
        self.transport = rpc.get_transport(self.vhost.url)
        self.cell = 'cell-' + uuidutils.generate_uuid()[:8]
        self.ctx = rpc_base.user_context()

    def _serve_all(self):
        """The three services a boot's casts go to; their endpoints."""
        endpoints = (rpc_base.ConductorEndpoint(),
                     rpc_base.CellConductorEndpoint(),
                     rpc_base.ComputeEndpoint())
        for (host, topic), endpoint in zip(
                (('conductor-1', topics.CONDUCTOR),
                 ('conductor-1', topics.cell_conductor(self.cell)),
                 ('host-1', topics.compute(self.cell))), endpoints):
            self.buses.serve(host, topic, [endpoint], self.transport)
        return endpoints

    def _stop_all(self):
        for server in self.buses.services:
            server.stop()
        for server in self.buses.services:
            server.wait()
        self.buses.services.clear()

    def _cast_all(self, uuid):
        conductor_rpcapi.ConductorAPI(
            self.transport).schedule_and_build_instances(
            self.ctx, [{'instance_uuid': uuid}], [{'num_instances': 1}])
        conductor_rpcapi.CellConductorAPI(
            self.cell, self.transport).build_instances(
            self.ctx, _instance(uuid), {}, [], {'num_attempts': 1})
        compute_rpcapi.ComputeAPI(
            self.cell, self.transport).build_and_run_instance(
            self.ctx, 'host-1', _instance(uuid), [], {}, None)

    def _boot_queues(self):
        return (topics.CONDUCTOR, topics.cell_conductor(self.cell),
                f'{topics.compute(self.cell)}.host-1')

    def test_the_queues_of_a_boot_are_durable(self):
        self._serve_all()
        queues = _queues(self.vhost.name, 'durable', 'auto_delete')
        for name in self._boot_queues() + (
                topics.compute(self.cell),
                f'{topics.CONDUCTOR}.conductor-1'):
            self.assertEqual({'durable': 'true', 'auto_delete': 'false'},
                             queues.get(name), name)

    def test_a_cast_waits_persistent_for_its_service_and_arrives(self):
        self._serve_all()
        self._stop_all()
        uuid = uuidutils.generate_uuid()
        self._cast_all(uuid)

        queues = _queues(self.vhost.name, 'messages', 'messages_persistent')
        for name in self._boot_queues():
            self.assertEqual({'messages': '1', 'messages_persistent': '1'},
                             queues.get(name), name)

        conductor, cell_conductor, compute = self._serve_all()
        for endpoint, method in ((conductor, 'schedule_and_build_instances'),
                                 (cell_conductor, 'build_instances'),
                                 (compute, 'build_and_run_instance')):
            [(got, _ctx, kwargs)] = endpoint.wait_for(1)
            self.assertEqual(method, got)
        self.assertEqual(uuid, kwargs['instance']['uuid'])

    def test_a_non_durable_default_would_not_be_kept(self):
        # The hostile side of the default: an operator who turns it off
        # gets transient queues again (what a restart deletes).
        self.flags(amqp_durable_queues=False, group='oslo_messaging_rabbit')
        rpc.cleanup()
        transport = rpc.get_transport(self.vhost.url)
        self.buses.serve('conductor-1', topics.CONDUCTOR,
                         [rpc_base.ConductorEndpoint()], transport)
        self.assertEqual(
            'false',
            _queues(self.vhost.name, 'durable')[topics.CONDUCTOR]['durable'])


class ForeignSenderTest(base.TestCase):
    """A service casting with oslo.messaging alone (docs/rpc.md)."""

    def setUp(self):
        super().setUp()
        self.vhost = self.useFixture(rabbit.Vhost())
        self.flags(transport_url=self.vhost.url)
        self.buses = self.useFixture(rpc_base.Buses())
        self.conductor = rpc_base.ConductorEndpoint()
        self.buses.serve('conductor-1', topics.CONDUCTOR, [self.conductor],
                         rpc.get_transport(self.vhost.url))

    def _cast(self):
        transport = oslo_messaging.get_rpc_transport(
            rpc.CONF, url=self.vhost.url)
        self.addCleanup(transport.cleanup)
        target = oslo_messaging.Target(exchange=rpc.CONTROL_EXCHANGE,
                                       topic=topics.CONDUCTOR, version='1.0')
        client = oslo_messaging.get_rpc_client(transport, target)
        client.prepare(retry=1).cast(
            rpc_base.user_context().to_dict(), 'schedule_and_build_instances',
            build_requests=[{'instance_uuid': 'u'}], request_specs=[{}])

    def test_a_sender_declaring_the_exchange_transient_is_refused(self):
        self.flags(amqp_durable_queues=False, group='oslo_messaging_rabbit')
        self.assertRaises(oslo_messaging.MessageDeliveryFailure, self._cast)
        self.assertTrue(self.conductor.nothing_after())

    def test_a_sender_configured_as_documented_gets_through(self):
        self.flags(amqp_durable_queues=True, group='oslo_messaging_rabbit')
        self._cast()
        [(method, _ctx, _kwargs)] = self.conductor.wait_for(1)
        self.assertEqual('schedule_and_build_instances', method)


class UpgradeFromTransientQueuesTest(base.TestCase):
    """A vhost whose queues an earlier version declared non-durable.

    What docs/reliability.md ("A broker restart") tells the operator,
    done for real: the new default does not take over the old queues by
    itself (oslo.messaging warns and declares them transient again);
    once the services are stopped and the old queues and exchange
    deleted, the services declare them durable.
    """

    def setUp(self):
        super().setUp()
        self.vhost = self.useFixture(rabbit.Vhost())
        self.flags(transport_url=self.vhost.url)
        self.buses = self.useFixture(rpc_base.Buses())
        # Registers [oslo_messaging_rabbit] for the test to set.
        rpc.get_transport(self.vhost.url)

    def _serve_and_stop(self):
        transport = rpc.get_transport(self.vhost.url)
        server = self.buses.serve('conductor-1', topics.CONDUCTOR,
                                  [rpc_base.ConductorEndpoint()], transport)
        server.stop()
        server.wait()
        self.buses.services.remove(server)
        rpc.cleanup()
        return _queues(self.vhost.name, 'durable')

    def test_old_queues_stay_transient_until_deleted(self):
        self.flags(amqp_durable_queues=False, group='oslo_messaging_rabbit')
        self.assertEqual('false',
                         self._serve_and_stop()[topics.CONDUCTOR]['durable'])

        self.flags(amqp_durable_queues=True, group='oslo_messaging_rabbit')
        with self.assertLogs('oslo.messaging._drivers.impl_rabbit',
                             'WARNING') as log:
            queues = self._serve_and_stop()
        self.assertIn("inequivalent arg 'durable'", '\n'.join(log.output))
        self.assertEqual('false', queues[topics.CONDUCTOR]['durable'])

        # The operator's step: delete the old queues and exchange.
        for name, columns in queues.items():
            if columns['durable'] == 'false':
                subprocess.run(
                    ['rabbitmqctl', '-q', 'delete_queue', '-p',
                     self.vhost.name, name], check=True, capture_output=True,
                    timeout=rabbit.RABBITMQCTL_TIMEOUT)
        with kombu.Connection(self.vhost.url.replace('rabbit://',
                                                     'amqp://')) as conn:
            conn.channel().exchange_delete(rpc.CONTROL_EXCHANGE)

        queues = self._serve_and_stop()
        self.assertEqual(
            ['true'], sorted({columns['durable'] for name, columns in
                              queues.items()
                              if name.startswith(topics.CONDUCTOR)}))


class BrokerDownTest(base.TestCase):
    """A broker nobody answers for: nothing listens on the port."""

    def setUp(self):
        super().setUp()
        # A port of this machine that nothing listens on.
        sock = socket.socket()
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
        sock.close()
        self.url = f'rabbit://guest:guest@127.0.0.1:{port}/'
        self.flags(transport_url=self.url)
        self.addCleanup(rpc.cleanup)
        self.ctx = rpc_base.user_context()

    def _gives_up(self, cast):
        """The exception ``cast()`` ends with; fails if it hangs."""
        outcome = []

        def run():
            try:
                cast()
            except Exception as exc:
                outcome.append(exc)
            else:
                outcome.append(None)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(GIVES_UP_WITHIN)
        self.assertEqual(1, len(outcome),
                         f'the cast still waits after {GIVES_UP_WITHIN} s')
        return outcome[0]

    def test_the_api_cast_gives_up(self):
        self.flags(cast_retries=0, group='api')
        transport = rpc.get_transport(self.url)
        exc = self._gives_up(
            lambda: conductor_rpcapi.ConductorAPI(
                transport).schedule_and_build_instances(
                self.ctx, [{'instance_uuid': 'u'}], [{}]))
        # MessageDeliveryFailure, or kombu's error when the pool could
        # not even open a connection: either way the caller hears it.
        self.assertIsInstance(exc, Exception)

    def test_a_conductor_cast_to_compute_gives_up(self):
        self.flags(cast_retries=1, group='conductor')
        transport = rpc.get_transport(self.url)
        exc = self._gives_up(
            lambda: compute_rpcapi.ComputeAPI(
                'cell1', transport).build_and_run_instance(
                self.ctx, 'host-1', _instance('u'), [], {}, None))
        # MessageDeliveryFailure, or kombu's error when the pool could
        # not even open a connection: either way the caller hears it.
        self.assertIsInstance(exc, Exception)
