"""Schedulers racing for the last room, on every backend.

Within one cell: several schedulers of the cell (each its own host
states, as ``cellboot-scheduler --cell NAME`` run twice), or threads
sharing one, claim from the cell's database. Over two cells: several
API-level schedulers, each with schedulers of its own for both cells,
as several super conductors of one-process deployments. Either way every
slot is taken, the rest refused, and no host is over-committed.
"""

import concurrent.futures

from oslo_utils import uuidutils

from cellboot import context
from cellboot import exception
from cellboot.scheduler import api
from cellboot.scheduler import host_state_cache
from cellboot.scheduler import in_process
from cellboot.scheduler.resources import inventory
from cellboot.scheduler.resources import usage
from tests import base
from tests.functional.scheduler import placement_base

# Each host fits two instances of placement_base.SMALL (2 vCPUs).
HOSTS = 3
SLOTS = 2 * HOSTS
SCHEDULERS = 3
REQUESTS_EACH = 4


def _over_committed(cctxt):
    """The providers of a cell whose usage is above their capacity."""
    inventories = usage.get_inventories(cctxt)
    return [
        uuid for uuid, used in usage.get_usages(cctxt).items()
        for rc, amount in used.items()
        if amount > inventory.capacity(
            inventories[uuid][rc]['total'],
            inventories[uuid][rc]['reserved'],
            inventories[uuid][rc]['allocation_ratio'])]


class _RaceMixin:

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

    def cctxt(self, cell):
        return context.targeted_copy(self.ctx, self.cells[cell])


class _CellSchedulersTests(_RaceMixin):
    """``SCHEDULERS`` schedulers of cell1, its hosts all in cell1."""

    def setUp(self):
        super().setUp()
        for i in range(HOSTS):
            self.add_host(f'h{i}', cell=0, vcpus=4)
        # Each loads first, so that each one's picture goes stale as the
        # others claim.
        self.racers = [
            api.CellScheduler(host_state_cache.CellScope('cell1',
                                                         self.cells[0]),
                              name=f'scheduler-{i}')
            for i in range(SCHEDULERS)]
        for racer in self.racers:
            racer.start(self.ctx, refresh_interval=0)
            self.addCleanup(racer.stop)

    def test_every_slot_is_taken_and_the_rest_rejected(self):
        self.assertEqual((SLOTS, SCHEDULERS * REQUESTS_EACH - SLOTS),
                         self._race(self.racers))

    def test_no_host_is_over_committed(self):
        self._race(self.racers)
        self.assertEqual([], _over_committed(self.cctxt(0)))

    def test_stale_schedulers_retry_their_failed_claims(self):
        # Without the change feed (test_sync), as before it.
        self.flags(sync_backend='none', group='scheduler')
        self._race(self.racers)
        self.assertGreater(sum(racer.manager.failed_claims
                               for racer in self.racers), 0)

    def test_threads_sharing_one_scheduler_fill_every_slot(self):
        # Claims are written outside the scheduler's lock: the threads'
        # decisions overlap with each other's claims.
        self.assertEqual((SLOTS, SCHEDULERS * REQUESTS_EACH - SLOTS),
                         self._race([self.racers[0]] * SCHEDULERS))

    def test_shared_host_states_end_as_the_database(self):
        self._race([self.racers[0]] * SCHEDULERS)
        in_memory = {h['uuid']: h['resources']['VCPU']['used']
                     for h in self.racers[0].host_states(self.ctx)}
        self.assertEqual(
            {uuid: float(used.get('VCPU', 0))
             for uuid, used in usage.get_usages(self.cctxt(0)).items()},
            in_memory)


class _ApiLevelTests(_RaceMixin):
    """``SCHEDULERS`` API levels, each with its own schedulers of both
    cells; the hosts spread over the two cells."""

    def setUp(self):
        super().setUp()
        for i in range(HOSTS):
            self.add_host(f'h{i}', cell=i % 2, vcpus=4)
        self.levels = []
        for _ in range(SCHEDULERS):
            level = in_process.InProcessSchedulers()
            for cell in self.cells:
                level.add_cell(cell)
            level.start(self.ctx, refresh_interval=0)
            self.addCleanup(level.stop)
            self.levels.append(level.top)

    def test_every_slot_of_both_cells_is_taken_and_the_rest_rejected(self):
        self.assertEqual((SLOTS, SCHEDULERS * REQUESTS_EACH - SLOTS),
                         self._race(self.levels))

    def test_no_host_of_either_cell_is_over_committed(self):
        self._race(self.levels)
        self.assertEqual([], _over_committed(self.cctxt(0))
                         + _over_committed(self.cctxt(1)))


class SQLiteCellSchedulersTest(_CellSchedulersTests, base.SQLiteMixin,
                               placement_base.FleetTestCase):
    pass


class MySQLCellSchedulersTest(_CellSchedulersTests, base.MySQLMixin,
                              placement_base.FleetTestCase):
    pass


class PostgreSQLCellSchedulersTest(_CellSchedulersTests,
                                   base.PostgreSQLMixin,
                                   placement_base.FleetTestCase):
    pass


class SQLiteApiLevelRaceTest(_ApiLevelTests, base.SQLiteMixin,
                             placement_base.FleetTestCase):
    pass


class MySQLApiLevelRaceTest(_ApiLevelTests, base.MySQLMixin,
                            placement_base.FleetTestCase):
    pass


class PostgreSQLApiLevelRaceTest(_ApiLevelTests, base.PostgreSQLMixin,
                                 placement_base.FleetTestCase):
    pass
