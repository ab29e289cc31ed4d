"""The aggregates the cells publish in their databases, and what the API
level does with rows that are no aggregate.

A cell's schedulers write one row each in the cell's
``scheduler_aggregates``; the API level reads the newest
(``aggregate.read_latest``). A row that is not JSON, too large, or not
an aggregate (``aggregate.validated``) is Invalid: the cell is left out
of scheduling, never a crash of the request.
"""

import datetime
import json

from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot import context
from cellboot.db.cell import models as cell_models
from cellboot import exception
from cellboot.scheduler import aggregate
from cellboot.scheduler import cell_clients
from tests import base
from tests.functional.scheduler import cell_doubles
from tests.functional.scheduler import placement_base

_ROWS = cell_models.SchedulerAggregate.__table__


class _Hostile(cell_clients.LocalCell):
    """Places as its scheduler does, and answers with nonsense figures."""

    def select(self, context, spec, instance_uuids, return_alternates):
        selections, _aggregate = super().select(
            context, spec, instance_uuids, return_alternates)
        return selections, dict(cell_doubles.roomy(), up_hosts=-1)


class _RowTestCase(placement_base.FleetTestCase):

    def setUp(self):
        super().setUp()
        self.flags(cpu_weight_multiplier=0.0, disk_weight_multiplier=0.0,
                   group='filter_scheduler')

    def cctxt(self, cell=0):
        return context.targeted_copy(self.ctx, self.cells[cell])

    def write_row(self, text, cell=0, scheduler='hostile'):
        """A row newer than any scheduler's, written in the cell."""
        engine = sa.create_engine(self.cells[cell].database_connection)
        self.addCleanup(engine.dispose)
        with engine.begin() as conn:
            conn.execute(sa.insert(_ROWS).values(
                scheduler=scheduler, aggregate=text, sequence=1,
                published_at=timeutils.utcnow()
                + datetime.timedelta(minutes=1)))

    def only_published(self):
        """The API level knows the cells from their rows alone."""
        for i, cell in enumerate(self.cells):
            self.scheduler.set_client(cell.uuid, cell_doubles.NotLocal(
                cell, self.cell_scheduler(i)))

    def _select(self):
        return self.scheduler.select_destinations(
            self.ctx, placement_base.spec(), [uuidutils.generate_uuid()])


class _RowTests:

    # -- reading rows --------------------------------------------------

    def test_a_cell_that_published_nothing_reads_as_none(self):
        self.assertIsNone(aggregate.read_latest(self.cctxt()))

    def test_what_a_cell_scheduler_publishes_reads_back(self):
        self.add_host('a', vcpus=8)
        self.cell_scheduler(0).start(self.ctx, refresh_interval=0)
        document, published_at = aggregate.read_latest(self.cctxt())
        self.assertEqual(
            (1, 1, ['nova'], 8.0),
            (document['hosts'], document['up_hosts'], document['zones'],
             document['resources']['VCPU']['max_free']))
        self.assertLess(abs((timeutils.utcnow() - published_at)
                            .total_seconds()), 60)

    def test_the_newest_row_of_the_cells_schedulers_is_read(self):
        self.cell_scheduler(0).start(self.ctx, refresh_interval=0)
        self.write_row(json.dumps(cell_doubles.roomy(up_hosts=7)))
        self.assertEqual(7, aggregate.read_latest(self.cctxt())[0][
            'up_hosts'])

    def test_a_row_that_is_not_json_is_invalid(self):
        self.write_row('{"hosts": 1,')
        exc = self.assertRaises(exception.Invalid, aggregate.read_latest,
                                self.cctxt())
        self.assertIn('not JSON', str(exc))

    def test_a_row_that_is_no_aggregate_is_invalid_naming_the_field(self):
        self.write_row(json.dumps(dict(cell_doubles.roomy(),
                                       hosts=float('nan'))))
        exc = self.assertRaises(exception.Invalid, aggregate.read_latest,
                                self.cctxt())
        self.assertIn('aggregate hosts', str(exc))

    def test_the_largest_aggregate_validated_takes_is_published(self):
        # As many zones as an aggregate may have, each named as long as a
        # name may be: what ``validated`` takes must fit in the row.
        zones = [f'{i:04d}'.ljust(aggregate.MAX_NAME, 'z')
                 for i in range(aggregate.MAX_ZONES)]
        aggregate.publish(self.cctxt(), 'big',
                          cell_doubles.roomy(zones=zones))
        self.assertEqual(zones, aggregate.read_latest(self.cctxt())[0][
            'zones'])

    # -- cells publishing rows that are no aggregate ------------------

    def test_a_cell_whose_row_is_no_aggregate_gets_no_request(self):
        self.add_host('a', cell=0, memory_mb=65536)
        self.add_host('b', cell=1)
        self.start()
        self.only_published()
        self.write_row('[]', cell=0)
        self.scheduler.refresh(self.ctx)
        [[chosen, *_alternates]] = self._select()
        self.assertEqual('b', chosen['service_host'])

    def test_a_cell_whose_row_is_not_json_is_left_out_as_having_none(self):
        self.add_host('a', cell=0)
        self.start()
        self.write_row('not json at all', cell=0)
        self.scheduler.refresh(self.ctx)
        self.assertEqual(
            'its schedulers have published no aggregate',
            self.scheduler.aggregates.view(self.cells[0].uuid).usable())

    def test_the_only_cell_with_hosts_publishing_nonsense_is_no_host(self):
        self.add_host('a', cell=0)
        self.start()
        self.only_published()
        self.write_row(json.dumps({'hosts': 'many'}), cell=0)
        self.scheduler.refresh(self.ctx)
        self.assertRaises(exception.NoValidHost, self._select)

    def test_nonsense_figures_in_an_answer_are_not_taken(self):
        self.add_host('a', cell=0)
        self.start()
        self.scheduler.set_client(self.cells[0].uuid, _Hostile(
            self.cells[0], self.cell_scheduler(0)))
        before = self.scheduler.aggregates.view(self.cells[0].uuid).aggregate
        [[chosen, *_alternates]] = self._select()
        self.assertEqual(
            ('a', before), (chosen['service_host'], self.scheduler.aggregates
                            .view(self.cells[0].uuid).aggregate))


class _TooLargeTests:
    """A row larger than any aggregate (MariaDB's TEXT column cannot
    even hold one: see test_the_largest_aggregate_validated_takes...)."""

    def test_a_row_too_large_is_invalid(self):
        self.write_row(' ' * (aggregate.MAX_DOCUMENT + 1))
        exc = self.assertRaises(exception.Invalid, aggregate.read_latest,
                                self.cctxt())
        self.assertIn('too large', str(exc))


class SQLiteAggregateRowTest(_RowTests, _TooLargeTests, base.SQLiteMixin,
                             _RowTestCase):
    pass


class MySQLAggregateRowTest(_RowTests, base.MySQLMixin, _RowTestCase):
    pass


class PostgreSQLAggregateRowTest(_RowTests, _TooLargeTests,
                                 base.PostgreSQLMixin, _RowTestCase):
    pass
