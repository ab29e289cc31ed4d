"""Transport URLs are compared as the buses they reach, not as strings."""

from cellboot import exception
from cellboot.rpc import buses
from tests import base

RABBIT = 'rabbit://guest:guest@127.0.0.1:5672/cell1'


def same_bus(url, other_url):
    """True when the two transport URLs reach the same queues."""
    return buses.of_url(url).same_as(buses.of_url(other_url))


class SameBusTest(base.TestCase):

    def assertSameBus(self, url, other):
        self.assertTrue(same_bus(url, other), (url, other))
        self.assertTrue(same_bus(other, url), (other, url))

    def assertOtherBus(self, url, other):
        self.assertFalse(same_bus(url, other), (url, other))
        self.assertFalse(same_bus(other, url), (other, url))

    def test_the_same_url_is_the_same_bus(self):
        self.assertSameBus(RABBIT, RABBIT)

    def test_other_credentials_are_the_same_bus(self):
        self.assertSameBus(RABBIT, 'rabbit://cell1:s3cret@127.0.0.1:5672/'
                                   'cell1')

    def test_the_default_port_written_or_not_is_the_same_bus(self):
        self.assertSameBus(RABBIT, 'rabbit://guest:guest@127.0.0.1/cell1')

    def test_a_host_name_and_its_address_are_the_same_bus(self):
        self.assertSameBus(RABBIT, 'rabbit://guest:guest@LocalHost:5672/'
                                   'cell1')

    def test_a_query_string_is_the_same_bus(self):
        self.assertSameBus(RABBIT, RABBIT + '?heartbeat=30&ssl=0')

    def test_every_spelling_of_the_default_vhost_is_the_same_bus(self):
        for url in ('rabbit://g:g@127.0.0.1:5672//',
                    'rabbit://g:g@127.0.0.1:5672/%2F',
                    'rabbit://g:g@127.0.0.1:5672'):
            self.assertSameBus('rabbit://g:g@127.0.0.1:5672/', url)

    def test_a_cluster_sharing_a_broker_is_the_same_bus(self):
        self.assertSameBus(
            'rabbit://g:g@mq2.invalid:5672,g:g@127.0.0.1:5672/cell1', RABBIT)

    def test_another_vhost_is_another_bus(self):
        self.assertOtherBus(RABBIT, 'rabbit://guest:guest@127.0.0.1:5672/'
                                    'cell2')
        self.assertOtherBus(RABBIT, 'rabbit://guest:guest@127.0.0.1:5672/'
                                    'Cell1')

    def test_another_port_is_another_bus(self):
        self.assertOtherBus(RABBIT, 'rabbit://guest:guest@127.0.0.1:5673/'
                                    'cell1')

    def test_other_brokers_are_another_bus(self):
        self.assertOtherBus(RABBIT, 'rabbit://guest:guest@mq.invalid:5672/'
                                    'cell1')

    def test_another_driver_is_another_bus(self):
        self.assertOtherBus('fake://', RABBIT)

    def test_in_process_buses_differ_by_virtual_host_and_host(self):
        self.assertSameBus('fake://', 'fake:///')
        self.assertSameBus('fake://', 'fake://user:pass@/')
        self.assertOtherBus('fake://', 'fake:///cell1')
        self.assertOtherBus('fake:///cell1', 'fake:///cell2')
        self.assertOtherBus('fake://', 'fake://cell1')

    def test_in_process_keys_are_equal_for_one_bus(self):
        self.assertEqual(buses.of_url('fake://a:b@/x').key,
                         buses.of_url('fake:///x').key)
        self.assertNotEqual(buses.of_url('fake:///x').key,
                            buses.of_url('fake:///y').key)

    def test_a_url_that_does_not_parse_is_invalid_and_masked(self):
        exc = self.assertRaises(exception.InvalidTransportURL, buses.of_url,
                                'rabbit://u:s3cret@h:notaport/')
        self.assertNotIn('s3cret', str(exc))
