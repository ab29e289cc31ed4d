"""The API level's figures of its cells: silent cells skipped, then back.

``CellAggregates`` reads each enabled cell's newest aggregate from the
cell's database. Two MariaDB cells; the second is reached through a TCP
proxy of the test (its cell mapping, and its in-process scheduler, hold
the proxy's URL), which is cut (refused) or black-holed (silent) and
then restored. A cell whose database does not answer is *silent*: it
keeps its last figures, is sent no request, and is taken back by the
first read that reaches it again.
"""

import time

from oslo_utils import uuidutils

from cellboot.scheduler import cell_clients
from tests import base
from tests.functional.scheduler import placement_base
from tests.functional import tcp_proxy

# Seconds a read waits for a cell here.
CHECK_TIMEOUT = 1.0


class _Counting(cell_clients.LocalCell):
    """A cell scheduler of this process that counts the requests it is
    sent."""

    def __init__(self, cell_mapping, scheduler):
        super().__init__(cell_mapping, scheduler)
        self.selects = 0

    def select(self, context, spec, instance_uuids, return_alternates):
        self.selects += 1
        return super().select(context, spec, instance_uuids,
                              return_alternates)


class SilentCellTest(base.MySQLMixin, placement_base.FleetTestCase):

    def setUp(self):
        super().setUp()
        self.flags(cell_check_timeout=CHECK_TIMEOUT, group='scheduler')
        # The far cell weighs best (RAM only) whenever it may be asked.
        self.flags(cpu_weight_multiplier=0.0, disk_weight_multiplier=0.0,
                   group='filter_scheduler')
        self.proxy, proxied = tcp_proxy.in_front_of(
            self.cells[1].database_connection)
        self.addCleanup(self.proxy.stop)
        self.cells[1].update(self.ctx, database_connection=proxied)
        far_scheduler = self.schedulers.add_cell(self.cells[1])
        self.far_cell = _Counting(self.cells[1], far_scheduler)
        self.scheduler.set_client(self.cells[1].uuid, self.far_cell)
        self.add_host('up-host', cell=0)
        self.add_host('far-host', cell=1, memory_mb=65536)
        self.start()

    def view(self, cell):
        return self.scheduler.aggregates.view(self.cells[cell].uuid)

    def _read_until_usable(self, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            self.scheduler.refresh(self.ctx)
            if self.view(1).usable() is None:
                return
            self.assertLess(time.monotonic(), deadline, self.view(1).usable())
            time.sleep(0.1)

    def _select_all(self, count):
        chosen = []
        for _index in range(count):
            selected = self.scheduler.select_destinations(
                self.ctx, placement_base.spec(), [uuidutils.generate_uuid()],
                return_alternates=False)
            chosen.append(selected[0][0]['service_host'])
        return chosen

    def _timed_read(self):
        started = time.monotonic()
        self.scheduler.refresh(self.ctx)
        return time.monotonic() - started

    def test_a_cell_that_answers_is_usable(self):
        self.scheduler.refresh(self.ctx)
        self.assertEqual([None, None],
                         [self.view(0).usable(), self.view(1).usable()])

    def test_a_refusing_cell_is_silent_at_the_next_read(self):
        self.proxy.cut()
        self.assertLess(self._timed_read(), CHECK_TIMEOUT + 1)
        self.assertIn('does not answer', self.view(1).usable())

    def test_a_black_holed_cell_is_silent_within_the_read_timeout(self):
        self.proxy.black_hole()
        self.assertLess(self._timed_read(), CHECK_TIMEOUT + 1)
        self.assertIn('does not answer', self.view(1).usable())

    def test_a_silent_cell_keeps_its_last_figures(self):
        before = self.view(1).aggregate
        self.proxy.cut()
        self.scheduler.refresh(self.ctx)
        self.assertEqual(before, self.view(1).aggregate)

    def test_the_other_cell_stays_usable_while_one_is_silent(self):
        self.proxy.cut()
        self.scheduler.refresh(self.ctx)
        self.assertIsNone(self.view(0).usable())

    def test_requests_land_in_the_other_cell_while_one_is_silent(self):
        self.proxy.cut()
        self.scheduler.refresh(self.ctx)
        self.assertEqual(['up-host'] * 3, self._select_all(3))

    def test_a_silent_cell_is_sent_no_request(self):
        self.proxy.cut()
        self.scheduler.refresh(self.ctx)
        self._select_all(3)
        self.assertEqual(0, self.far_cell.selects)

    def test_a_silent_cell_is_taken_back_once_it_answers(self):
        self.proxy.cut()
        self.scheduler.refresh(self.ctx)
        self.proxy.restore()
        self._read_until_usable()
        self.assertEqual(['far-host'], self._select_all(1))


class _DisabledCellTests:

    def setUp(self):
        super().setUp()
        self.add_host('a', cell=0)
        self.add_host('b', cell=1, memory_mb=65536)
        self.cells[1].update(self.ctx, disabled=True)
        self.start()

    def test_a_disabled_cell_is_not_read(self):
        self.assertEqual({self.cells[0].uuid},
                         set(self.scheduler.aggregates.views()))

    def test_a_disabled_cell_is_sent_no_request(self):
        self.flags(cpu_weight_multiplier=0.0, disk_weight_multiplier=0.0,
                   group='filter_scheduler')
        for _ in range(3):
            [[chosen]] = self.scheduler.select_destinations(
                self.ctx, placement_base.spec(), [uuidutils.generate_uuid()],
                return_alternates=False)
            self.assertEqual('a', chosen['service_host'])


class SQLiteDisabledCellTest(_DisabledCellTests, base.SQLiteMixin,
                             placement_base.FleetTestCase):
    pass
