"""The API level's scheduler when its figures of a cell are wrong.

``CellsScheduler`` asks cells by their aggregates, which may be stale
(another scheduler claimed since), doctored (a cell publishes what it
likes), or say nothing (the cell's scheduler does not answer). Whatever
they say, a request goes to the next cell when one refuses, is never
refused while a cell that answers has room, and says which cells were
tried when none has.
"""

import datetime
import re

from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.cell import models as cell_models
from cellboot import exception
from cellboot.scheduler import cell_clients
from cellboot.scheduler import local_cells
from tests import base
from tests.functional.scheduler import cell_doubles
from tests.functional.scheduler import placement_base
from tests.functional.scheduler.placement_base import spec

SMALL = {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}
BIG = {'vcpus': 5, 'memory_mb': 1024, 'root_gb': 1}


class _Malformed(cell_clients.LocalCell):
    """Claims as its scheduler does, and answers a selection without a
    host name."""

    def select(self, context, spec, instance_uuids, return_alternates):
        selections, aggregate = super().select(context, spec, instance_uuids,
                                               return_alternates)
        return [[dict(hosts[0], service_host=None)]
                for hosts in selections], aggregate


class _CellsTestCase(placement_base.RamWeighedSelection,
                     placement_base.FleetTestCase):

    def doctor(self, cell, **figures):
        """The API level takes a lie about ``self.cells[cell]``."""
        self.scheduler.aggregates.take(self.cells[cell],
                                       cell_doubles.roomy(**figures))

    def age_aggregates(self, cell, seconds):
        """Make every aggregate row of a cell ``seconds`` old."""
        rows = cell_models.SchedulerAggregate.__table__
        engine = sa.create_engine(self.cells[cell].database_connection)
        self.addCleanup(engine.dispose)
        with engine.begin() as conn:
            conn.execute(sa.update(rows).values(
                published_at=timeutils.utcnow()
                - datetime.timedelta(seconds=seconds)))

    def only_published(self):
        """The cells reached as remote ones: the API level knows only
        what they publish and answer."""
        for i, cell in enumerate(self.cells):
            self.scheduler.set_client(cell.uuid, cell_doubles.NotLocal(
                cell, self.cell_scheduler(i)))

    def view(self, cell):
        return self.scheduler.aggregates.view(self.cells[cell].uuid)


class _RefusalTests:

    def test_a_cell_filled_behind_its_back_refuses_and_the_next_takes(self):
        a = self.add_host('a', cell=0, memory_mb=65536)
        self.add_host('b', cell=1)
        self.start()
        self.claim(uuidutils.generate_uuid(), a, {'VCPU': 8})
        _instances, selections = self._select()
        self.assertEqual((['b'], 1), (self._hosts_of(selections),
                                      self.scheduler.stats['cells refused']))

    def test_after_a_refusal_the_cells_own_figures_are_taken(self):
        a = self.add_host('a', cell=0, memory_mb=65536)
        self.add_host('b', cell=1)
        self.start()
        self.claim(uuidutils.generate_uuid(), a, {'VCPU': 8})
        self._select()
        self.assertEqual(0.0, self.view(0).aggregate['resources']['VCPU'][
            'max_free'])

    def test_a_doctored_aggregate_costs_one_refusal_not_the_request(self):
        self.add_host('tiny', cell=0, vcpus=1)
        self.add_host('b', cell=1)
        self.start()
        self.doctor(0)
        _instances, selections = self._select()
        self.assertEqual((['b'], 1), (self._hosts_of(selections),
                                      self.scheduler.stats['cells refused']))

    def test_when_every_cell_refused_no_valid_host_names_each_and_why(self):
        self.add_host('tiny1', cell=0, vcpus=1)
        self.add_host('tiny2', cell=1, vcpus=1)
        self.start()
        self.doctor(0)
        self.doctor(1)
        error = str(self.assertRaises(exception.NoValidHost, self._select))
        self.assertIn('Cells tried: ', error)
        for name in ('cell1', 'cell2'):
            self.assertIn(f'{name} (No valid host was found. ResourceFilter',
                          error)

    def test_nothing_is_left_claimed_after_every_cell_refused(self):
        tiny1 = self.add_host('tiny1', cell=0, vcpus=1)
        tiny2 = self.add_host('tiny2', cell=1, vcpus=1)
        self.start()
        self.doctor(0)
        self.doctor(1)
        self.assertRaises(exception.NoValidHost, self._select)
        self.assertEqual([0, 0], [self.used(tiny1)['VCPU'],
                                  self.used(tiny2)['VCPU']])

    # -- multi-creates over cells --------------------------------------

    def test_a_multi_create_no_cell_holds_is_split_across_cells(self):
        a = self.add_host('a', cell=0, vcpus=4)
        b = self.add_host('b', cell=1, vcpus=4)
        instances, selections = self._select(count=4)
        self.assertEqual(
            (['a', 'a', 'b', 'b'], {'VCPU': 4}, {'VCPU': 4}),
            (sorted(self._hosts_of(selections)),
             {'VCPU': self.used(a)['VCPU']}, {'VCPU': self.used(b)['VCPU']}))

    def test_each_instance_of_a_split_is_claimed_in_its_cell(self):
        self.add_host('a', cell=0, vcpus=4)
        self.add_host('b', cell=1, vcpus=4)
        instances, selections = self._select(count=4)
        for uuid, hosts in zip(instances, selections):
            self.assertEqual({hosts[0]['compute_node_uuid']: SMALL},
                             self.held(uuid))

    def test_a_chunk_a_cell_refuses_is_halved_before_it_is_given_up(self):
        # cell1 says it holds 4; its one host holds 2.
        self.add_host('a', cell=0, vcpus=4, memory_mb=65536)
        self.add_host('b', cell=1, vcpus=4)
        self.start()
        self.doctor(0, VCPU=8)
        _instances, selections = self._select(count=4)
        self.assertEqual(
            (['a', 'a', 'b', 'b'], 0),
            (sorted(self._hosts_of(selections)),
             self.scheduler.stats['cells refused']))

    def test_a_multi_create_that_cannot_be_placed_whole_claims_nothing(self):
        a = self.add_host('a', cell=0, vcpus=4)
        b = self.add_host('b', cell=1, vcpus=4)
        instances = placement_base.uuids(5)
        self.assertRaises(exception.NoValidHost,
                          self.scheduler.select_destinations, self.ctx,
                          spec(), instances)
        self.assertEqual(([{}] * 5, 0, 0),
                         ([self.held(uuid) for uuid in instances],
                          self.used(a)['VCPU'], self.used(b)['VCPU']))

    # -- cells that do not answer --------------------------------------

    def _unreachable_first_cell(self):
        self.add_host('a', cell=0, memory_mb=65536)
        self.add_host('b', cell=1)
        self.start()
        unreachable = cell_doubles.Unreachable(self.cells[0])
        self.scheduler.set_client(self.cells[0].uuid, unreachable)
        return unreachable

    def test_a_cell_whose_scheduler_does_not_answer_is_skipped(self):
        self._unreachable_first_cell()
        _instances, selections = self._select()
        self.assertEqual((['b'], 1),
                         (self._hosts_of(selections),
                          self.scheduler.stats['cells unreachable']))

    def test_a_cell_that_did_not_answer_is_sent_nothing_meanwhile(self):
        unreachable = self._unreachable_first_cell()
        self._select()
        self._select()
        self.assertEqual(['select'], unreachable.calls)

    def test_a_cell_that_did_not_answer_is_asked_once_its_row_is_read(self):
        unreachable = self._unreachable_first_cell()
        self._select()
        self.scheduler.refresh(self.ctx)
        self._select()
        self.assertEqual(['select', 'select'], unreachable.calls)

    def test_a_request_only_a_cell_not_answering_may_take_is_an_outage(self):
        self.add_host('a', cell=0)
        self.start()
        self.scheduler.set_client(self.cells[0].uuid,
                                  cell_doubles.Unreachable(self.cells[0]))
        error = self.assertRaises(exception.CellsUnavailable, self._select)
        self.assertIn('cell1 (no answer', str(error))

    def test_a_cell_answering_a_malformed_selection_is_skipped(self):
        a = self.add_host('a', cell=0, memory_mb=65536)
        self.add_host('b', cell=1)
        self.start()
        self.scheduler.set_client(self.cells[0].uuid, _Malformed(
            self.cells[0], self.cell_scheduler(0)))
        (instance,), selections = self._select()
        self.assertEqual((['b'], 0), (self._hosts_of(selections),
                                      self.used(a)['VCPU']))

    def test_a_cell_whose_aggregate_is_too_old_is_skipped(self):
        # Only what the cells publish: no publisher thread, and clients
        # the API level does not ask for figures.
        self.flags(aggregate_publish_interval=0, group='scheduler')
        self.add_host('a', cell=0, memory_mb=65536)
        self.add_host('b', cell=1)
        self.start()
        self.only_published()
        first = self.scheduler.client(self.cells[0])
        self.flags(aggregate_max_age=30, group='scheduler')
        self.age_aggregates(0, 60)
        self.scheduler.refresh(self.ctx)
        _instances, selections = self._select(spec(), 1)
        self.assertEqual((['b'], []), (self._hosts_of(selections),
                                       first.calls))

    def test_a_too_old_aggregate_says_no_scheduler_of_the_cell_runs(self):
        self.flags(aggregate_publish_interval=0, group='scheduler')
        self.add_host('a', cell=0)
        self.start()
        self.flags(aggregate_max_age=30, group='scheduler')
        self.age_aggregates(0, 60)
        self.scheduler.refresh(self.ctx)
        self.assertIn('no scheduler of the cell is running',
                      self.view(0).usable())

    # -- what the API level reads before it says no --------------------

    def test_no_valid_host_of_cells_never_started_names_the_cell_filter(self):
        # The cells' schedulers load on first use and have published no
        # aggregate yet: the API level asks them for their figures.
        self.add_host('a', vcpus=4)
        error = self.assertRaises(exception.NoValidHost, self._select,
                                  spec(BIG))
        self.assertIn('ResourceFilter removed the last 1 cell(s)',
                      str(error))

    def _assert_room_given_back_is_used_at_once(self, remote):
        a = self.add_host('a', cell=0, vcpus=2)
        self.start()
        if remote:
            self.only_published()
        (instance,), _selections = self._select()
        # As if a read had begun after every request: nothing is read
        # again unless the release itself asks for it.
        self.scheduler.aggregates.refreshed_at = float('inf')
        self.scheduler.release_resources(self.ctx, instance)
        _instances, selections = self._select()
        self.assertEqual([a], [hosts[0]['compute_node_uuid']
                               for hosts in selections])

    def test_room_the_api_level_gave_back_is_used_at_once(self):
        # An in-process cell is asked for its figures after the release.
        self._assert_room_given_back_is_used_at_once(remote=False)

    def test_room_a_remote_cell_gave_back_is_used_at_once(self):
        # A remote cell answers a release with what it released only:
        # the API level reads the cells again before it would refuse.
        self._assert_room_given_back_is_used_at_once(remote=True)

    def test_a_host_a_remote_cell_reported_just_now_is_found(self):
        # The cell publishes its new host at once; the API level's last
        # read (it has just run) is older than that publication, but not
        # older than the request: it is read again before a refusal.
        self.start()
        self.only_published()
        self.scheduler.aggregates.refresh(self.ctx)
        uuid = self.add_host('late', cell=1, provider=False)
        self.cell_scheduler(1).update_provider(
            self.ctx, uuid, 'late', {'VCPU': {'total': 4},
                                     'MEMORY_MB': {'total': 4096},
                                     'DISK_GB': {'total': 40}})
        _instances, selections = self._select()
        self.assertEqual([uuid], [hosts[0]['compute_node_uuid']
                                  for hosts in selections])


class SQLiteCellsSchedulerTest(_RefusalTests, base.SQLiteMixin,
                               _CellsTestCase):
    pass


class MySQLCellsSchedulerTest(_RefusalTests, base.MySQLMixin,
                              _CellsTestCase):
    pass


class PostgreSQLCellsSchedulerTest(_RefusalTests, base.PostgreSQLMixin,
                                   _CellsTestCase):
    pass


class MaxCellsPerRequestTest(base.SQLiteMixin, _CellsTestCase):
    """Three cells that each say they have room, and have none."""

    CELLS = 3

    def setUp(self):
        super().setUp()
        self.flags(max_cells_per_request=2, group='scheduler')
        for i in range(self.CELLS):
            self.add_host(f'tiny{i}', cell=i, vcpus=1)
        self.start()
        for i in range(self.CELLS):
            self.doctor(i)

    def test_no_valid_host_after_max_cells_per_request_refusals(self):
        error = str(self.assertRaises(exception.NoValidHost, self._select))
        self.assertEqual(2, len(re.findall(r'\bcell\d \(', error)), error)

    def test_the_cells_beyond_the_limit_are_not_asked(self):
        self.assertRaises(exception.NoValidHost, self._select)
        self.assertEqual(2, self.scheduler.stats['cells refused'])


class LocalScanTest(base.SQLiteMixin, _CellsTestCase):
    """The cells of this process that lack figures are looked for now and
    then and before a refusal, not on every request."""

    CELLS = 2

    def setUp(self):
        super().setUp()
        self.flags(aggregate_publish_interval=0, group='scheduler')
        self.add_host('a', cell=0, memory_mb=65536)
        self.add_host('b', cell=1)
        self.start()
        self._select()  # the first request looks through them

    def forget(self, cell):
        """The API level loses the figures of ``cell``, and the cell's
        published row is too old to give them back."""
        self.flags(aggregate_max_age=30, group='scheduler')
        self.age_aggregates(cell, 60)
        view = self.view(cell)
        view.aggregate = None
        self.scheduler.aggregates.tree().changed(view)

    def test_a_cell_without_figures_is_asked_before_a_refusal(self):
        self.forget(0)
        big = spec(dict(placement_base.SMALL, memory_mb=32768))
        _instances, selections = self._select(big)
        self.assertEqual(['a'], self._hosts_of(selections))

    def test_cells_are_not_looked_through_on_every_request(self):
        self.forget(0)
        _instances, selections = self._select()
        self.assertEqual((['b'], None), (self._hosts_of(selections),
                                         self.view(0).aggregate))
        self.patch(local_cells, 'LOCAL_SCAN_INTERVAL', 0)
        self._select()
        self.assertIsNotNone(self.view(0).aggregate)
