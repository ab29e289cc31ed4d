"""Servers that take a class from a shared pool, on every backend.

Two cells whose hosts report no DISK_GB (``local_gb=0``) and one shared
DISK_GB pool serving both: a server asking a root disk lands in one of
them and its disk comes from the pool; boots beyond the pool's capacity
end in cell0 (NoValidHost naming DISK_GB) with nothing over-committed;
a conductor killed at the boundary of the host claim and the pool claim
leaks nothing once the next one resumes the flow; a delete gives the
pool's share back.
"""

import fixtures
from oslo_utils import uuidutils
from taskflow import states

from cellboot.api import server_records
from cellboot.builds import fates
from cellboot.conductor import manager
from cellboot.conductor import pool_orphans
from cellboot import exception
from cellboot.objects import fault_messages
from cellboot.scheduler.pools import claims as pool_claims
from cellboot.scheduler.pools import records
from tests import base
from tests.functional.boot import test_resume
from tests.functional import cluster
from tests.functional import invariants

ROOT_GB = cluster.FLAVOR['root_gb']


class _PoolBootTests:

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster.Cluster(
            cells=2, hosts_per_cell=1, local_gb=0, backend=self.BACKEND))
        self.ctx = self.cluster.ctx

    def make_pool(self, servers):
        """A DISK_GB pool with room for ``servers`` servers, both cells."""
        pool = records.create_pool(
            self.ctx, 'shared-disk', {'DISK_GB': {'total': ROOT_GB * servers}},
            cells=['cell1', 'cell2'])
        self.cluster.scheduler.pools.invalidate()
        return pool

    def usage(self):
        return records.get_pool(self.ctx, 'shared-disk')['usages']['DISK_GB']

    def assertClean(self):
        self.assertEqual([], invariants.check_invariants(self.ctx))

    def test_a_server_takes_its_disk_from_the_pool(self):
        pool = self.make_pool(2)
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        cell, instance = self.cluster.find(uuid)
        self.assertEqual('active', instance.vm_state)
        self.assertIn(cell.name, ('cell1', 'cell2'))
        (host,) = self.cluster.allocations(uuid).values()
        self.assertNotIn('DISK_GB', host)
        self.assertEqual({pool['uuid']: {'DISK_GB': ROOT_GB}},
                         pool_claims.holdings(self.ctx, uuid))
        self.assertClean()
        server_records.delete(self.ctx, uuid, self.cluster.scheduler)
        self.cluster.wait_for_quiet()
        self.assertEqual((0, {}), (self.usage(),
                                   pool_claims.holdings(self.ctx, uuid)))
        self.assertClean()

    def test_without_a_pool_the_server_finds_no_host(self):
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        cell, instance = self.cluster.find(uuid)
        self.assertEqual(('cell0', 'error'), (cell.name, instance.vm_state))
        fault = self.cluster.fault(uuid)
        self.assertEqual(fault_messages.NO_VALID_HOST, fault.message)
        self.assertIn('DISK_GB', fault.details)
        self.assertClean()

    def test_boots_beyond_the_pool_never_over_commit_it(self):
        self.make_pool(3)
        uuids = [uuid for _ in range(6) for uuid in self.cluster.boot()]
        self.cluster.wait_for_quiet()
        where = [self.cluster.find(uuid) for uuid in uuids]
        active = [inst.uuid for cell, inst in where
                  if inst.vm_state == 'active']
        buried = [inst.uuid for cell, inst in where if cell.name == 'cell0']
        self.assertEqual((3, 3), (len(active), len(buried)))
        self.assertEqual(3 * ROOT_GB, self.usage())
        for uuid in buried:
            self.assertIn('DISK_GB', self.cluster.fault(uuid).details)
        self.assertClean()

    def test_room_given_back_is_used_at_once(self):
        # The pools are read every few seconds; a share given back, by
        # this scheduler or behind it, must not cost a refusal.
        self.make_pool(1)
        pools = self.cluster.scheduler.pools
        # As if every step below came within the view's age.
        pools.max_age = 3600
        (first,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        pools.invalidate()
        pools.pools(self.ctx)  # read full
        server_records.delete(self.ctx, first, self.cluster.scheduler)
        self.cluster.wait_for_quiet()
        (second,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        self.assertEqual('active', self.cluster.find(second)[1].vm_state)
        # Behind it: another scheduler's release; this one's view still
        # says full until a refusal makes it read again.
        pools.invalidate()
        pools.pools(self.ctx)  # read full
        pool_claims.release(self.ctx, second)
        (third,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        self.assertEqual('active', self.cluster.find(third)[1].vm_state)

    def test_the_sweep_gives_back_shares_the_cells_could_not(self):
        # A server failed by its cell (a compute host, a cell conductor)
        # has its host claims released by the cell's scheduler, which
        # knows no pool; and a share whose server never existed.
        pool = self.make_pool(3)
        (failed,) = self.cluster.boot()
        (kept,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        cell, _instance = self.cluster.find(failed)
        fates.fail_in_cell(
            self.ctx, self.cluster.cell_schedulers[cell.name], failed, cell,
            exception.CellbootException(message='the host broke'),
            expected_vm_state='active')
        absent = uuidutils.generate_uuid()
        pool_claims.claim(self.ctx, absent, [
            {'uuid': pool['uuid'], 'resources': {'DISK_GB': ROOT_GB}}])
        self.assertEqual(3 * ROOT_GB, self.usage())
        sweep = pool_orphans.PoolOrphans(self.cluster.super_conductor)
        self.assertEqual({'released': 0}, sweep.sweep_once(self.ctx))
        self.useFixture(fixtures.MockPatchObject(pool_orphans,
                                                 'ORPHAN_GRACE', -60))
        self.assertEqual({'released': 2}, sweep.sweep_once(self.ctx))
        self.assertEqual(({}, {}, {pool['uuid']: {'DISK_GB': ROOT_GB}}),
                         tuple(pool_claims.holdings(self.ctx, uuid)
                               for uuid in (failed, absent, kept)))
        self.assertClean()

    def _kill_at(self, atom, state=states.SUCCESS):
        dying = manager.SuperConductorManager(
            scheduler=self.cluster.scheduler)
        dying.runner.owner = 'conductor:1'
        dying.runner.flow_listeners = [
            lambda engine: test_resume.KillAfter(engine, atom, state)]
        build_requests, specs = self.cluster.build_request(1)
        self.assertRaises(test_resume.Killed,
                          dying.schedule_and_build_instances, self.ctx,
                          build_requests, specs)
        return build_requests[0]['instance_uuid']

    def _resume(self):
        survivor = manager.SuperConductorManager(
            scheduler=self.cluster.scheduler)
        survivor.runner.owner = 'conductor:2'
        self.addCleanup(survivor.stop)
        self.assertEqual(1, survivor.start(self.ctx))
        self.cluster.wait_for_quiet()

    def _assert_resumed_once(self, uuid):
        _cell, instance = self.cluster.find(uuid)
        self.assertEqual('active', instance.vm_state)
        self.assertEqual(ROOT_GB, self.usage())
        self.assertEqual(1, len(pool_claims.holdings(self.ctx, uuid)))
        self.assertClean()

    def test_killed_after_the_host_claim_leaks_nothing(self):
        self.make_pool(1)
        uuid = self._kill_at('schedule')
        self._resume()
        self._assert_resumed_once(uuid)

    def test_killed_while_claiming_the_pool_leaks_nothing(self):
        self.make_pool(1)
        uuid = self._kill_at('claim-pool', states.RUNNING)
        self._resume()
        self._assert_resumed_once(uuid)

    def test_killed_after_the_pool_claim_leaks_nothing(self):
        # The pool has room for one: a share claimed twice would leave
        # the resumed claim no room, and the server would be buried.
        self.make_pool(1)
        uuid = self._kill_at('claim-pool')
        self._resume()
        self._assert_resumed_once(uuid)


class SQLitePoolBootTest(_PoolBootTests, base.SQLiteMixin, base.TestCase):
    pass


class MySQLPoolBootTest(_PoolBootTests, base.MySQLMixin, base.TestCase):
    pass


class PostgreSQLPoolBootTest(_PoolBootTests, base.PostgreSQLMixin,
                             base.TestCase):
    pass
