"""Two schedulers of one cell following each other through the feed.

Each ``CellScheduler`` holds its own host states, as two
``cellboot-scheduler --cell NAME`` processes do. Without the change feed
the second learns of the first's claims only at its periodic reload (off
here) or when a claim of its own fails; with it, before its next
decision. On every backend, and with the feed down: the schedulers then
place on their own states, the claims' swaps keep every host within its
capacity, and once the feed is back they reload and follow it again.
"""

import time
from unittest import mock

from oslo_db import exception as db_exc
import redis

from cellboot import context
from cellboot import exception
from cellboot.scheduler import api
from cellboot.scheduler import host_state_cache
from cellboot.scheduler.resources import changes
from cellboot.scheduler.sync import database
from tests import base
from tests.functional.scheduler import placement_base
from tests.functional.scheduler import test_select_concurrent

# Generous: the feed's lag is a few milliseconds (see the benchmark).
BOUND = 1.0


def alternate(test, requests):
    """``(placed, refused)`` of ``requests`` sent to ``test.a`` and
    ``test.b`` in turn."""
    placed = refused = 0
    for i in range(requests):
        try:
            test.place((test.a, test.b)[i % 2])
            placed += 1
        except exception.NoValidHost:
            refused += 1
    return placed, refused


class _SyncTests:

    CELLS = 1

    def setUp(self):
        super().setUp()
        # Every decision pulls; failures are retried at once.
        self.flags(sync_pull_interval=0.0, sync_retry_interval=0.1,
                   group='scheduler')
        self.flags(host_subset_size=1, group='filter_scheduler')
        self.a, self.b = self.pair()

    def pair(self):
        schedulers = []
        for name in ('a', 'b'):
            scheduler = api.CellScheduler(
                host_state_cache.CellScope('cell1', self.cells[0]),
                name=f'scheduler-{name}')
            schedulers.append(scheduler)
            self.addCleanup(scheduler.stop)
        return schedulers

    def start_both(self):
        for scheduler in (self.a, self.b):
            scheduler.start(self.ctx, refresh_interval=0)

    def place(self, scheduler, count=1):
        return scheduler.select_destinations(
            self.ctx, placement_base.spec(), placement_base.uuids(count))

    def vcpus_used(self, scheduler, uuid):
        states = {h['uuid']: h for h in scheduler.host_states(self.ctx)}
        return states[uuid]['resources']['VCPU']['used']

    # -- claims and releases -------------------------------------------

    def test_a_claim_is_seen_before_the_others_next_decision(self):
        host = self.add_host('h', vcpus=4)   # two SMALL instances
        self.start_both()
        self.place(self.a, 2)
        placed = time.monotonic()
        self.assertRaises(exception.NoValidHost, self.place, self.b)
        seen = time.monotonic() - placed
        # B knew the host was full: it never tried to claim on it.
        self.assertEqual(0, self.b.manager.failed_claims)
        self.assertEqual(4.0, self.vcpus_used(self.b, host))
        self.assertLess(seen, BOUND)
        stats = self.b.sync.stats()
        self.assertEqual((True, 1), (stats['in_sync'], stats['seen']))
        self.assertLess(stats['lag_max'], BOUND)

    def test_a_release_is_seen_before_the_others_next_decision(self):
        host = self.add_host('h', vcpus=2)
        self.start_both()
        [instance] = placement_base.uuids(1)
        self.a.select_destinations(self.ctx, placement_base.spec(),
                                   [instance])
        self.b.sync.catch_up(self.ctx)
        self.assertEqual(2.0, self.vcpus_used(self.b, host))
        self.a.release_resources(self.ctx, instance)
        self.place(self.b)
        self.assertEqual(0, self.b.manager.failed_claims)
        self.assertEqual(2.0, self.vcpus_used(self.b, host))

    def test_a_decisions_view_age_is_its_staleness(self):
        host = self.add_host('h', vcpus=8)
        self.flags(sync_pull_interval=30, group='scheduler')
        self.start_both()
        before = time.monotonic()
        self.place(self.b)         # pulls: a fresh view
        self.place(self.a)         # committed after B's pull began
        self.place(self.b)         # no pull within the interval
        since = time.monotonic() - before
        first, second = self.b.sync.view_ages
        # The second decision ran on the first pull's view, as old as
        # the time since: A's claim is not in it.
        self.assertLess(first, second)
        self.assertGreater(second, 0.0)
        self.assertLessEqual(second, since)
        self.assertEqual(4.0, self.vcpus_used(self.b, host))
        self.b.sync._next_pull = 0   # the interval is over
        self.place(self.b)
        self.assertEqual(8.0, self.vcpus_used(self.b, host))
        self.assertLess(self.b.sync.view_ages[-1], second)
        stats = self.b.sync.stats()
        self.assertEqual(3, len(self.b.sync.view_ages))
        self.assertEqual(sorted(self.b.sync.view_ages)[1],
                         stats['view_age_p50'])

    def cell_context(self):
        return context.target_cell(self.ctx, self.cells[0])

    def test_a_new_host_reported_to_one_is_placed_on_by_the_other(self):
        self.start_both()
        uuid = self.add_host('late', provider=False)
        self.a.update_provider(self.ctx, uuid, 'late',
                               {'VCPU': {'total': 4}, 'MEMORY_MB':
                                {'total': 4096}, 'DISK_GB': {'total': 40}})
        [[chosen, *_alternates]] = self.place(self.b)
        self.assertEqual(uuid, chosen['compute_node_uuid'])

    def test_the_choice_spreads_over_as_many_hosts_as_deciders(self):
        # Same host states, same best host: without the spread, the
        # schedulers of a cell would all claim it at once.
        self.add_host('h', vcpus=64, memory_mb=65536, disk_gb=1000)
        self.start_both()
        self.assertEqual(1, self.b.manager._subset_size())
        self.place(self.a)
        self.place(self.b)
        self.assertEqual(2, self.b.manager._subset_size())
        self.assertEqual(1, self.a.manager._subset_size())  # B unseen yet
        self.place(self.a)
        self.assertEqual(2, self.a.manager._subset_size())

    # -- build failures ------------------------------------------------

    def test_build_failures_counted_by_one_weigh_in_the_other(self):
        bad = self.add_host('bad', vcpus=64)   # preferred by room
        good = self.add_host('good', vcpus=8)
        self.start_both()
        for _ in range(3):
            self.a.record_build_result(self.ctx, bad, False)
        [[chosen, *_alternates]] = self.place(self.b)
        self.assertEqual(good, chosen['compute_node_uuid'])
        states = {h['uuid']: h for h in self.b.host_states(self.ctx)}
        self.assertEqual(3, states[bad]['failed_builds'])
        # A success clears the count in both.
        self.a.record_build_result(self.ctx, bad, True)
        self.b.sync.catch_up(self.ctx)
        states = {h['uuid']: h for h in self.b.host_states(self.ctx)}
        self.assertEqual(0, states[bad]['failed_builds'])

    def test_build_failures_counted_while_the_feed_is_down_reach_the_other(
            self):
        bad = self.add_host('bad', vcpus=64)
        self.add_host('good', vcpus=8)
        self.start_both()
        self.flags(sync_retry_interval=60, group='scheduler')
        failing = mock.patch.object(
            changes, 'record',
            side_effect=db_exc.DBConnectionError('feed table gone'))
        with failing:
            for _ in range(3):
                self.a.record_build_result(self.ctx, bad, False)
        self.assertFalse(self.a.sync.in_sync)
        states = {h['uuid']: h for h in self.b.host_states(self.ctx)}
        self.assertEqual(0, states[bad]['failed_builds'])
        self.a.sync._retry_at = 0   # the retry interval is over
        self.place(self.a)          # A follows the feed again
        self.assertTrue(self.a.sync.in_sync)
        self.b.sync.catch_up(self.ctx)
        states = {h['uuid']: h for h in self.b.host_states(self.ctx)}
        self.assertEqual(3, states[bad]['failed_builds'])

    def test_a_malformed_count_in_the_feed_is_ignored(self):
        host = self.add_host('h')
        self.start_both()
        with self.cell_context() as cctxt:
            changes.record(cctxt, [(changes.BUILD, host, 'lots'),
                                   (changes.BUILD, host, '-5'),
                                   ('nonsense', host, None)], 'intruder')
        self.place(self.b)
        states = {h['uuid']: h for h in self.b.host_states(self.ctx)}
        self.assertEqual(0, states[host]['failed_builds'])
        self.assertEqual((True, 0), (self.b.sync.in_sync,
                                     self.b.sync.errors))

    # -- the feed down -------------------------------------------------

    def test_feed_down_places_within_capacity_then_recovers(self):
        hosts = [self.add_host(f'h{i}', vcpus=4) for i in range(3)]
        self.start_both()
        # No retry during the outage, whatever the time it takes.
        self.flags(sync_retry_interval=60, group='scheduler')
        failing = mock.patch.object(
            changes.PinnedRead, '__call__',
            side_effect=db_exc.DBConnectionError('feed table gone'))
        with failing:
            self.assertEqual((6, 2), alternate(self, 8))
            self.assertFalse(self.b.sync.in_sync)
            self.assertGreater(self.b.sync.errors, 0)
            with self.cell_context() as cctxt:
                self.assertEqual(
                    [], test_select_concurrent._over_committed(cctxt))
        reloads = self.b.sync.reloads
        self.b.sync._retry_at = 0   # the retry interval is over
        self.assertRaises(exception.NoValidHost, self.place, self.b)
        self.assertTrue(self.b.sync.in_sync)
        self.assertEqual(reloads + 1, self.b.sync.reloads)
        self.assertEqual({h: 4.0 for h in hosts},
                         {h: self.vcpus_used(self.b, h) for h in hosts})

    # -- the feed itself -----------------------------------------------

    def test_a_sequence_committed_late_is_still_read(self):
        feed = database.DatabaseFeed(self.a.scope)
        feed.start(self.ctx)
        base_seq = feed._after
        with self.cell_context() as cctxt:
            self.insert(cctxt, base_seq + 2, 'second')
        entries, overflow = feed.pull(self.ctx)
        self.assertEqual((['second'], False),
                         ([e.key for e in entries], overflow))
        with self.cell_context() as cctxt:
            self.insert(cctxt, base_seq + 1, 'first')   # commits late
        entries, _overflow = feed.pull(self.ctx)
        self.assertEqual(['first'], [e.key for e in entries])
        self.assertEqual({}, feed._missing)

    def test_a_sequence_never_committed_means_a_full_reload(self):
        self.flags(sync_gap_wait=0.0, group='scheduler')
        feed = database.DatabaseFeed(self.a.scope)
        feed.start(self.ctx)
        with self.cell_context() as cctxt:
            self.insert(cctxt, feed._after + 2, 'second')
        self.assertFalse(feed.pull(self.ctx)[1])   # the first missing
        time.sleep(0.01)
        self.assertTrue(feed.pull(self.ctx)[1])    # and given up on

    def test_malformed_deltas_mean_a_re_read(self):
        host = self.add_host('h', vcpus=8)
        self.start_both()
        self.flags(sync_backend='none', group='scheduler')
        self.place(self.a)   # unannounced: B can only learn it by a read
        with self.cell_context() as cctxt:
            changes.record(cctxt, [
                (changes.USAGE, host, value) for value in (
                    'VCPU', 'VCPU=two', 'NO_SUCH_CLASS=1',
                    f'VCPU={2 ** 40}', 'VCPU=1,VCPU=1', '=1', 'x' * 255)],
                'intruder')
        self.b.sync.catch_up(self.ctx)
        self.assertEqual(2.0, self.vcpus_used(self.b, host))
        self.assertEqual((True, 0), (self.b.sync.in_sync,
                                     self.b.sync.errors))

    @staticmethod
    @changes.tables.writer
    def insert(context, seq, key):
        context.session.execute(changes.CHANGES.insert().values(
            seq=seq, kind=changes.USAGE, key=key, at=time.time()))

    def test_the_pinned_read_sees_rows_committed_after_its_last(self):
        host = self.add_host('h')
        with self.cell_context() as cctxt:
            read = changes.PinnedRead(cctxt)
            self.addCleanup(read.close)
            tail = changes.tail(cctxt)
            self.assertEqual([], read(tail, 10))
            changes.record(cctxt, [(changes.BUILD, host, 1)], 'a')
            # Not the first read's snapshot (REPEATABLE READ): the row.
            [row] = read(tail, 10)
            self.assertEqual((changes.BUILD, host, '1', 'a'),
                             (row.kind, row.key, row.value, row.origin))
            self.assertEqual([], read(row.seq, 10))

    def test_the_pinned_read_survives_its_connection_dying_once(self):
        with self.cell_context() as cctxt:
            read = changes.PinnedRead(cctxt)
            self.addCleanup(read.close)
            tail = changes.tail(cctxt)
            read(tail, 10)
            read._connection.driver_connection.close()
            self.assertEqual([], read(tail, 10))
            read._connection.driver_connection.close()
            with mock.patch.object(read._engine, 'raw_connection',
                                   side_effect=OSError('no server')):
                self.assertRaises(OSError, read, tail, 10)
            self.assertIsNone(read._connection)
            self.assertEqual([], read(tail, 10))

    def test_stopping_a_scheduler_closes_its_pinned_read(self):
        host = self.add_host('h', vcpus=8)
        self.start_both()
        self.place(self.b)
        read = self.b.sync.feed._read
        self.assertIsNotNone(read._connection)
        self.b.stop()
        self.assertIsNone(read._connection)
        self.assertIsNone(self.b.sync.feed._read)
        # Used after all: the next pull reads on a new connection.
        self.place(self.a)
        self.place(self.b)
        self.assertEqual(6.0, self.vcpus_used(self.b, host))

    def test_old_changes_are_trimmed(self):
        self.add_host('h')
        self.start_both()
        self.place(self.a)
        self.b.sync.catch_up(self.ctx)
        with self.cell_context() as cctxt:
            written = len(changes.read(cctxt, 0, [], 100))
        self.assertGreater(written, 0)
        feed = database.DatabaseFeed(self.a.scope)
        self.flags(sync_retention=10, group='scheduler')
        self.assertEqual(0, feed.trim(self.ctx))   # all younger than 10 s
        with mock.patch.object(database.time, 'time',
                               return_value=time.time() + 60):
            self.assertEqual(written, feed.trim(self.ctx))
        with self.cell_context() as cctxt:
            self.assertEqual([], changes.read(cctxt, 0, [], 100))
        # Sequence numbers are not handed out again after a trim.
        self.place(self.a)
        self.place(self.b)
        self.assertEqual(2.0 * 3, sum(
            h['resources']['VCPU']['used']
            for h in self.b.host_states(self.ctx)))

    def test_more_waiting_than_a_pull_takes_means_a_full_reload(self):
        self.add_host('h', vcpus=64, memory_mb=65536, disk_gb=1000)
        self.start_both()
        self.flags(sync_max_entries=10, group='scheduler')
        for _ in range(12):   # a row each
            self.place(self.a)
        reloads = self.b.sync.reloads
        self.place(self.b)
        self.assertEqual(reloads + 1, self.b.sync.reloads)


class SQLiteSyncTest(_SyncTests, placement_base.FleetTestCase,
                     base.SQLiteMixin):
    pass


class MySQLSyncTest(_SyncTests, placement_base.FleetTestCase,
                    base.MySQLMixin):
    pass


class PostgreSQLSyncTest(_SyncTests, placement_base.FleetTestCase,
                         base.PostgreSQLMixin):
    pass


REDIS_URL = 'redis://127.0.0.1:6379/0'
CLOSED_PORT_URL = 'redis://127.0.0.1:1/0'


class RedisSyncTest(placement_base.FleetTestCase, base.SQLiteMixin):
    """The same, through a Redis stream (the Redis of the test hosts)."""

    CELLS = 1
    pair = _SyncTests.pair
    start_both = _SyncTests.start_both
    place = _SyncTests.place
    vcpus_used = _SyncTests.vcpus_used
    test_a_claim_is_seen_before_the_others_next_decision = \
        _SyncTests.test_a_claim_is_seen_before_the_others_next_decision
    test_build_failures_counted_by_one_weigh_in_the_other = \
        _SyncTests.test_build_failures_counted_by_one_weigh_in_the_other

    def setUp(self):
        super().setUp()
        self.flags(sync_backend='redis', sync_redis_url=REDIS_URL,
                   sync_pull_interval=0.0, sync_retry_interval=0.1,
                   group='scheduler')
        self.flags(host_subset_size=1, group='filter_scheduler')
        self.a, self.b = self.pair()
        self.addCleanup(redis.Redis.from_url(REDIS_URL).delete,
                        self.a.sync.feed.key)

    def test_no_row_is_written_in_the_cell_database(self):
        self.add_host('h')
        self.start_both()
        self.place(self.a)
        with context.target_cell(self.ctx, self.cells[0]) as cctxt:
            self.assertEqual([], changes.read(cctxt, 0, [], 10))

    def test_a_reader_left_behind_the_streams_cap_reloads(self):
        # The stream keeps about ten pulls' worth: a reader behind by
        # more finds a full pull waiting, the overflow that reloads, so
        # entries trimmed before it read them are never silently lost.
        self.flags(sync_max_entries=10, group='scheduler')
        host = self.add_host('h', vcpus=4)
        self.start_both()
        self.place(self.a)
        entries = [('usage', host, None)] * 300
        self.a.sync.feed.publish(self.ctx, entries, 'someone-else')
        key = self.a.sync.feed.key
        self.assertLess(redis.Redis.from_url(REDIS_URL).xlen(key), 300)
        reloads = self.b.sync.reloads
        self.place(self.b)
        self.assertEqual(reloads + 1, self.b.sync.reloads)
        self.assertTrue(self.b.sync.in_sync)
        self.assertEqual(4.0, self.vcpus_used(self.b, host))

    def test_redis_down_places_within_capacity_then_recovers(self):
        hosts = [self.add_host(f'h{i}', vcpus=4) for i in range(3)]
        self.flags(sync_redis_url=CLOSED_PORT_URL, group='scheduler')
        self.start_both()   # the feed cannot be reached from the start
        self.assertEqual((6, 2), alternate(self, 8))
        self.assertEqual((False, False),
                         (self.a.sync.in_sync, self.b.sync.in_sync))
        with context.target_cell(self.ctx, self.cells[0]) as cctxt:
            self.assertEqual(
                [], test_select_concurrent._over_committed(cctxt))
        # Redis is back (here: the right address).
        self.flags(sync_redis_url=REDIS_URL, group='scheduler')
        for scheduler in (self.a, self.b):
            scheduler.sync.feed._client = None
        time.sleep(0.15)   # sync_retry_interval
        self.assertRaises(exception.NoValidHost, self.place, self.b)
        self.assertTrue(self.b.sync.in_sync)
        self.assertEqual({h: 4.0 for h in hosts},
                         {h: self.vcpus_used(self.b, h) for h in hosts})
        # And following again: a host reported to A is placed on by B.
        uuid = self.add_host('late', provider=False)
        self.a.update_provider(self.ctx, uuid, 'late',
                               {'VCPU': {'total': 4}, 'MEMORY_MB':
                                {'total': 4096}, 'DISK_GB': {'total': 40}})
        [[chosen, *_alternates]] = self.place(self.b)
        self.assertEqual(uuid, chosen['compute_node_uuid'])
