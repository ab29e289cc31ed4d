"""The scheduler drops a silent cell's hosts between loads, then takes them
back.

Two MariaDB cells; the second is reached through a TCP proxy of the test
(its cell mapping holds the proxy's URL), which is cut (refused) or
black-holed (silent) and then restored. The host states are loaded once
with both cells; from then on, only the checks (``CellChecks.check``) may
change them: they must drop the cut cell's hosts, keep them out while a
provider report or a full load comes, never let ``select_destinations``
choose one, and bring them back once the cell answers.
"""

import time

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.scheduler import api as scheduler_api
from tests import base
from tests.functional.scheduler import placement_base
from tests.functional import tcp_proxy

# Seconds a check waits for a cell here.
CHECK_TIMEOUT = 1.0


class CellChecksTest(base.MySQLMixin, placement_base.FleetTestCase):

    def setUp(self):
        super().setUp()
        self.flags(cell_check_timeout=CHECK_TIMEOUT, group='scheduler')
        self.proxy, proxied = tcp_proxy.in_front_of(
            self.cells[1].database_connection)
        self.addCleanup(self.proxy.stop)
        self.cells[1].update(self.ctx, database_connection=proxied)
        self.add_host('up-host', cell=0)
        self.far = self.add_host('far-host', cell=1)
        self.scheduler = scheduler_api.SchedulerAPI()
        self.cache = self.scheduler.cache
        self.cache.refresh(self.ctx)

    def _hosts(self):
        return sorted(h['service_host'] for h in self.cache.host_dicts())

    def _check_until(self, expected, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            self.cache.checks.check(self.ctx)
            if self._hosts() == expected:
                return
            self.assertLess(time.monotonic(), deadline,
                            f'hosts {self._hosts()}, expected {expected}')
            time.sleep(0.1)

    def _select_all(self, count):
        chosen = []
        for _index in range(count):
            uuid = uuidutils.generate_uuid()
            selected = self.scheduler.select_destinations(
                self.ctx, placement_base.spec(), [uuid],
                return_alternates=False)
            chosen.append(selected[0][0]['service_host'])
        return chosen

    def _assert_dropped_and_back(self, outage):
        self.assertEqual(['far-host', 'up-host'], self._hosts())
        outage()
        started = time.monotonic()
        found = self.cache.checks.check(self.ctx)
        self.assertEqual({self.cells[1].uuid: 'cell2'}, found)
        self.assertLess(time.monotonic() - started, CHECK_TIMEOUT + 1)
        self.assertEqual(['up-host'], self._hosts())
        # A provider report of the silent cell's host and a full load
        # bring nothing back while the cell is silent.
        self.cache.refresh_host(self.ctx, self.far)
        started = time.monotonic()
        self.cache.refresh(self.ctx)
        self.assertLess(time.monotonic() - started, CHECK_TIMEOUT + 1)
        self.assertEqual(['up-host'], self._hosts())
        self.assertEqual(['up-host'] * 3, self._select_all(3))
        self.proxy.restore()
        self._check_until(['far-host', 'up-host'])

    def test_a_refusing_cell_is_dropped_then_taken_back(self):
        self._assert_dropped_and_back(self.proxy.cut)

    def test_a_silent_cell_is_dropped_then_taken_back(self):
        self._assert_dropped_and_back(self.proxy.black_hole)

    def test_a_cell_that_answers_is_kept(self):
        self.assertEqual({}, self.cache.checks.check(self.ctx))
        self.assertEqual(['far-host', 'up-host'], self._hosts())

    def test_with_every_cell_silent_nothing_is_chosen(self):
        self.cache.refresh(self.ctx)
        self.proxy.cut()
        self.cache.checks.check(self.ctx)
        self.cache.set_down_cells({self.cells[0].uuid: 'cell1',
                                   self.cells[1].uuid: 'cell2'})
        self.assertEqual([], self._hosts())
        self.assertRaises(exception.NoValidHost, self._select_all, 1)
