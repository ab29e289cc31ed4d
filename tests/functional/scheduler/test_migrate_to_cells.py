"""Moving a populated deployment's host resources into its cells.

Two cells' providers, inventories and allocations of several consumers,
written into the API database's tables as the old schedulers left them.
Each cell database must end with exactly those rows (amounts, fields,
names, zones, generations and stamps as they were), the API database
with none, whether the move runs again, is interrupted, races another,
or finds some rows in the cell already.
"""

import datetime
import threading
import time

import fixtures
from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot import context
from cellboot.db.api import models as api_models
from cellboot.db.cell import models as cell_models
from cellboot.objects import cell_mapping
from cellboot.scheduler import migrate
from cellboot.scheduler.pools import records
from cellboot.scheduler.resources import claims
from cellboot.scheduler.resources import providers as providers_api
from cellboot.scheduler.resources import usage
from tests import base

API_TABLES = (api_models.ResourceProvider.__table__,
              api_models.Inventory.__table__,
              api_models.Allocation.__table__)
CELL_TABLES = (cell_models.ResourceProvider.__table__,
               cell_models.Inventory.__table__,
               cell_models.Allocation.__table__)

CREATED = datetime.datetime(2025, 3, 1, 12, 0, 0)


INVENTORY_FIELDS = ('total', 'reserved', 'min_unit', 'max_unit',
                    'step_size', 'allocation_ratio')


def inventories(vcpus):
    """A host's inventories, some fields off their defaults."""
    return {rc: dict(zip(INVENTORY_FIELDS, values)) for rc, values in (
        ('VCPU', (vcpus, 0, 1, vcpus, 1, 4.0)),
        ('MEMORY_MB', (65536, 512, 1, 65536, 1, 1.5)),
        ('DISK_GB', (1000, 0, 1, 1000, 10, 1.0)))}


def insert_api_provider(engine, cell_id, name=None, generation=7, vcpus=16,
                        consumers=2):
    """A provider as the old schedulers left it in the API database.

    With its ``inventories(vcpus)`` and ``consumers`` consumers holding
    some of each class. Returns ``(uuid, rows)``, ``rows`` as
    ``resource_rows`` shows the provider.
    """
    uuid = uuidutils.generate_uuid()
    name = name or 'host-' + uuid[:8]
    allocations = []
    for index in range(consumers):
        consumer = uuidutils.generate_uuid()
        allocations += [(consumer, 'VCPU', 1 + index),
                        (consumer, 'MEMORY_MB', 1024 * (index + 1)),
                        (consumer, 'DISK_GB', 10 * (index + 2))]
    allocations.sort()
    provider_table, inv_table, alloc_table = API_TABLES
    with engine.begin() as conn:
        provider_id = conn.execute(sa.insert(provider_table).values(
            uuid=uuid, name=name, availability_zone='az-' + name,
            generation=generation, created_at=CREATED, cell_id=cell_id,
        )).inserted_primary_key[0]
        conn.execute(sa.insert(inv_table), [
            dict(inv, resource_provider_id=provider_id, resource_class=rc)
            for rc, inv in inventories(vcpus).items()])
        conn.execute(sa.insert(alloc_table), [
            {'resource_provider_id': provider_id, 'consumer_id': consumer,
             'resource_class': rc, 'used': used}
            for consumer, rc, used in allocations])
    return uuid, {'name': name, 'availability_zone': 'az-' + name,
                  'generation': generation, 'created_at': CREATED,
                  'inventories': inventories(vcpus),
                  'allocations': allocations}


def resource_rows(engine, tables):
    """``{provider uuid: what the tables say of it}``, ids left out."""
    providers, invs, allocs = tables
    result = {}
    with engine.connect() as conn:
        for row in conn.execute(sa.select(providers)):
            result[row.id] = {
                'uuid': row.uuid, 'name': row.name,
                'availability_zone': row.availability_zone,
                'generation': row.generation, 'created_at': row.created_at,
                'inventories': {}, 'allocations': []}
        for row in conn.execute(sa.select(invs)):
            result[row.resource_provider_id]['inventories'][
                row.resource_class] = {
                    field: row._mapping[field] for field in INVENTORY_FIELDS}
        for row in conn.execute(sa.select(allocs)):
            result[row.resource_provider_id]['allocations'].append(
                (row.consumer_id, row.resource_class, row.used))
    for provider in result.values():
        provider['allocations'].sort()
    return {provider.pop('uuid'): provider for provider in result.values()}


def counts(move):
    return move.providers, move.present, move.inventories, move.allocations


def full_rows(engine, tables):
    """Every row of the tables, every column: what "unchanged" means."""
    with engine.connect() as conn:
        return [sorted(tuple(map(str, row)) for row in
                       conn.execute(sa.select(table))) for table in tables]


class _MigrateTests:

    CELLS = 2

    def setUp(self):
        super().setUp()
        # A dead cell must fail at once, not retry its connection.
        self.flags(max_retries=0, group='database')
        self.ctx = context.get_admin_context()
        self.api = self._engine(self.dbs.api_url)
        self.cells = [cell_mapping.CellMapping.create(
            self.ctx, f'cell{i + 1}', url, 'fake://')
            for i, url in enumerate(self.dbs.cell_urls)]
        self.cell_engines = [self._engine(url) for url in self.dbs.cell_urls]
        # {cell uuid: {provider uuid: rows}}: what each cell must hold.
        self.expected = {cell.uuid: {} for cell in self.cells}

    def _engine(self, url):
        engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
        self.addCleanup(engine.dispose)
        return engine

    def add_api_provider(self, cell, cell_id=None, **values):
        """A provider in the API database; ``self.expected`` records it."""
        uuid, rows = insert_api_provider(
            self.api, cell.id if cell is not None else cell_id, **values)
        if cell is not None:
            self.expected.setdefault(cell.uuid, {})[uuid] = rows
        return uuid

    def populate(self):
        """cell1: three hosts, cell2: two; two or three consumers each."""
        for index in range(3):
            self.add_api_provider(self.cells[0], vcpus=8 + index,
                                  generation=3 + index, consumers=3)
        for index in range(2):
            self.add_api_provider(self.cells[1], vcpus=32,
                                  generation=11 + index, consumers=2)

    def cctxt(self, cell):
        return context.targeted_copy(self.ctx, cell)

    def cell_rows(self, index):
        return resource_rows(self.cell_engines[index], CELL_TABLES)

    def api_rows(self):
        return resource_rows(self.api, API_TABLES)

    def assertMoved(self):
        for index, cell in enumerate(self.cells):
            self.assertEqual(self.expected[cell.uuid], self.cell_rows(index))
        self.assertEqual({}, self.api_rows())

    def snapshot(self):
        return ([full_rows(self.api, API_TABLES)]
                + [full_rows(engine, CELL_TABLES)
                   for engine in self.cell_engines])

    def test_moves_every_provider_with_its_rows_into_its_cell(self):
        self.populate()
        summary = migrate.migrate_to_cells(self.ctx)
        self.assertMoved()
        self.assertTrue(summary.ok)
        self.assertEqual([(3, 0, 9, 27), (2, 0, 6, 12)],
                         [counts(move) for move in summary.cells])
        self.assertEqual(0, summary.left)

    def test_second_run_moves_nothing_and_changes_nothing(self):
        self.populate()
        migrate.migrate_to_cells(self.ctx)
        before = self.snapshot()
        summary = migrate.migrate_to_cells(self.ctx)
        self.assertEqual(before, self.snapshot())
        self.assertTrue(summary.ok)
        self.assertEqual([0, 0], [move.total for move in summary.cells])
        self.assertMoved()

    def test_small_batches_move_the_same_rows_and_report_each(self):
        self.populate()
        seen = []
        migrate.migrate_to_cells(
            self.ctx, batch=2, progress=lambda move: seen.append(
                (move.cell.name, move.providers, move.done)))
        self.assertMoved()
        self.assertEqual([('cell1', 2, False), ('cell1', 3, False),
                          ('cell1', 3, True), ('cell2', 2, False),
                          ('cell2', 2, True)], seen)

    def test_run_interrupted_before_the_api_delete_finishes_next_time(self):
        self.populate()
        # The first delete fails, which ends the run.
        with fixtures.MockPatchObject(
                migrate, '_delete_from_api',
                side_effect=db_exc.DBConnectionError('API database gone')):
            self.assertRaises(db_exc.DBConnectionError,
                              migrate.migrate_to_cells, self.ctx, batch=2)
        # The first batch is in both databases now: copied, not deleted.
        self.assertEqual(2, len(self.cell_rows(0)))
        self.assertEqual(5, len(self.api_rows()))
        summary = migrate.migrate_to_cells(self.ctx, batch=2)
        self.assertMoved()     # exactly the rows: no allocation doubled
        self.assertEqual((3, 2, 3, 9), counts(summary.cells[0]))

    def test_provider_in_the_cell_already_gets_only_missing_consumers(self):
        cell = self.cells[0]
        uuid = self.add_api_provider(cell, consumers=3)
        old = self.expected[cell.uuid][uuid]
        kept = old['allocations'][0][0]
        # The host reported to the new cell scheduler (other inventory),
        # and one consumer was claimed again there, with other amounts.
        providers_api.update_provider(
            self.cctxt(cell), uuid, old['name'],
            {'VCPU': {'total': 64}, 'MEMORY_MB': {'total': 131072},
             'DISK_GB': {'total': 2000}}, availability_zone='new-az')
        claims.claim_resources(self.cctxt(cell), kept, uuid, {'VCPU': 5})
        generation = providers_api.get_provider(self.cctxt(cell),
                                                uuid)['generation']
        summary = migrate.migrate_to_cells(self.ctx)
        rows = self.cell_rows(0)[uuid]
        self.assertEqual(
            {'VCPU': 64, 'MEMORY_MB': 131072, 'DISK_GB': 2000},
            {rc: inv['total'] for rc, inv in rows['inventories'].items()})
        self.assertEqual('new-az', rows['availability_zone'])
        moved = [alloc for alloc in old['allocations']
                 if alloc[0] != kept]
        self.assertEqual(sorted(moved + [(kept, 'VCPU', 5)]),
                         rows['allocations'])
        self.assertEqual(generation + 1, rows['generation'])
        self.assertEqual({}, self.api_rows())
        self.assertEqual((1, 1, 0, 6), counts(summary.cells[0]))

    def test_two_runs_at_once_copy_no_consumer_twice(self):
        cell = self.cells[0]
        uuid = self.add_api_provider(cell, consumers=3)
        expected = self.expected[cell.uuid][uuid]
        # The host reported to the cell already: both runs find it there.
        providers_api.update_provider(self.cctxt(cell), uuid,
                                      expected['name'], {'VCPU': {'total': 8}})
        copy = migrate._copy_provider
        copied, release, errors = threading.Event(), threading.Event(), []

        def copy_and_wait(session, provider):
            # The first run holds its transaction open after its copy.
            result = copy(session, provider)
            if threading.current_thread().name == 'first':
                copied.set()
                release.wait(30)
            return result

        def run():
            try:
                migrate.migrate_to_cells(context.get_admin_context())
            except Exception as exc:    # reported by the test below
                errors.append(exc)

        with fixtures.MockPatchObject(migrate, '_copy_provider',
                                      copy_and_wait):
            first = threading.Thread(target=run, name='first')
            first.start()
            self.assertTrue(copied.wait(30))
            second = threading.Thread(target=run, name='second')
            second.start()
            time.sleep(1)   # the second run reaches the locked provider
            release.set()
            first.join(60)
            second.join(60)
        self.assertEqual([], errors)
        self.assertEqual(expected['allocations'],
                         self.cell_rows(0)[uuid]['allocations'])
        self.assertEqual({}, self.api_rows())

    def test_name_taken_in_the_cell_is_skipped_and_reported(self):
        self.populate()
        cell = self.cells[0]
        other = uuidutils.generate_uuid()
        providers_api.update_provider(self.cctxt(cell), other, 'taken',
                                      {'VCPU': {'total': 4}})
        uuid = self.add_api_provider(cell, name='taken')
        left = self.expected[cell.uuid].pop(uuid)
        summary = migrate.migrate_to_cells(self.ctx)
        self.assertFalse(summary.ok)
        self.assertEqual([uuid], list(summary.cells[0].skipped))
        reason = summary.cells[0].skipped[uuid]
        self.assertIn(other, reason)
        self.assertIn('taken', reason)
        self.assertEqual(left, self.api_rows()[uuid])
        self.assertEqual(1, summary.left)
        rows = self.cell_rows(0)
        self.assertEqual(4, rows.pop(other)['inventories']['VCPU']['total'])
        self.assertEqual(self.expected[cell.uuid], rows)
        self.assertEqual(self.expected[self.cells[1].uuid],
                         self.cell_rows(1))

    def test_unreachable_cell_is_reported_and_the_others_moved(self):
        self.populate()
        dead = cell_mapping.CellMapping.create(
            self.ctx, 'dead', 'sqlite:///' + self.state_path +
            '/no/such/dir/cell.sqlite', 'fake://')
        stranded = {self.add_api_provider(dead) for _ in range(2)}
        summary = migrate.migrate_to_cells(self.ctx)
        self.assertFalse(summary.ok)
        by_name = {move.cell.name: move for move in summary.cells}
        self.assertIsNotNone(by_name['dead'].failure)
        self.assertEqual((2, 0), (by_name['dead'].total,
                                  by_name['dead'].providers))
        for name in ('cell1', 'cell2'):
            self.assertTrue(by_name[name].ok)
        self.assertEqual(stranded, set(self.api_rows()))
        self.assertEqual(2, summary.left)
        del self.expected[dead.uuid]
        for index, cell in enumerate(self.cells):
            self.assertEqual(self.expected[cell.uuid], self.cell_rows(index))

    def test_provider_changed_during_the_move_is_kept_in_the_api(self):
        cell = self.cells[0]
        uuid = self.add_api_provider(cell)
        copy = migrate._copy_to_cell

        def copy_then_claim(*args):
            # An old scheduler, left running, claims meanwhile.
            result = copy(*args)
            table = API_TABLES[0]
            with self.api.begin() as conn:
                conn.execute(sa.update(table).where(table.c.uuid == uuid)
                             .values(generation=table.c.generation + 1))
            return result

        with fixtures.MockPatchObject(migrate, '_copy_to_cell',
                                      copy_then_claim):
            summary = migrate.migrate_to_cells(self.ctx)
        self.assertFalse(summary.ok)
        self.assertEqual({uuid: migrate.CHANGED}, summary.cells[0].skipped)
        self.assertEqual([uuid], list(self.api_rows()))
        # Once the scheduler is stopped, the next run finishes the move.
        self.assertTrue(migrate.migrate_to_cells(self.ctx).ok)
        self.assertMoved()

    def test_providers_without_a_mapped_cell_are_reported_and_left(self):
        self.populate()
        cell0 = cell_mapping.CellMapping.create(
            self.ctx, 'cell0', 'sqlite://', 'none:///',
            uuid=cell_mapping.CELL0_UUID)
        left = {self.add_api_provider(None): 'has no cell',
                self.add_api_provider(cell0): 'in cell0, which has no hosts'}
        if self.BACKEND == 'sqlite':
            # A server database's foreign key keeps such a row out.
            left[self.add_api_provider(None, cell_id=999)] = (
                'its cell (id 999) is not mapped')
        del self.expected[cell0.uuid]
        summary = migrate.migrate_to_cells(self.ctx)
        self.assertTrue(summary.ok)
        self.assertEqual(set(left), set(summary.unplaced))
        for uuid, why in left.items():
            self.assertIn(why, summary.unplaced[uuid])
        self.assertEqual(['cell1', 'cell2'],
                         [move.cell.name for move in summary.cells])
        self.assertEqual(set(left), set(self.api_rows()))
        self.assertEqual(len(left), summary.left)

    def test_pending_counts_the_providers_left_in_the_api_database(self):
        self.assertEqual(0, migrate.pending(self.ctx))
        self.populate()
        self.add_api_provider(None)
        self.assertEqual(6, migrate.pending(self.ctx))
        migrate.migrate_to_cells(self.ctx)
        self.assertEqual(1, migrate.pending(self.ctx))

    def test_a_shared_pool_is_no_host_left_behind(self):
        # A pool is an API-database provider by design, with no cell.
        pool = records.create_pool(self.ctx, 'shared-disk',
                                   {'DISK_GB': {'total': 100}},
                                   cells=['cell1'])
        self.populate()
        summary = migrate.migrate_to_cells(self.ctx)
        self.assertEqual(({}, 0, 0), (summary.unplaced, summary.left,
                                      migrate.pending(self.ctx)))
        self.assertEqual(pool['uuid'],
                         records.get_pool(self.ctx, 'shared-disk')['uuid'])

    def test_the_cell_scheduler_claims_against_the_moved_rows(self):
        cell = self.cells[0]
        uuid = self.add_api_provider(cell, vcpus=2, consumers=2)
        migrate.migrate_to_cells(self.ctx)
        cctxt = self.cctxt(cell)
        # 2 VCPUs at ratio 4.0: 8, of which the consumers hold 1 + 2.
        self.assertEqual(3, usage.get_usages(cctxt, [uuid])[uuid]['VCPU'])
        claims.claim_resources(cctxt, uuidutils.generate_uuid(), uuid,
                               {'VCPU': 2, 'MEMORY_MB': 1, 'DISK_GB': 10})
        self.assertEqual(8, providers_api.get_provider(
            cctxt, uuid)['generation'])


class SQLiteMigrateToCellsTest(_MigrateTests, base.SQLiteMixin,
                               base.DatabaseTestCase):
    pass


class MySQLMigrateToCellsTest(_MigrateTests, base.MySQLMixin,
                              base.DatabaseTestCase):
    pass


class PostgreSQLMigrateToCellsTest(_MigrateTests, base.PostgreSQLMixin,
                                   base.DatabaseTestCase):
    pass
