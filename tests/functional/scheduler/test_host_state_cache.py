"""Host states loaded from real cell and API databases, and kept current."""

import time

from cellboot.scheduler import host_state
from cellboot.scheduler import host_state_cache
from cellboot.scheduler.resources import claims
from cellboot.scheduler.resources import providers
from tests import base
from tests.functional.scheduler import placement_base

SMALL = {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}


class _HostStateCacheTests:

    def setUp(self):
        super().setUp()
        self.cache = host_state_cache.HostStateCache()

    def _hosts(self):
        return {h['service_host']: h for h in self.cache.host_dicts()}

    def test_loads_the_hosts_of_every_cell_with_their_resources(self):
        self.add_host('a', cell=0, vcpus=8)
        self.add_host('b', cell=1, vcpus=4)
        self.cache.refresh(self.ctx)
        hosts = self._hosts()
        self.assertEqual(
            {'a': (self.cells[0].uuid, 8.0), 'b': (self.cells[1].uuid, 4.0)},
            {name: (h['cell_uuid'], h['resources']['VCPU']['capacity'])
             for name, h in hosts.items()})

    def test_loads_usage_from_allocations(self):
        uuid = self.add_host('a')
        claims.claim_resources(self.ctx, 'vm-1', uuid, SMALL)
        self.cache.refresh(self.ctx)
        self.assertEqual(6.0, self._hosts()['a']['resources']['VCPU']['free'])

    def test_host_without_provider_is_not_schedulable(self):
        self.add_host('a')
        self.add_host('unreported', provider=False)
        self.cache.refresh(self.ctx)
        self.assertEqual(['a'], sorted(self._hosts()))

    def test_service_state_comes_from_the_cell(self):
        self.add_host('up')
        self.add_host('disabled', disabled=True)
        self.add_host('silent', heartbeat=False)
        self.cache.refresh(self.ctx)
        hosts = self._hosts()
        self.assertEqual(
            {'up': (True, True), 'disabled': (False, True),
             'silent': (True, False)},
            {name: (h['enabled'], h['up']) for name, h in hosts.items()})

    def test_disabled_cells_are_not_loaded(self):
        self.add_host('a', cell=0)
        self.add_host('b', cell=1)
        self.cells[1].update(self.ctx, disabled=True)
        self.cache.refresh(self.ctx)
        self.assertEqual(['a'], sorted(self._hosts()))

    def test_a_dead_cell_is_skipped_and_the_others_load(self):
        self.add_host('a', cell=0)
        dead = self.add_dead_cell()
        summary = self.cache.refresh(self.ctx)
        self.assertEqual((['a'], [dead.uuid]),
                         (sorted(self._hosts()), summary['unanswered_cells']))

    def test_a_dead_cell_is_retried_at_the_next_refresh(self):
        self.add_host('a', cell=1)
        good_url = self.cells[1].database_connection
        self.cells[1].update(self.ctx, database_connection=(
            'sqlite:///' + self.state_path + '/no/such/dir/x.sqlite'))
        self.cache.refresh(self.ctx)
        self.assertEqual([], sorted(self._hosts()))
        self.cells[1].update(self.ctx, database_connection=good_url)
        self.cache.refresh(self.ctx)
        self.assertEqual(['a'], sorted(self._hosts()))

    def test_refresh_sees_claims_of_other_schedulers(self):
        uuid = self.add_host('a')
        self.cache.refresh(self.ctx)
        claims.claim_resources(self.ctx, 'vm-1', uuid, SMALL)
        self.cache.refresh(self.ctx)
        self.assertEqual(2.0, self._hosts()['a']['resources']['VCPU']['used'])

    def test_refresh_providers_rereads_usage_on_demand(self):
        uuid = self.add_host('a')
        self.cache.refresh(self.ctx)
        claims.claim_resources(self.ctx, 'vm-1', uuid, SMALL)
        self.cache.refresh_providers(self.ctx, [uuid])
        self.assertEqual(2.0, self._hosts()['a']['resources']['VCPU']['used'])

    def test_refresh_host_learns_a_new_provider(self):
        self.cache.refresh(self.ctx)
        uuid = self.add_host('late', cell=1)
        self.cache.refresh_host(self.ctx, uuid)
        self.assertEqual(self.cells[1].uuid,
                         self._hosts()['late']['cell_uuid'])

    def test_refresh_host_forgets_a_deleted_provider(self):
        uuid = self.add_host('a')
        self.cache.refresh(self.ctx)
        providers.delete_provider(self.ctx, uuid)
        self.cache.refresh_host(self.ctx, uuid)
        self.assertEqual([], sorted(self._hosts()))

    def test_own_claims_are_applied_without_a_reload(self):
        uuid = self.add_host('a')
        self.cache.refresh(self.ctx)
        self.cache.add_usage(uuid, SMALL)
        self.assertEqual(6.0, self._hosts()['a']['resources']['VCPU']['free'])

    def test_build_failures_survive_a_reload(self):
        uuid = self.add_host('a')
        self.cache.refresh(self.ctx)
        self.cache.record_build_result(uuid, succeeded=False)
        self.cache.refresh(self.ctx)
        self.assertEqual(1, self._hosts()['a']['failed_builds'])

    def test_periodic_refresh_reloads_in_the_background(self):
        self.cache.refresh(self.ctx)
        self.add_host('a')
        self.cache.start_periodic_refresh(interval=0.05)
        self.addCleanup(self.cache.stop_periodic_refresh)
        deadline = time.time() + 10
        while 'a' not in self._hosts() and time.time() < deadline:
            time.sleep(0.02)
        self.assertIn('a', self._hosts())

    def test_resources_are_in_resource_class_order(self):
        uuid = self.add_host('a', vcpus=3, memory_mb=5, disk_gb=7)
        self.cache.refresh(self.ctx)
        with self.cache.locked() as states:
            pos = states.position(uuid)
            self.assertEqual(
                [3.0, 5.0, 7.0],
                [states.capacity[i, pos]
                 for i in range(len(host_state.RESOURCE_CLASSES))])


class SQLiteHostStateCacheTest(_HostStateCacheTests, base.SQLiteMixin,
                               placement_base.FleetTestCase):
    pass


class MySQLHostStateCacheTest(_HostStateCacheTests, base.MySQLMixin,
                              placement_base.FleetTestCase):
    pass


class PostgreSQLHostStateCacheTest(_HostStateCacheTests,
                                   base.PostgreSQLMixin,
                                   placement_base.FleetTestCase):
    pass
