"""Two API-level schedulers sharing the cells' aggregates through Redis.

Each ``CellsScheduler`` (one per super conductor) ranks the cells by
their aggregates. A placement's answer brings the cell's new aggregate
to the scheduler that asked; through the feed the other takes it before
its next decision, instead of at its next read of the cells' rows. The
cell is reached as a remote one (``cell_doubles.NotLocal``): the API
level knows only what is published and answered.
"""

import json
import time

import redis

from cellboot import exception
from cellboot.scheduler import cells as cells_mod
from cellboot.scheduler.sync import aggregates as aggregates_sync
from tests import base
from tests.functional.scheduler import cell_doubles
from tests.functional.scheduler import placement_base
from tests.functional.scheduler import test_sync


class _ApiLevelSyncTests:

    CELLS = 1

    def setUp(self):
        super().setUp()
        self.flags(api_sync_backend='redis',
                   sync_redis_url=test_sync.REDIS_URL,
                   sync_pull_interval=0.0, sync_retry_interval=0.1,
                   aggregate_publish_interval=0.0, group='scheduler')
        self.cell = self.cell_scheduler(0)
        self.a, self.b = cells_mod.CellsScheduler(), \
            cells_mod.CellsScheduler()
        self.addCleanup(self.a.stop)
        self.addCleanup(self.b.stop)
        self.clients = {}
        for name, top in (('a', self.a), ('b', self.b)):
            self.clients[name] = cell_doubles.NotLocal(self.cells[0],
                                                       self.cell)
            top.set_client(self.cells[0].uuid, self.clients[name])
        # A stream of this test's own: tests run in parallel.
        key = f'{self.a.sync.feed.key}:{self.cells[0].uuid}'
        self.a.sync.feed.key = self.b.sync.feed.key = key
        self.addCleanup(redis.Redis.from_url(test_sync.REDIS_URL).delete,
                        key)

    def start_all(self):
        self.cell.start(self.ctx, refresh_interval=0)
        self.a.start(self.ctx, refresh_interval=0)
        self.b.start(self.ctx, refresh_interval=0)

    def place(self, top):
        return top.select_destinations(self.ctx, placement_base.spec(),
                                       placement_base.uuids(1))

    def max_free_vcpus(self, top):
        return top.aggregates.view(self.cells[0].uuid).aggregate[
            'resources']['VCPU']['max_free']

    def test_a_placement_by_one_moves_the_others_view(self):
        self.add_host('h', vcpus=8)
        self.start_all()
        self.place(self.a)
        placed = time.monotonic()
        self.b.sync.catch_up(self.ctx)
        self.assertLess(time.monotonic() - placed, test_sync.BOUND)
        self.assertEqual(6.0, self.max_free_vcpus(self.b))
        self.assertLess(self.b.sync.stats()['lag_max'], test_sync.BOUND)

    def test_the_other_refuses_a_full_cell_without_asking_it(self):
        self.add_host('h', vcpus=2)
        self.start_all()
        self.place(self.a)
        self.assertRaises(exception.NoValidHost, self.place, self.b)
        self.assertEqual([], self.clients['b'].calls)

    def test_an_older_aggregate_from_the_feed_is_not_taken(self):
        self.add_host('h', vcpus=8)
        self.start_all()
        self.place(self.a)
        self.b.sync.catch_up(self.ctx)
        stale = dict(self.b.aggregates.view(self.cells[0].uuid).aggregate)
        stale['computed_at'] -= 60
        stale['resources'] = dict(stale['resources'], VCPU=dict(
            stale['resources']['VCPU'], max_free=8.0))
        self.publish_raw(json.dumps(stale))
        self.b.sync.catch_up(self.ctx)
        self.assertEqual(6.0, self.max_free_vcpus(self.b))

    def publish_raw(self, value):
        self.a.sync.feed.publish(self.ctx, [
            (aggregates_sync.AGGREGATE, self.cells[0].uuid, value)],
            'intruder')

    def test_malformed_aggregates_from_the_feed_are_ignored(self):
        self.add_host('h', vcpus=8)
        self.start_all()
        before = self.max_free_vcpus(self.b)
        for value in ('{"hosts": 1,', json.dumps({'hosts': 'many'}),
                      json.dumps([1, 2])):
            self.publish_raw(value)
        self.b.sync.catch_up(self.ctx)
        self.assertEqual(before, self.max_free_vcpus(self.b))
        self.assertTrue(self.b.sync.in_sync)
        self.place(self.b)   # and it still places

    def test_redis_down_the_others_still_place_then_recover(self):
        self.add_host('h', vcpus=4)
        self.flags(sync_redis_url=test_sync.CLOSED_PORT_URL,
                   group='scheduler')
        self.start_all()
        self.place(self.a)
        self.place(self.b)   # by its own figures; the claims decide
        self.assertRaises(exception.NoValidHost, self.place, self.a)
        self.assertFalse(self.b.sync.in_sync)
        self.flags(sync_redis_url=test_sync.REDIS_URL, group='scheduler')
        for top in (self.a, self.b):
            top.sync.feed._client = None
        time.sleep(0.15)   # sync_retry_interval
        self.b.sync.catch_up(self.ctx)
        self.assertTrue(self.b.sync.in_sync)


class SQLiteApiLevelSyncTest(_ApiLevelSyncTests,
                             placement_base.FleetTestCase,
                             base.SQLiteMixin):
    pass


class MySQLApiLevelSyncTest(_ApiLevelSyncTests,
                            placement_base.FleetTestCase,
                            base.MySQLMixin):
    pass
