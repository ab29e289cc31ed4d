"""One cell's host states, loaded from its database and kept current."""

import time

from oslo_db import exception as db_exc

from cellboot import context
from cellboot.scheduler import host_batch
from cellboot.scheduler import host_state_cache
from cellboot.scheduler.resources import claims
from cellboot.scheduler.resources import providers
from tests import base
from tests.functional.scheduler import placement_base

SMALL = {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}


class _HostStateCacheTests:
    """The cache of cell1 (``self.cells[0]``), reached through its
    mapping."""

    def setUp(self):
        super().setUp()
        self.scope = host_state_cache.CellScope('cell1', self.cells[0])
        self.cache = host_state_cache.HostStateCache(self.scope)

    def cctxt(self, cell=0):
        return context.targeted_copy(self.ctx, self.cells[cell])

    def _hosts(self, cache=None):
        return {h['service_host']: h
                for h in (cache or self.cache).host_dicts()}

    def test_loads_only_the_hosts_of_its_own_cell(self):
        self.add_host('a', cell=0, vcpus=8)
        self.add_host('b', cell=1, vcpus=4)
        self.cache.refresh(self.ctx)
        self.assertEqual(
            {'a': (self.cells[0].uuid, 8.0)},
            {name: (h['cell_uuid'], h['resources']['VCPU']['capacity'])
             for name, h in self._hosts().items()})

    def test_the_cache_of_the_other_cell_loads_the_other_hosts(self):
        self.add_host('a', cell=0)
        self.add_host('b', cell=1)
        other = host_state_cache.HostStateCache(
            host_state_cache.CellScope('cell2', self.cells[1]))
        other.refresh(self.ctx)
        self.assertEqual(['b'], sorted(self._hosts(other)))

    def test_a_scope_without_mapping_reads_the_local_database(self):
        # cellboot-scheduler --cell NAME: its [database] connection (the
        # first cell's here), hosts keyed by the cell's name.
        self.add_host('a', cell=0)
        self.add_host('b', cell=1)
        local = host_state_cache.HostStateCache(
            host_state_cache.CellScope('cell1'))
        local.refresh(self.ctx)
        self.assertEqual({'a': 'cell1'},
                         {name: h['cell_uuid']
                          for name, h in self._hosts(local).items()})

    def test_refresh_summary_names_the_cell_and_counts_its_hosts(self):
        self.add_host('a')
        self.add_host('b')
        self.assertEqual({'cell': 'cell1', 'hosts': 2},
                         self.cache.refresh(self.ctx))

    def test_loads_usage_from_allocations(self):
        uuid = self.add_host('a')
        claims.claim_resources(self.cctxt(), 'vm-1', uuid, SMALL)
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

    def test_a_load_that_fails_raises_and_keeps_the_states(self):
        self.add_host('a')
        self.cache.refresh(self.ctx)
        dead = self.add_dead_cell()
        self.scope.cell_mapping = dead
        self.assertRaises(db_exc.DBError, self.cache.refresh, self.ctx)
        self.assertEqual(['a'], sorted(self._hosts()))

    def test_the_load_after_a_failed_one_reads_the_cell_again(self):
        self.add_host('a')
        self.cache.refresh(self.ctx)
        self.scope.cell_mapping = self.add_dead_cell()
        self.assertRaises(db_exc.DBError, self.cache.refresh, self.ctx)
        self.scope.cell_mapping = self.cells[0]
        self.add_host('b')
        self.cache.refresh(self.ctx)
        self.assertEqual(['a', 'b'], sorted(self._hosts()))

    def test_refresh_sees_claims_of_other_schedulers(self):
        uuid = self.add_host('a')
        self.cache.refresh(self.ctx)
        claims.claim_resources(self.cctxt(), 'vm-1', uuid, SMALL)
        self.cache.refresh(self.ctx)
        self.assertEqual(2.0, self._hosts()['a']['resources']['VCPU']['used'])

    def test_refresh_providers_rereads_usage_on_demand(self):
        uuid = self.add_host('a')
        self.cache.refresh(self.ctx)
        claims.claim_resources(self.cctxt(), 'vm-1', uuid, SMALL)
        self.cache.refresh_providers(self.ctx, [uuid])
        self.assertEqual(2.0, self._hosts()['a']['resources']['VCPU']['used'])

    def test_refresh_host_learns_a_new_provider(self):
        self.cache.refresh(self.ctx)
        uuid = self.add_host('late')
        self.cache.refresh_host(self.ctx, uuid)
        self.assertEqual(self.cells[0].uuid,
                         self._hosts()['late']['cell_uuid'])

    def test_refresh_host_forgets_a_deleted_provider(self):
        uuid = self.add_host('a')
        self.cache.refresh(self.ctx)
        providers.delete_provider(self.cctxt(), uuid)
        self.cache.refresh_host(self.ctx, uuid)
        self.assertEqual([], sorted(self._hosts()))

    def test_own_claims_are_applied_without_a_reload(self):
        uuid = self.add_host('a')
        self.cache.refresh(self.ctx)
        self.cache.add_usage(uuid, SMALL)
        self.assertEqual(6.0, self._hosts()['a']['resources']['VCPU']['free'])

    def test_every_change_moves_the_version_on(self):
        uuid = self.add_host('a')
        versions = [self.cache.version]
        self.cache.refresh(self.ctx)
        versions.append(self.cache.version)
        self.cache.add_usage(uuid, SMALL)
        versions.append(self.cache.version)
        self.cache.refresh_host(self.ctx, uuid)
        versions.append(self.cache.version)
        self.cache.remove_host(uuid)
        versions.append(self.cache.version)
        self.assertEqual(sorted(set(versions)), versions)

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
                 for i in range(len(host_batch.BASE_CLASSES))])


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
