"""Reading what the claims left: usages, inventories, allocations."""

from oslo_utils import uuidutils

from cellboot.scheduler.resources import claims
from cellboot.scheduler.resources import usage
from tests import base
from tests.functional.scheduler import resources_base as rb


class _UsageTests:

    def setUp(self):
        super().setUp()
        self.rp1 = self.create_provider(name='host1')
        self.rp2 = self.create_provider({'VCPU': {'total': 4}}, name='host2')
        self.consumer = uuidutils.generate_uuid()
        claims.claim_resources(self.ctx, self.consumer, self.rp1, rb.SMALL)
        claims.claim_resources(self.ctx, uuidutils.generate_uuid(), self.rp1,
                               {'VCPU': 1})

    def test_usages_sum_consumers_and_show_idle_classes_as_zero(self):
        self.assertEqual(
            {self.rp1: {'VCPU': 3, 'MEMORY_MB': 2048, 'DISK_GB': 20},
             self.rp2: {'VCPU': 0}},
            usage.get_usages(self.ctx))

    def test_usages_of_chosen_providers(self):
        self.assertEqual({self.rp2: {'VCPU': 0}},
                         usage.get_usages(self.ctx, [self.rp2]))

    def test_provider_without_inventory_has_empty_usage(self):
        rp = self.create_provider({}, name='bare')
        self.assertEqual({rp: {}}, usage.get_usages(self.ctx, [rp]))

    def test_inventories_of_chosen_providers(self):
        self.assertEqual(
            {self.rp2: {'VCPU': {'total': 4, 'reserved': 0,
                                 'allocation_ratio': 1.0, 'min_unit': 1,
                                 'max_unit': 4, 'step_size': 1}}},
            usage.get_inventories(self.ctx, [self.rp2]))

    def test_inventories_of_every_provider(self):
        inventories = usage.get_inventories(self.ctx)
        self.assertEqual({self.rp1, self.rp2}, set(inventories))
        self.assertEqual(sorted(rb.HOST_INVENTORY),
                         sorted(inventories[self.rp1]))

    def test_allocations_for_consumer(self):
        claims.claim_resources(self.ctx, self.consumer, self.rp2,
                               {'VCPU': 1})
        self.assertEqual({self.rp1: rb.SMALL, self.rp2: {'VCPU': 1}},
                         usage.get_allocations_for_consumer(self.ctx,
                                                            self.consumer))

    def test_allocations_for_unknown_consumer_are_empty(self):
        self.assertEqual({}, usage.get_allocations_for_consumer(
            self.ctx, uuidutils.generate_uuid()))

    def _load_all(self, chunk_rows=usage.LOAD_CHUNK_ROWS):
        sink = _Recorder()
        usage.load_all(self.ctx, sink, chunk_rows)
        return sink

    def test_load_all_returns_providers_with_zone_and_generation(self):
        providers = {row.uuid: tuple(row)[1:]
                     for row in self._load_all().rows('providers')}
        self.assertEqual(
            {self.rp1: (self.rp1, 'host1', 'nova', 3),
             self.rp2: (self.rp2, 'host2', 'nova', 1)},
            providers)

    def test_load_all_inventories_and_usages_join_on_provider_id(self):
        sink = self._load_all()
        ids = {row.id: row.uuid for row in sink.rows('providers')}
        inventories = {(ids[row.provider_id], row.resource_class):
                       tuple(row)[2:] for row in sink.rows('inventories')}
        self.assertEqual((4, 0, 1.0, 1, 4, 1),
                         inventories[(self.rp2, 'VCPU')])
        self.assertEqual(4, len(inventories))
        usages = {(ids[row.provider_id], row.resource_class): row.used
                  for row in sink.rows('usages')}
        self.assertEqual({(self.rp1, 'VCPU'): 3,
                          (self.rp1, 'MEMORY_MB'): 2048,
                          (self.rp1, 'DISK_GB'): 20}, usages)
        self.assertIs(int, type(usages[(self.rp1, 'VCPU')]))

    def test_load_all_hands_rows_over_in_chunks_of_chunk_rows(self):
        sink = self._load_all(chunk_rows=2)
        self.assertEqual([2, 2], [len(chunk) for chunk in
                                  sink.chunks['inventories']])

    def test_load_all_gives_every_provider_before_any_resource(self):
        sink = self._load_all(chunk_rows=1)
        self.assertEqual(['providers'] * 2 + ['inventories'] * 4
                         + ['usages'] * 3, sink.calls)

    def test_load_all_chunks_make_up_every_row(self):
        self.assertEqual(
            sorted(tuple(row) for row in self._load_all().rows('usages')),
            sorted(tuple(row) for row in
                   self._load_all(chunk_rows=1).rows('usages')))


class _Recorder:
    """A ``usage.load_all`` sink that keeps every chunk it is given."""

    def __init__(self):
        self.calls = []
        self.chunks = {'providers': [], 'inventories': [], 'usages': [],
                       'traits': []}

    def _add(self, kind, rows):
        self.calls.append(kind)
        self.chunks[kind].append(list(rows))

    def add_providers(self, rows):
        self._add('providers', rows)

    def add_inventories(self, rows):
        self._add('inventories', rows)

    def add_usages(self, rows):
        self._add('usages', rows)

    def add_traits(self, rows):
        self._add('traits', rows)

    def rows(self, kind):
        return [row for chunk in self.chunks[kind] for row in chunk]


class SQLiteUsageTest(_UsageTests, base.SQLiteMixin, rb.ResourcesTestCase):
    pass


class MySQLUsageTest(_UsageTests, base.MySQLMixin, rb.ResourcesTestCase):
    pass


class PostgreSQLUsageTest(_UsageTests, base.PostgreSQLMixin,
                          rb.ResourcesTestCase):
    pass
