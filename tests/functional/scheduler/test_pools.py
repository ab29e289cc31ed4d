"""Shared pools in the API database: records and claims, on every backend.

Pools are claimed by the host claims' code on the API store, so the
race below is the host race's promise made for a pool: exactly its
capacity placed, whatever the number of threads.
"""

import threading

from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot import exception
from cellboot.db.api import models as api_models
from cellboot.scheduler.pools import claims as pool_claims
from cellboot.scheduler.pools import records
from cellboot.scheduler.resources import contention
from tests import base
from tests.functional.scheduler import resources_base as rb

DISK = {'DISK_GB': {'total': 1000, 'reserved': 100}}


class PoolTestCase(rb.ResourcesTestCase):
    """The API database, with cell1 (in zone ``region``) and cell2."""

    def setUp(self):
        super().setUp()
        self.cell2_uuid = self.create_cell('cell2')
        self.api = sa.create_engine(self.dbs.api_url)
        self.addCleanup(self.api.dispose)
        zones = api_models.Zone.__table__
        cells = api_models.CellMapping.__table__
        with self.api.begin() as conn:
            zone_id = conn.execute(sa.insert(zones).values(
                uuid=uuidutils.generate_uuid(), name='region',
            )).inserted_primary_key[0]
            conn.execute(sa.update(cells).where(
                cells.c.uuid == self.cell_uuid).values(zone_id=zone_id))

    def pool(self, name='shared', inventories=DISK, traits=(), **scope):
        scope = scope or {'cells': ['cell1', 'cell2']}
        return records.create_pool(self.ctx, name, inventories,
                                   traits=traits, **scope)


class _RecordTests:

    def test_create_show_list(self):
        pool = self.pool(traits=['CUSTOM_FAST'])
        self.assertEqual('shared', pool['name'])
        self.assertEqual({'DISK_GB': 900}, pool['capacity'])
        self.assertEqual({'DISK_GB': 0}, pool['usages'])
        self.assertEqual(['CUSTOM_FAST'], pool['traits'])
        self.assertEqual(['cell1', 'cell2'], pool['cells'])
        self.assertEqual(sorted([self.cell_uuid, self.cell2_uuid]),
                         pool['served_cells'])
        self.assertEqual(pool, records.get_pool(self.ctx, 'shared'))
        self.assertEqual(pool, records.get_pool(self.ctx, pool['uuid']))
        self.assertEqual([pool], records.list_pools(self.ctx))

    def test_zone_scope_serves_the_cells_below(self):
        pool = self.pool(zones=['region'])
        self.assertEqual(['region'], pool['zones'])
        self.assertEqual([self.cell_uuid], pool['served_cells'])

    def test_list_pages(self):
        made = [self.pool(name=f'pool-{i}')['uuid'] for i in range(3)]
        first = records.list_pools(self.ctx, limit=2)
        rest = records.list_pools(self.ctx, limit=2,
                                  marker=first[-1]['uuid'])
        self.assertEqual(made, [p['uuid'] for p in first + rest])
        self.assertRaises(exception.MarkerNotFound, records.list_pools,
                          self.ctx, marker='nope')

    def test_bad_input_writes_nothing(self):
        cases = [
            ({'VCPUS': {'total': 1}}, {'cells': ['cell1']},
             exception.InvalidInventory),
            ({'DISK_GB': {'total': -1}}, {'cells': ['cell1']},
             exception.InvalidInventory),
            ({'DISK_GB': {'total': 2 ** 40}}, {'cells': ['cell1']},
             exception.InvalidInventory),
            ({}, {'cells': ['cell1']}, exception.InvalidPool),
            (DISK, {'cells': ['nowhere']}, exception.InvalidPool),
            (DISK, {'zones': ['nowhere']}, exception.InvalidPool),
            (DISK, {'cells': [], 'zones': []}, exception.InvalidPool),
            (DISK, {'cells': 'cell1'}, exception.InvalidPool),
            (DISK, {'cells': ['cell1'], 'traits': ['not a trait']},
             exception.Invalid),
        ]
        for inventories, scope, error in cases:
            self.assertRaises(error, records.create_pool, self.ctx,
                              'bad', inventories, **scope)
        for name in ('', ' ', 'x' * 256, 7, 'a\nb'):
            self.assertRaises(exception.InvalidPool, records.create_pool,
                              self.ctx, name, DISK, cells=['cell1'])
        self.assertEqual([], records.list_pools(self.ctx))

    def test_duplicate_name_conflicts(self):
        self.pool()
        self.assertRaises(exception.PoolExists, self.pool)
        self.assertEqual(1, len(records.list_pools(self.ctx)))

    def test_unknown_pool(self):
        for call in (records.get_pool, records.delete_pool):
            self.assertRaises(exception.PoolNotFound, call, self.ctx, 'nope')

    def test_delete_refused_while_allocated(self):
        pool = self.pool()
        consumer = uuidutils.generate_uuid()
        pool_claims.claim(self.ctx, consumer, [
            {'uuid': pool['uuid'], 'resources': {'DISK_GB': 10}}])
        self.assertRaises(exception.PoolInUse, records.delete_pool,
                          self.ctx, 'shared')
        pool_claims.release(self.ctx, consumer)
        records.delete_pool(self.ctx, 'shared')
        self.assertEqual([], records.list_pools(self.ctx))

    def test_update_refused_below_usage(self):
        pool = self.pool()
        pool_claims.claim(self.ctx, uuidutils.generate_uuid(), [
            {'uuid': pool['uuid'], 'resources': {'DISK_GB': 500}}])
        self.assertRaises(exception.PoolInventoryInUse,
                          records.update_inventories, self.ctx, 'shared',
                          {'DISK_GB': {'total': 499}})
        self.assertRaises(exception.PoolInventoryInUse,
                          records.update_inventories, self.ctx, 'shared',
                          {'CUSTOM_PUBLIC_IPV4': {'total': 8}})
        updated = records.update_inventories(
            self.ctx, 'shared', {'DISK_GB': {'total': 600},
                                 'CUSTOM_PUBLIC_IPV4': {'total': 8}})
        self.assertEqual({'DISK_GB': 600, 'CUSTOM_PUBLIC_IPV4': 8},
                         updated['capacity'])
        self.assertGreater(updated['generation'], pool['generation'])


class _ClaimTests:

    def test_claim_release_idempotent(self):
        pool = self.pool()
        consumer = uuidutils.generate_uuid()
        entries = [{'uuid': pool['uuid'], 'resources': {'DISK_GB': 40}}]
        for _ in range(2):
            held = pool_claims.claim(self.ctx, consumer, entries)
        self.assertEqual([{'uuid': pool['uuid'],
                           'resources': {'DISK_GB': 40}}], held)
        self.assertEqual({'DISK_GB': 40},
                         records.get_pool(self.ctx, 'shared')['usages'])
        self.assertEqual({pool['uuid']: {'DISK_GB': 40}},
                         pool_claims.release(self.ctx, consumer))
        self.assertEqual({}, pool_claims.release(self.ctx, consumer))
        self.assertEqual({'DISK_GB': 0},
                         records.get_pool(self.ctx, 'shared')['usages'])

    def test_full_pool_falls_to_alternate_then_names_class(self):
        small = self.pool('small', {'DISK_GB': {'total': 10}})
        big = self.pool('big', {'DISK_GB': {'total': 100}})
        entry = {'uuid': small['uuid'], 'alternates': [big['uuid']],
                 'resources': {'DISK_GB': 60}}
        held = pool_claims.claim(self.ctx, 'c1', [entry])
        self.assertEqual(big['uuid'], held[0]['uuid'])
        exc = self.assertRaises(exception.NoValidHost, pool_claims.claim,
                                self.ctx, 'c2', [entry])
        self.assertIn('DISK_GB=60', str(exc))
        self.assertEqual({'DISK_GB': 60},
                         records.get_pool(self.ctx, 'big')['usages'])

    def test_all_or_nothing(self):
        disk = self.pool('disk', {'DISK_GB': {'total': 100}})
        ips = self.pool('ips', {'CUSTOM_PUBLIC_IPV4': {'total': 1}})
        pool_claims.claim(self.ctx, 'first', [
            {'uuid': ips['uuid'], 'resources': {'CUSTOM_PUBLIC_IPV4': 1}}])
        self.assertRaises(exception.NoValidHost, pool_claims.claim,
                          self.ctx, 'second', [
                              {'uuid': disk['uuid'],
                               'resources': {'DISK_GB': 10}},
                              {'uuid': ips['uuid'],
                               'resources': {'CUSTOM_PUBLIC_IPV4': 1}}])
        self.assertEqual({'DISK_GB': 0},
                         records.get_pool(self.ctx, 'disk')['usages'])

    def test_racing_threads_place_exactly_capacity(self):
        capacity = 12
        pool = self.pool('race', {'DISK_GB': {'total': 10 * capacity}})
        self.flags(claim_retries=3 * capacity, group='scheduler')
        placed, refused, errors = [], [], []
        start = threading.Barrier(6)

        def claim_some(consumers):
            start.wait(60)
            for consumer in consumers:
                try:
                    pool_claims.claim(self.ctx, consumer, [
                        {'uuid': pool['uuid'],
                         'resources': {'DISK_GB': 10}}])
                    placed.append(consumer)
                except exception.NoValidHost:
                    refused.append(consumer)
                except Exception as exc:  # reported below
                    errors.append(exc)

        consumers = [uuidutils.generate_uuid() for _ in range(3 * capacity)]
        threads = [threading.Thread(target=claim_some,
                                    args=(consumers[i::6],))
                   for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        self.assertEqual([], errors)
        self.assertEqual(capacity, len(placed))
        self.assertEqual(2 * capacity, len(refused))
        self.assertEqual({'DISK_GB': 10 * capacity},
                         records.get_pool(self.ctx, 'race')['usages'])
        self.assertGreaterEqual(contention.STATS.snapshot()[
            'generation_conflicts'], 0)


class SQLitePoolTest(_RecordTests, _ClaimTests, base.SQLiteMixin,
                     PoolTestCase):
    pass


class MySQLPoolTest(_RecordTests, _ClaimTests, base.MySQLMixin,
                    PoolTestCase):
    pass


class PostgreSQLPoolTest(_RecordTests, _ClaimTests, base.PostgreSQLMixin,
                         PoolTestCase):
    pass
