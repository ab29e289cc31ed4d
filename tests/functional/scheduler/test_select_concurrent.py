"""Schedulers racing for the last room: separate caches, or one shared."""

import concurrent.futures

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.scheduler import api
from cellboot.scheduler.resources import inventory
from cellboot.scheduler.resources import usage
from tests import base
from tests.functional.scheduler import placement_base

# Each host fits two instances of placement_base.SMALL (2 vCPUs).
HOSTS = 3
SLOTS = 2 * HOSTS
SCHEDULERS = 3
REQUESTS_EACH = 4


class _ConcurrentSchedulersTests:

    def setUp(self):
        super().setUp()
        for i in range(HOSTS):
            self.add_host(f'h{i}', cell=i % 2, vcpus=4)
        # Load every cache first, so that each one's picture goes stale
        # as the others claim.
        self.schedulers = [api.SchedulerAPI() for _ in range(SCHEDULERS)]
        for scheduler in self.schedulers:
            scheduler.start(self.ctx, refresh_interval=0)

    def _run(self, scheduler):
        placed = rejected = 0
        for _ in range(REQUESTS_EACH):
            try:
                scheduler.select_destinations(
                    self.ctx, placement_base.spec(),
                    [uuidutils.generate_uuid()])
                placed += 1
            except exception.NoValidHost:
                rejected += 1
        return placed, rejected

    def _race(self, schedulers):
        with concurrent.futures.ThreadPoolExecutor(SCHEDULERS) as pool:
            outcomes = list(pool.map(self._run, schedulers))
        return (sum(p for p, _ in outcomes), sum(r for _, r in outcomes))

    def test_every_slot_is_taken_and_the_rest_rejected(self):
        self.assertEqual((SLOTS, SCHEDULERS * REQUESTS_EACH - SLOTS),
                         self._race(self.schedulers))

    def test_threads_sharing_one_scheduler_fill_every_slot(self):
        # Claims are written outside the scheduler's lock: the threads'
        # decisions overlap with each other's claims.
        self.assertEqual((SLOTS, SCHEDULERS * REQUESTS_EACH - SLOTS),
                         self._race([self.schedulers[0]] * SCHEDULERS))

    def test_shared_host_states_end_as_the_database(self):
        self._race([self.schedulers[0]] * SCHEDULERS)
        in_memory = {h['uuid']: h['resources']['VCPU']['used']
                     for h in self.schedulers[0].host_states(self.ctx)}
        self.assertEqual(
            {uuid: float(used.get('VCPU', 0))
             for uuid, used in usage.get_usages(self.ctx).items()},
            in_memory)

    def test_no_host_is_over_committed(self):
        self._race(self.schedulers)
        inventories = usage.get_inventories(self.ctx)
        over = [
            uuid for uuid, used in usage.get_usages(self.ctx).items()
            for rc, amount in used.items()
            if amount > inventory.capacity(
                inventories[uuid][rc]['total'],
                inventories[uuid][rc]['reserved'],
                inventories[uuid][rc]['allocation_ratio'])]
        self.assertEqual([], over)


class SQLiteConcurrentSchedulersTest(_ConcurrentSchedulersTests,
                                     base.SQLiteMixin,
                                     placement_base.FleetTestCase):
    pass


class MySQLConcurrentSchedulersTest(_ConcurrentSchedulersTests,
                                    base.MySQLMixin,
                                    placement_base.FleetTestCase):
    pass


class PostgreSQLConcurrentSchedulersTest(_ConcurrentSchedulersTests,
                                         base.PostgreSQLMixin,
                                         placement_base.FleetTestCase):
    pass
