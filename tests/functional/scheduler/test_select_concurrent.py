"""Schedulers with their own host states racing for the last room."""

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

    def _race(self):
        with concurrent.futures.ThreadPoolExecutor(SCHEDULERS) as pool:
            outcomes = list(pool.map(self._run, self.schedulers))
        return (sum(p for p, _ in outcomes), sum(r for _, r in outcomes))

    def test_every_slot_is_taken_and_the_rest_rejected(self):
        self.assertEqual(
            (SLOTS, SCHEDULERS * REQUESTS_EACH - SLOTS), self._race())

    def test_no_host_is_over_committed(self):
        self._race()
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
