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

VCPU = host_state.VCPU

PROVIDERS = [Provider(7, 'p7', 'h7', 'c1', 'az1', 3),
             Provider(9, 'p9', 'h9', 'c1', 'az2', 5)]
INVENTORIES = [Inventory(9, 'VCPU', 10, 2, 2.0, 1, 10, 1),
               Inventory(7, 'VCPU', 4, 0, 1.0, 1, 4, 1),
               Inventory(7, 'CUSTOM_GPU', 1, 0, 1.0, 1, 1, 1)]
USAGES = [Usage(9, 'VCPU', 6)]


def _table(providers=PROVIDERS, inventories=INVENTORIES, usages=USAGES,
           chunk_rows=100):
    """A ProviderTable fed like ``usage.load_all`` feeds it."""
    table = host_batch.ProviderTable()
    for add, rows in ((table.add_providers, providers),
                      (table.add_inventories, inventories),
                      (table.add_usages, usages)):
        for start in range(0, len(rows), chunk_rows):
            add(rows[start:start + chunk_rows])
    return table


def _vcpu(table):
    return (list(table.columns['capacity'][VCPU]),
            list(table.columns['used'][VCPU]))


class ProviderTableTest(test_base.TestCase):

    def test_rows_become_columns_by_provider(self):
        table = _table()
        self.assertEqual(
            ([4.0, 16.0], [0.0, 6.0], ['az1', 'az2'], [3, 5]),
            _vcpu(table) + (table.zones, table.generations))

    def test_chunks_of_one_row_give_the_same_columns(self):
        self.assertEqual(_vcpu(_table()), _vcpu(_table(chunk_rows=1)))

    def test_providers_out_of_id_order_keep_their_own_rows(self):
        table = _table(providers=PROVIDERS[::-1])
        self.assertEqual(([16.0, 4.0], [6.0, 0.0]), _vcpu(table))

    def test_rows_of_a_provider_not_read_are_skipped(self):
        table = _table(inventories=INVENTORIES + [
            Inventory(8, 'VCPU', 99, 0, 1.0, 1, 99, 1)],
            usages=USAGES + [Usage(11, 'VCPU', 1)])
        self.assertEqual(([4.0, 16.0], [0.0, 6.0]), _vcpu(table))

    def test_no_provider_gives_empty_columns(self):
        table = _table(providers=[], usages=[Usage(9, 'VCPU', 6)])
        self.assertEqual((3, 0), table.columns['used'].shape)

    def test_rows_of_one_zone_share_its_string(self):
        zone = ''.join(['a', 'z1'])
        table = _table(providers=[Provider(7, 'p7', 'h7', 'c1', 'az1', 3),
                                  Provider(9, 'p9', 'h9', 'c1', zone, 5)])
        self.assertIs(table.zones[0], table.zones[1])

    def test_a_class_beyond_the_flavor_ones_gets_a_row_after_them(self):
        columns = _table().columns
        self.assertEqual(
            (['VCPU', 'MEMORY_MB', 'DISK_GB', 'CUSTOM_GPU'], [1.0, 0.0]),
            (columns.classes, list(columns['capacity'][3])))

    def test_traits_become_one_boolean_row_each(self):
        table = _table()
        table.add_traits([(9, 'CUSTOM_SSD'), (7, 'HW_CPU_X86_AVX2'),
                          (9, 'HW_CPU_X86_AVX2'), (8, 'CUSTOM_LOST')])
        batch = host_batch.HostBatch(table)
        batch.add_host('p9', 'h9', 'h9', 'c1', None, False, None, 0,
                       table.index['p9'])
        names, matrix = batch.trait_columns()
        self.assertEqual((['CUSTOM_SSD', 'HW_CPU_X86_AVX2'], [[True], [True]]),
                         (names, matrix.tolist()))

    def test_hosts_take_their_providers_columns(self):
        table = _table()
        batch = host_batch.HostBatch(table)
        batch.add_host('p9', 'h9', 'h9', 'c1', 'az2', False, None, 5,
                       table.index['p9'])
        self.assertEqual(16.0, batch.resource_columns()['capacity'][VCPU, 0])

    def test_states_from_a_table_keep_each_class_a_contiguous_row(self):
        table = _table()
        batch = host_batch.HostBatch(table)
        for uuid in ('p9', 'p7'):
            batch.add_host(uuid, 'h', 'h', 'c1', None, False, None, 0,
                           table.index[uuid])
        states = host_state.HostStates.from_batch(batch)
        self.assertEqual(
            [True] * 6,
            [getattr(states, name).flags['C_CONTIGUOUS'] for name in
             ('capacity', 'used', 'free', 'min_unit', 'max_unit',
              'step_size')])


class HostDictTest(test_base.TestCase):

    def test_dict_and_row_give_the_same_capacity(self):
        inventory = {'total': 10, 'reserved': 2, 'allocation_ratio': 2.0}
        columns = host_batch.one_host_columns({'VCPU': inventory},
                                              {'VCPU': 6})
        table = _table()
        self.assertEqual(
            (table.columns['capacity'][VCPU, 1],
             table.columns['used'][VCPU, 1]),
            (columns['capacity'][VCPU, 0], columns['used'][VCPU, 0]))

    def test_node_named_like_its_host_shares_the_string(self):
        batch = host_batch.HostBatch()
        host = ''.join(['h', 'ost-1'])
        batch.add_host('u', host, 'host-1', 'c1', None, False, None, 0)
        self.assertIs(batch.service_hosts[0], batch.nodenames[0])
