"""A compute host's notifications, from a whole deployment in-process.

What ``sender`` would put on the bus is caught (the bus itself is
``test_rabbit``'s subject): a build the host aborts sends one
``instance.create.error``, from the host, with the driver's reason; an
error the driver did not mean sends ``compute.exception`` before the
build is rescheduled.
"""

import threading
from unittest import mock

from cellboot.notifications import sender
from tests import base
from tests.functional import cluster

HOST = 'cell1-host1'


class ComputeEventsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(enabled=True, group='notifications')
        self.sent = []
        self._lock = threading.Lock()
        patcher = mock.patch.object(sender, 'send', self._record)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.cluster = self.useFixture(cluster.Cluster(cells=1,
                                                       hosts_per_cell=1))

    def _record(self, ctxt, publisher_id, event_type, priority, payload):
        with self._lock:
            self.sent.append((publisher_id, event_type,
                              payload['nova_object.data']))

    def _events(self, event_type):
        with self._lock:
            return [(publisher, data) for publisher, kind, data in self.sent
                    if kind == event_type]

    def test_an_aborted_build_sends_one_create_error_from_its_host(self):
        self.flags(fail_hosts=[HOST], fail_mode='abort', group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        ((publisher, error),) = self._events('instance.create.error')
        self.assertEqual((f'cellboot-compute:{HOST}', uuid, 'error', HOST),
                         (publisher, error['uuid'], error['state'],
                          error['host']))
        fault = error['fault']['nova_object.data']
        self.assertEqual('BuildAbortedFailure', fault['exception'])
        self.assertIn('fail_hosts', fault['exception_message'])
        # Taken, then failed: never ended.
        self.assertEqual(1, len(self._events('instance.create.start')))
        self.assertEqual([], self._events('instance.create.end'))

    def test_an_unexpected_driver_error_sends_compute_exception(self):
        driver = self.cluster.computes[HOST].driver
        with mock.patch.object(driver, 'spawn',
                               side_effect=RuntimeError('disk on fire')):
            (uuid,) = self.cluster.boot()
            self.cluster.wait_for_quiet()
        ((publisher, exc),) = self._events('compute.exception')
        self.assertEqual((f'cellboot-compute:{HOST}', 'RuntimeError',
                          'disk on fire'),
                         (publisher, exc['exception'],
                          exc['exception_message']))
        # Rescheduled (no alternate left in a one-host cell), then ended.
        ((_p, handed),) = self._events('compute_task.build_instances.error')
        self.assertEqual((uuid, HOST), (handed['instance_uuid'],
                                        handed['host']))
        ((_p, error),) = self._events('instance.create.error')
        self.assertEqual(uuid, error['uuid'])
