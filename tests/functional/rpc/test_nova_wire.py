"""nova-api's cast, byte for byte, through RabbitMQ to the Nova door.

The message body is the one captured from a real nova-api 34
(``tests/unit/nova/casts``), published as nova-api publishes it: to
exchange ``nova``, routing key ``conductor``, after declaring that
exchange and queue as Nova's services do (not durable, Nova's default)
on the bus where the door declared them first. RabbitMQ refuses a
second declaration with other properties, and cellboot's own buses are
durable: the door must declare them as Nova does.
"""

import time

import kombu

from cellboot.conductor import nova_door
from cellboot.conf import CONF
from cellboot import exception
from cellboot.nova import casts
from cellboot import rpc
from cellboot import service
from tests import base
from tests.functional import cluster
from tests.functional.rpc import base as rpc_base
from tests.unit.nova import test_casts

PLACED_TIMEOUT = 30


class NovaWireTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.url = rpc_base.rabbit_url(vhost='nova')
        self.cluster = self.useFixture(cluster.Cluster(cells=1,
                                                       hosts_per_cell=2))
        CONF.set_override('transport_url', self.url, group='nova')
        self.buses = self.useFixture(rpc_base.Buses())
        door = nova_door.NovaDoor(self.cluster.super_conductor)
        server = service.RPCService(
            'door-host', casts.TOPIC, [door], rpc.get_nova_transport(),
            exchange=CONF.nova.exchange)
        server.start()
        self.buses.services.append(server)
        self.connection = kombu.Connection(
            self.url.replace('rabbit://', 'amqp://'))
        self.addCleanup(self.connection.release)
        # Then what Nova's services and nova-api declare: a topic
        # exchange and the conductor's queue, neither durable. Had the
        # door declared them durable (cellboot's own setting), RabbitMQ
        # would refuse this (PRECONDITION_FAILED), as it would refuse
        # nova-api's cast.
        self.exchange = kombu.Exchange(casts.EXCHANGE, type='topic',
                                       durable=False)
        queue = kombu.Queue(casts.TOPIC, self.exchange,
                            routing_key=casts.TOPIC, durable=False)
        self._wait_for_queue(queue)

    def _wait_for_queue(self, queue):
        """Declare ``queue`` as Nova does, once the door made it."""
        deadline = time.monotonic() + PLACED_TIMEOUT
        while True:
            channel = self.connection.channel()
            try:
                queue(channel).queue_declare(passive=True)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
            finally:
                channel.close()
        channel = self.connection.default_channel
        queue(channel).declare()

    def _publish(self, body):
        producer = kombu.Producer(self.connection.default_channel,
                                  exchange=self.exchange)
        producer.publish(body, routing_key=casts.TOPIC, serializer='json')

    def test_the_captured_cast_is_built(self):
        record, message = test_casts.captured('multi_create_3')
        self._publish(record['body'])
        uuids = [build_request['nova_object.data']['instance_uuid']
                 for build_request in message['args']['build_requests']]
        deadline = time.monotonic() + PLACED_TIMEOUT
        while True:
            try:
                for uuid in uuids:
                    self.cluster.find(uuid)
                break
            except exception.InstanceNotFound:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.cluster.wait_for_quiet()
        self.assertEqual(['active'] * 3,
                         [self.cluster.find(uuid)[1].vm_state
                          for uuid in uuids])
