"""The API level's release_resources finds the cell that holds the claims.

In order: the cell the caller names, the cell this scheduler claimed in
(remembered), the cell the instance is mapped to, and failing all of
them every cell. The first cell is made unreachable where a test proves
that it was not asked.
"""

from oslo_utils import uuidutils

from tests import base
from tests.functional.scheduler import cell_doubles
from tests.functional.scheduler import placement_base

SMALL = {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}


class _ReleaseTests:

    def setUp(self):
        super().setUp()
        self.far = self.add_host('far', cell=1)
        self.consumer = uuidutils.generate_uuid()

    def _first_cell_unreachable(self):
        unreachable = cell_doubles.Unreachable(self.cells[0])
        self.scheduler.set_client(self.cells[0].uuid, unreachable)
        return unreachable

    def _claim_behind_its_back(self):
        """A claim in cell2 that the API level did not make."""
        self.claim(self.consumer, self.far, SMALL)

    def _release(self, **kwargs):
        return self.scheduler.release_resources(self.ctx, self.consumer,
                                                **kwargs)

    def test_the_cell_given_is_the_one_asked(self):
        self._claim_behind_its_back()
        unreachable = self._first_cell_unreachable()
        released = self._release(cell_uuid=self.cells[1].uuid)
        self.assertEqual(({self.far: SMALL}, [], {}),
                         (released, unreachable.calls,
                          self.held(self.consumer)))

    def test_the_cell_it_claimed_in_is_remembered(self):
        self.scheduler.select_destinations(
            self.ctx, placement_base.spec(), [self.consumer])
        unreachable = self._first_cell_unreachable()
        released = self._release()
        self.assertEqual(({self.far: SMALL}, [], {}),
                         (released, unreachable.calls,
                          self.held(self.consumer)))

    def test_the_cell_the_instance_is_mapped_to_is_asked(self):
        self.map_server(cell=1, uuid=self.consumer)
        self._claim_behind_its_back()
        unreachable = self._first_cell_unreachable()
        released = self._release()
        self.assertEqual(({self.far: SMALL}, [], {}),
                         (released, unreachable.calls,
                          self.held(self.consumer)))

    def test_a_consumer_nobody_knows_is_released_by_asking_every_cell(self):
        self._claim_behind_its_back()
        asked = cell_doubles.NotLocal(self.cells[0], self.cell_scheduler(0))
        self.scheduler.set_client(self.cells[0].uuid, asked)
        released = self._release()
        self.assertEqual(({self.far: SMALL}, ['release'], {}),
                         (released, asked.calls, self.held(self.consumer)))

    def test_asking_every_cell_skips_one_that_does_not_answer(self):
        self._claim_behind_its_back()
        self._first_cell_unreachable()
        self.assertEqual({self.far: SMALL}, self._release())

    def test_a_consumer_it_released_is_not_asked_of_any_cell_again(self):
        self.scheduler.select_destinations(
            self.ctx, placement_base.spec(), [self.consumer])
        self._release()
        unreachable = self._first_cell_unreachable()
        far = cell_doubles.NotLocal(self.cells[1], self.cell_scheduler(1))
        self.scheduler.set_client(self.cells[1].uuid, far)
        self.assertEqual(({}, [], []),
                         (self._release(), unreachable.calls, far.calls))

    def test_a_cell_that_is_gone_holds_nothing(self):
        self._claim_behind_its_back()
        self.assertEqual({}, self._release(
            cell_uuid=uuidutils.generate_uuid()))
        self.assertEqual({self.far: SMALL}, self.held(self.consumer))

    def test_the_release_gives_the_room_back_to_the_cells_host_states(self):
        self.scheduler.select_destinations(
            self.ctx, placement_base.spec(), [self.consumer])
        self._release()
        [host] = self.cell_scheduler(1).host_states(self.ctx)
        self.assertEqual(8.0, host['resources']['VCPU']['free'])


class SQLiteReleaseTest(_ReleaseTests, base.SQLiteMixin,
                        placement_base.FleetTestCase):
    pass


class MySQLReleaseTest(_ReleaseTests, base.MySQLMixin,
                       placement_base.FleetTestCase):
    pass


class PostgreSQLReleaseTest(_ReleaseTests, base.PostgreSQLMixin,
                            placement_base.FleetTestCase):
    pass
