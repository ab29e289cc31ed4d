"""Provider rows and host dicts become resource columns one way."""

import collections

from cellboot.scheduler import host_batch
from cellboot.scheduler import host_state
from tests import base as test_base

Provider = collections.namedtuple(
    'Provider', 'id uuid name cell_uuid availability_zone generation')
Inventory = collections.namedtuple(
    'Inventory', 'provider_id resource_class total reserved '
                 'allocation_ratio min_unit max_unit step_size')
Usage = collections.namedtuple('Usage', 'provider_id resource_class used')
Snapshot = collections.namedtuple('Snapshot', 'providers inventories usages')

VCPU = host_state.VCPU


def _snapshot():
    return Snapshot(
        providers=[Provider(7, 'p7', 'h7', 'c1', 'az1', 3),
                   Provider(9, 'p9', 'h9', 'c1', 'az2', 5)],
        inventories=[Inventory(9, 'VCPU', 10, 2, 2.0, 1, 10, 1),
                     Inventory(7, 'VCPU', 4, 0, 1.0, 1, 4, 1),
                     Inventory(7, 'CUSTOM_GPU', 1, 0, 1.0, 1, 1, 1)],
        usages=[Usage(9, 'VCPU', 6)])


class ProviderTableTest(test_base.TestCase):

    def test_rows_become_columns_by_provider(self):
        table = host_batch.ProviderTable(_snapshot())
        self.assertEqual(
            ([4.0, 16.0], [0.0, 6.0], ['az1', 'az2'], [3, 5]),
            (list(table.columns['capacity'][VCPU]),
             list(table.columns['used'][VCPU]), table.zones,
             table.generations))

    def test_classes_the_scheduler_does_not_track_are_ignored(self):
        table = host_batch.ProviderTable(_snapshot())
        self.assertEqual((3, 2), table.columns['capacity'].shape)

    def test_hosts_take_their_providers_columns(self):
        table = host_batch.ProviderTable(_snapshot())
        batch = host_batch.HostBatch(table)
        batch.add_host('p9', 'h9', 'h9', 'c1', 'az2', False, None, 5,
                       table.index['p9'])
        self.assertEqual(16.0, batch.resource_columns()['capacity'][VCPU, 0])


class HostDictTest(test_base.TestCase):

    def test_dict_and_row_give_the_same_capacity(self):
        inventory = {'total': 10, 'reserved': 2, 'allocation_ratio': 2.0}
        columns = host_batch.one_host_columns({'VCPU': inventory},
                                              {'VCPU': 6})
        table = host_batch.ProviderTable(_snapshot())
        self.assertEqual(
            (table.columns['capacity'][VCPU, 1],
             table.columns['used'][VCPU, 1]),
            (columns['capacity'][VCPU, 0], columns['used'][VCPU, 0]))

    def test_node_named_like_its_host_shares_the_string(self):
        batch = host_batch.HostBatch()
        host = ''.join(['h', 'ost-1'])
        batch.add_host('u', host, 'host-1', 'c1', None, False, None, 0)
        self.assertIs(batch.service_hosts[0], batch.nodenames[0])
