"""Any resource class and traits, from the hosts' reports to placement.

Hosts report classes besides VCPU, MEMORY_MB and DISK_GB and traits with
their provider (``providers.update_provider``); flavors ask for them in
their extra specs (``resources:CLASS``, ``trait:NAME``). Both levels
honour them: a cell's scheduler per host (``ResourceFilter``,
``TraitsFilter``), the API level per cell from the aggregates. A second
scheduler of the same cell learns new classes and traits through the
change feed. On every backend.
"""

import redis

from cellboot import context
from cellboot import exception
from cellboot.scheduler import api
from cellboot.scheduler import host_state_cache
from cellboot.scheduler.resources import provider_traits
from cellboot.scheduler.resources import providers
from cellboot.scheduler.sync import redis_feed
from tests import base
from tests.functional.scheduler import placement_base


def spec(**extra_specs):
    """A request spec of the SMALL flavor with these extra specs."""
    flavor = dict(placement_base.SMALL, extra_specs=dict(extra_specs))
    return placement_base.spec(flavor)


FPGA = {'resources:CUSTOM_FPGA': '1'}
REDIS_URL = 'redis://127.0.0.1:6379/0'


class _GenericHosts:
    """Hosts with extra classes and traits, reported as a compute host
    reports them."""

    def add_generic_host(self, name, cell=0, extra=None, traits=(),
                         disk_gb=200, scheduler=None):
        uuid = self.add_host(name, cell=cell, provider=False)
        inventories = {'VCPU': {'total': 8}, 'MEMORY_MB': {'total': 16384},
                       'DISK_GB': {'total': disk_gb}}
        inventories.update({rc: {'total': total}
                            for rc, total in (extra or {}).items()})
        if scheduler is not None:
            scheduler.update_provider(self.ctx, uuid, name, inventories,
                                      traits=list(traits))
        else:
            with context.target_cell(self.ctx, self.cells[cell]) as cctxt:
                providers.update_provider(cctxt, uuid, name, inventories,
                                          traits=list(traits))
        return uuid

    def select(self, request_spec, count=1, scheduler=None):
        selections = (scheduler or self.scheduler).select_destinations(
            self.ctx, request_spec, placement_base.uuids(count))
        return [hosts[0]['compute_node_uuid'] for hosts in selections]


class _CellLevelTests(_GenericHosts):
    """One cell, its scheduler asked directly."""

    CELLS = 1

    def setUp(self):
        super().setUp()
        self.plain = self.add_generic_host('plain')
        self.fpga = self.add_generic_host(
            'fpga', extra={'CUSTOM_FPGA': 2},
            traits=['HW_CPU_X86_AVX2', 'CUSTOM_SSD'])
        self.cell = self.cell_scheduler()

    def test_fpga_requests_land_on_the_fpga_host_and_consume_them(self):
        chosen = self.select(spec(**FPGA), count=2, scheduler=self.cell)
        self.assertEqual([self.fpga, self.fpga], chosen)
        self.assertEqual(2, self.used(self.fpga)['CUSTOM_FPGA'])
        self.assertNotIn('CUSTOM_FPGA', self.used(self.plain))

    def test_the_third_of_two_fpgas_names_the_class(self):
        self.select(spec(**FPGA), count=2, scheduler=self.cell)
        error = self.assertRaises(exception.NoValidHost, self.select,
                                  spec(**FPGA), scheduler=self.cell)
        self.assertIn('no host has room for CUSTOM_FPGA=1', str(error))
        self.assertNotIn('room for VCPU', str(error))

    def test_a_class_no_host_has_fits_no_host(self):
        error = self.assertRaises(exception.NoValidHost, self.select,
                                  spec(**{'resources:VGPU': '1'}),
                                  scheduler=self.cell)
        self.assertIn('no host has room for VGPU=1', str(error))

    def test_disk_zero_drops_the_disk(self):
        tiny = self.add_generic_host('tiny-disk', disk_gb=1,
                                     traits=['CUSTOM_TINY'])
        request = spec(**{'resources:DISK_GB': '0',
                          'trait:CUSTOM_TINY': 'required'})
        [instance] = placement_base.uuids(1)
        self.cell.select_destinations(self.ctx, request, [instance])
        self.assertEqual({tiny: {'VCPU': 2, 'MEMORY_MB': 2048}},
                         self.held(instance))

    def test_a_required_trait_picks_the_hosts_having_it(self):
        chosen = self.select(spec(**{'trait:HW_CPU_X86_AVX2': 'required'}),
                             count=3, scheduler=self.cell)
        self.assertEqual({self.fpga}, set(chosen))

    def test_a_forbidden_trait_avoids_the_hosts_having_it(self):
        chosen = self.select(spec(**{'trait:CUSTOM_SSD': 'forbidden'}),
                             count=3, scheduler=self.cell)
        self.assertEqual({self.plain}, set(chosen))

    def test_traits_that_eliminate_every_host_are_named(self):
        error = self.assertRaises(
            exception.NoValidHost, self.select,
            spec(**{'trait:CUSTOM_SSD': 'required',
                    'trait:HW_CPU_X86_AVX2': 'forbidden'}),
            scheduler=self.cell)
        self.assertIn('TraitsFilter removed the last 2 host(s)', str(error))
        self.assertIn('CUSTOM_SSD', str(error))
        self.assertIn('HW_CPU_X86_AVX2', str(error))

    def test_traits_set_later_are_followed(self):
        with context.target_cell(self.ctx, self.cells[0]) as cctxt:
            provider_traits.add_traits(cctxt, self.plain, ['CUSTOM_LATE'])
        self.cell.cache.refresh_providers(self.ctx, [self.plain])
        chosen = self.select(spec(**{'trait:CUSTOM_LATE': 'required'}),
                             scheduler=self.cell)
        self.assertEqual([self.plain], chosen)

    def test_host_states_show_classes_and_traits(self):
        states = {h['uuid']: h for h in self.cell.host_states(self.ctx)}
        self.assertEqual(
            (2.0, ['CUSTOM_SSD', 'HW_CPU_X86_AVX2'], []),
            (states[self.fpga]['resources']['CUSTOM_FPGA']['capacity'],
             states[self.fpga]['traits'], states[self.plain]['traits']))


class _ApiLevelTests(_GenericHosts):
    """Two cells, the API level choosing between them by aggregates."""

    CELLS = 2

    def setUp(self):
        super().setUp()
        self.in_first = self.add_generic_host('first', cell=0,
                                              traits=['CUSTOM_SSD'])
        self.in_second = self.add_generic_host(
            'second', cell=1, extra={'CUSTOM_FPGA': 2},
            traits=['CUSTOM_SSD', 'HW_CPU_X86_AVX2'])
        self.start()

    def test_aggregates_carry_classes_and_trait_counts(self):
        view = self.scheduler.aggregates.view(self.cells[1].uuid)
        self.assertEqual(
            (2.0, {'CUSTOM_SSD': 1, 'HW_CPU_X86_AVX2': 1}),
            (view.aggregate['resources']['CUSTOM_FPGA']['max_free'],
             view.aggregate['traits']))

    def test_the_class_routes_to_the_cell_having_it(self):
        self.assertEqual([self.in_second] * 2,
                         self.select(spec(**FPGA), count=2))
        error = self.assertRaises(exception.NoValidHost, self.select,
                                  spec(**FPGA))
        self.assertIn('no cell has room for CUSTOM_FPGA=1 on one host',
                      str(error))
        self.assertNotIn('room for VCPU', str(error))

    def test_a_cell_without_a_required_trait_is_pruned(self):
        chosen = self.select(spec(**{'trait:HW_CPU_X86_AVX2': 'required'}),
                             count=2)
        self.assertEqual([self.in_second] * 2, chosen)

    def test_a_trait_no_cell_has_prunes_every_cell(self):
        error = self.assertRaises(
            exception.NoValidHost, self.select,
            spec(**{'trait:CUSTOM_NOWHERE': 'required'}))
        self.assertIn('TraitsFilter removed the last 2 cell(s)', str(error))
        self.assertIn('CUSTOM_NOWHERE', str(error))

    def test_a_forbidden_trait_every_host_has_prunes_the_cell(self):
        chosen = self.select(spec(**{'trait:HW_CPU_X86_AVX2': 'forbidden'}),
                             count=2)
        self.assertEqual([self.in_first] * 2, chosen)
        error = self.assertRaises(
            exception.NoValidHost, self.select,
            spec(**{'trait:CUSTOM_SSD': 'forbidden'}))
        self.assertIn('TraitsFilter removed the last 2 cell(s)', str(error))


class _FeedTests(_GenericHosts):
    """Two schedulers of one cell: what one learns, the other does."""

    CELLS = 1

    def setUp(self):
        super().setUp()
        self.flags(sync_pull_interval=0.0, group='scheduler')
        self.configure_feed()
        self.a, self.b = [
            api.CellScheduler(host_state_cache.CellScope('cell1',
                                                         self.cells[0]),
                              name=f'scheduler-{name}')
            for name in ('a', 'b')]
        for scheduler in (self.a, self.b):
            self.addCleanup(scheduler.stop)
        self.add_generic_host('plain')
        for scheduler in (self.a, self.b):
            scheduler.start(self.ctx, refresh_interval=0)

    def configure_feed(self):
        """The default feed: the cell database's table."""

    def test_a_new_class_and_trait_reported_to_one_reach_the_other(self):
        fpga = self.add_generic_host('fpga', extra={'CUSTOM_FPGA': 2},
                                     traits=['CUSTOM_SSD'], scheduler=self.a)
        request = spec(**dict(FPGA, **{'trait:CUSTOM_SSD': 'required'}))
        self.assertEqual([fpga], self.select(request, scheduler=self.b))
        # A's turn: it learns B's claim of the new class from the feed.
        self.assertEqual([fpga], self.select(request, scheduler=self.a))
        self.assertRaises(exception.NoValidHost, self.select, request,
                          scheduler=self.b)
        self.assertEqual((0, 0), (self.a.manager.failed_claims,
                                  self.b.manager.failed_claims))

    def test_traits_changed_behind_both_reach_them_by_the_feed(self):
        [host] = [h['uuid'] for h in self.a.host_states(self.ctx)]
        with context.target_cell(self.ctx, self.cells[0]) as cctxt:
            provider_traits.set_traits(cctxt, host, ['CUSTOM_GOLD'])
        request = spec(**{'trait:CUSTOM_GOLD': 'required'})
        self.assertEqual([host], self.select(request, scheduler=self.b))
        with context.target_cell(self.ctx, self.cells[0]) as cctxt:
            provider_traits.remove_traits(cctxt, host, ['CUSTOM_GOLD'])
        self.assertRaises(exception.NoValidHost, self.select, request,
                          scheduler=self.a)


class RedisFeedTest(_FeedTests, placement_base.FleetTestCase,
                    base.SQLiteMixin):
    """A new class and trait through a Redis stream: announced by the
    scheduler that took the report, after its commit. (A change written
    behind every scheduler's back reaches a Redis feed only at the next
    reload: only the database feed is written in its transaction.)"""

    test_traits_changed_behind_both_reach_them_by_the_feed = None

    def configure_feed(self):
        self.flags(sync_backend='redis', sync_redis_url=REDIS_URL,
                   group='scheduler')
        self.addCleanup(redis.Redis.from_url(REDIS_URL).delete,
                        redis_feed.KEY_PREFIX + self.cells[0].uuid)


class SQLiteCellLevelTest(_CellLevelTests, placement_base.FleetTestCase,
                          base.SQLiteMixin):
    pass


class MySQLCellLevelTest(_CellLevelTests, placement_base.FleetTestCase,
                         base.MySQLMixin):
    pass


class PostgreSQLCellLevelTest(_CellLevelTests, placement_base.FleetTestCase,
                              base.PostgreSQLMixin):
    pass


class SQLiteApiLevelTest(_ApiLevelTests, placement_base.FleetTestCase,
                         base.SQLiteMixin):
    pass


class MySQLApiLevelTest(_ApiLevelTests, placement_base.FleetTestCase,
                        base.MySQLMixin):
    pass


class PostgreSQLApiLevelTest(_ApiLevelTests, placement_base.FleetTestCase,
                             base.PostgreSQLMixin):
    pass


class SQLiteFeedTest(_FeedTests, placement_base.FleetTestCase,
                     base.SQLiteMixin):
    pass


class MySQLFeedTest(_FeedTests, placement_base.FleetTestCase,
                    base.MySQLMixin):
    pass


class PostgreSQLFeedTest(_FeedTests, placement_base.FleetTestCase,
                         base.PostgreSQLMixin):
    pass
