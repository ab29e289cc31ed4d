"""A notification never fails or holds up its caller.

The promise of ``cellboot.notifications``: whatever happens to the bus
(a broker that is down) or to the payload (a value it cannot read),
the event functions return at once and raise nothing; what could not
be sent is logged and dropped, within ``[notifications] retry``.
"""

import time
import types

import fixtures

from cellboot import notifications
from cellboot.notifications import sender
from tests import base

INSTANCE = types.SimpleNamespace(uuid='3f1c7d7e-4a3c-4c44-9e0b-86b41e2fb4a1',
                                 vm_state='active', flavor={})


class SenderTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name='cellboot.notifications'))
        self.bus_log = self.useFixture(fixtures.FakeLogger(
            name='oslo_messaging.notify.messaging'))
        self.flags(enabled=True, retry=0, group='notifications')

    def test_a_broker_that_is_down_neither_raises_nor_blocks(self):
        # Nothing listens on port 1: every connection is refused.
        self.flags(transport_url='rabbit://guest:guest@127.0.0.1:1/',
                   group='oslo_messaging_notifications')
        started = time.monotonic()
        for _ in range(5):
            notifications.instance_create(None, INSTANCE, 'end')
        self.assertLess(time.monotonic() - started, 0.5)
        self.assertTrue(sender.flush(timeout=60),
                        'the sender is stuck on a broker that is down')
        # oslo.messaging's driver logs what it could not send (it
        # raises nothing to the sender).
        self.assertIn('Could not send notification to '
                      'versioned_notifications', self.bus_log.output)

    def test_a_payload_that_cannot_be_built_is_logged(self):
        broken = types.SimpleNamespace(vm_state='active')  # no uuid
        notifications.instance_create(None, broken, 'start')
        self.assertIn('Could not build notification instance_create',
                      self.log.output)

    def test_an_unknown_flow_event_is_logged_not_raised(self):
        notifications.flow_event(None, INSTANCE.uuid, 'exploded')
        self.assertIn('Could not build notification flow_event',
                      self.log.output)
