"""Transports: one per URL, fake:// by default, errors an operator reads."""

from oslo_utils import uuidutils

from cellboot.conf import CONF
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot import rpc
from cellboot.rpc import client
from cellboot.rpc import topics
from tests import base
from tests.functional.rpc import base as rpc_base

SECRET = 's3cretPassw0rd'


def _cell(name='cell1', transport_url='fake://', uuid=None):
    return cell_mapping.CellMapping(
        uuid=uuid or uuidutils.generate_uuid(), name=name,
        transport_url=transport_url)


class TransportTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.addCleanup(rpc.cleanup)

    def test_default_transport_url_is_fake(self):
        self.assertEqual('fake://', CONF.transport_url)

    def test_default_control_exchange_is_cellboot(self):
        self.assertEqual('cellboot', CONF.control_exchange)

    def test_same_url_gives_the_same_transport(self):
        self.assertIs(rpc.get_transport('fake://'),
                      rpc.get_transport('fake://'))

    def test_different_urls_give_different_transports(self):
        self.assertIsNot(rpc.get_transport('fake://a'),
                         rpc.get_transport('fake://b'))

    def test_api_transport_is_the_configured_url(self):
        self.flags(transport_url='fake://api')
        self.assertIs(rpc.get_transport('fake://api'),
                      rpc.get_api_transport())

    def test_local_cell_transport_is_the_configured_url(self):
        self.flags(transport_url='fake://cell')
        self.assertIs(rpc.get_transport('fake://cell'),
                      rpc.get_local_cell_transport())

    def test_cell_transport_is_the_cell_mapping_url(self):
        self.assertIs(rpc.get_transport('fake://c1'),
                      rpc.get_cell_transport(_cell(transport_url='fake://c1')))

    def test_cleanup_forgets_the_transports(self):
        first = rpc.get_transport('fake://')
        rpc.cleanup()
        self.assertIsNot(first, rpc.get_transport('fake://'))

    def test_unknown_driver_raises_invalid_transport_url(self):
        exc = self.assertRaises(exception.InvalidTransportURL,
                                rpc.get_transport, 'nosuchdriver://h/')
        self.assertIn("no messaging driver 'nosuchdriver'", str(exc))

    def test_malformed_url_raises_invalid_transport_url(self):
        exc = self.assertRaises(exception.InvalidTransportURL,
                                rpc.get_transport, 'rabbit//h')
        self.assertIn('not a transport URL', str(exc))

    def test_missing_url_raises_invalid_transport_url(self):
        exc = self.assertRaises(exception.InvalidTransportURL,
                                rpc.get_transport, None)
        self.assertIn('no transport URL is configured', str(exc))

    def test_transport_error_masks_the_password(self):
        exc = self.assertRaises(exception.InvalidTransportURL,
                                rpc.get_transport,
                                f'nosuchdriver://u:{SECRET}@h/')
        self.assertNotIn(SECRET, str(exc))

    def test_cell0_has_no_transport(self):
        cell0 = _cell('cell0', 'none:///', uuid=cell_mapping.CELL0_UUID)
        exc = self.assertRaises(exception.InvalidTransportURL,
                                rpc.get_cell_transport, cell0)
        self.assertIn('cell0 has no message bus', str(exc))

    def test_cell_transport_error_names_the_cell(self):
        cell = _cell('cell7', f'nosuchdriver://u:{SECRET}@h/')
        exc = self.assertRaises(exception.InvalidTransportURL,
                                rpc.get_cell_transport, cell)
        self.assertIn('cell cell7', str(exc))
        self.assertNotIn(SECRET, str(exc))

    def test_cell0_error_does_not_leak_its_transport_password(self):
        cell = _cell('cell0', f'rabbit://u:{SECRET}@h/',
                     uuid=cell_mapping.CELL0_UUID)
        exc = self.assertRaises(exception.InvalidTransportURL,
                                rpc.get_cell_transport, cell)
        self.assertNotIn(SECRET, str(exc))

    def test_call_that_nobody_answers_raises_rpc_timeout(self):
        rpc_client = client.RPCClient(rpc.get_transport('fake://'),
                                      'nobody-listens')
        exc = self.assertRaises(exception.RPCTimeout, rpc_client.call,
                                rpc_base.user_context(), 'ping',
                                timeout=0.2)
        self.assertIn('nobody-listens', str(exc))
        self.assertIn('fake://', str(exc))


class TopicTest(base.TestCase):

    def test_cell_conductor_topic_carries_the_cell_name(self):
        self.assertEqual('cellboot-conductor.cell1',
                         topics.cell_conductor('cell1'))

    def test_compute_topic_carries_the_cell_name(self):
        self.assertEqual('cellboot-compute.cell1', topics.compute('cell1'))

    def test_cell_topic_without_a_cell_name_is_a_configuration_error(self):
        exc = self.assertRaises(exception.ConfigurationError,
                                topics.compute, None)
        self.assertIn('[DEFAULT] cell_name', str(exc))
