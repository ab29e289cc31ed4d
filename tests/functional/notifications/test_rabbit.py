"""Notifications of real boots, received from a real RabbitMQ.

A deployment in this process (``cluster.Cluster``: its RPC on the
in-process bus) sends its notifications to a vhost of its own on the
local broker (``[oslo_messaging_notifications] transport_url``), where
an oslo.messaging notification listener — what a consumer of Nova's
notifications runs — takes them from ``versioned_notifications``.
"""

import threading
import time

import oslo_messaging

from cellboot.conf import CONF
from cellboot.notifications import sender
from tests import base
from tests.functional import cluster
from tests.functional.multiprocess import rabbit

WAIT = 30.0


class _Collector:
    """A notification endpoint that keeps what it hears, in order."""

    def __init__(self):
        self.heard = []
        self._cond = threading.Condition()

    def _hear(self, ctxt, publisher_id, event_type, payload, metadata):
        with self._cond:
            self.heard.append((event_type, publisher_id, payload))
            self._cond.notify_all()

    info = warn = error = _hear

    def wait_for(self, event_type, uuid_key, uuid):
        """The payload data of the first ``event_type`` about ``uuid``."""
        deadline = time.monotonic() + WAIT
        with self._cond:
            while True:
                for heard_type, _publisher, payload in self.heard:
                    data = payload['nova_object.data']
                    if heard_type == event_type and \
                            data.get(uuid_key) == uuid:
                        return data
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f'no {event_type} of {uuid} within {WAIT} s; heard '
                        f'{[heard[0] for heard in self.heard]}')
                self._cond.wait(left)

    def types_about(self, uuid):
        return [event_type for event_type, _p, payload in self.heard
                if uuid in (payload['nova_object.data'].get('uuid'),
                            payload['nova_object.data'].get(
                                'instance_uuid'))]


class RabbitNotificationsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        vhost = self.useFixture(rabbit.Vhost())
        self.flags(enabled=True, group='notifications')
        self.flags(transport_url=vhost.url,
                   group='oslo_messaging_notifications')
        self.collector = _Collector()
        transport = oslo_messaging.get_notification_transport(
            CONF, url=vhost.url)
        self.addCleanup(transport.cleanup)
        listener = oslo_messaging.get_notification_listener(
            transport,
            [oslo_messaging.Target(topic='versioned_notifications')],
            [self.collector], executor='threading')
        # Started (its queue declared) before anything is sent.
        listener.start()
        self.addCleanup(listener.wait)
        self.addCleanup(listener.stop)
        self.cluster = self.useFixture(cluster.Cluster(cells=1,
                                                       hosts_per_cell=1))
        self.addCleanup(sender.flush)

    def test_a_boot_sends_create_start_end_and_its_flow_end(self):
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        start = self.collector.wait_for('instance.create.start', 'uuid',
                                        uuid)
        end = self.collector.wait_for('instance.create.end', 'uuid', uuid)
        self.assertEqual(('building', 'active'),
                         (start['state'], end['state']))
        self.assertEqual('cell1-host1', end['host'])
        self.assertIsNotNone(end['launched_at'])
        types_ = self.collector.types_about(uuid)
        self.assertLess(types_.index('instance.create.start'),
                        types_.index('instance.create.end'))
        self.assertNotIn('instance.create.error', types_)
        # The boot flow's end: its flow is the one ``flows`` lists.
        (flow,) = self.cluster.flows(uuid)
        ended = self.collector.wait_for('flow.end', 'uuid', flow['uuid'])
        self.assertEqual(('boot', 'SUCCESS'), (ended['name'],
                                               ended['state']))
        publishers = {publisher for event_type, publisher, _p
                      in self.collector.heard
                      if event_type == 'instance.create.end'}
        self.assertEqual({'cellboot-compute:cell1-host1'}, publishers)

    def test_a_failing_build_sends_create_error_with_its_fault(self):
        self.flags(fail_hosts=['cell1-host1'], group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        error = self.collector.wait_for('instance.create.error', 'uuid',
                                        uuid)
        self.assertEqual('error', error['state'])
        fault = error['fault']['nova_object.data']
        self.assertEqual('ExceptionPayload',
                         error['fault']['nova_object.name'])
        self.assertTrue(fault['exception'])
        self.assertIn('cell1-host1', fault['exception_message'])
        # The host's failure went to the cell conductor first: the
        # reschedule event, with the host's reason.
        handed = self.collector.wait_for(
            'compute_task.build_instances.error', 'instance_uuid', uuid)
        self.assertEqual('cell1-host1', handed['host'])
        self.assertIn('fail_hosts',
                      handed['reason']['nova_object.data'][
                          'exception_message'])
        self.assertNotIn('instance.create.end',
                         self.collector.types_about(uuid))
