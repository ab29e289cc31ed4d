"""``cellboot-manage db purge`` on SQLite, MariaDB and PostgreSQL.

Each test lays out, through the objects and a few backdating UPDATEs,
what a deployment that has run for a while holds: in cell1 and cell0,
live servers, a server being built, servers deleted long ago (with
their faults, actions and events), one deleted recently, one whose
delete has not finished; in the API database their mappings and request
specs, orphaned request specs, a group membership; flows in every state
in the flow database and in cell1's database. Then it runs the command
as an operator does and checks what went and, above all, what stayed.
"""

import datetime

from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa
from taskflow.persistence import models as tf_models

from cellboot import context as cb_context
from cellboot.db.api import models as api_models
from cellboot.db.cell import models as cell_models
from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import schema as flow_schema
from cellboot.objects import build_request
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action
from cellboot.objects import instance_fault
from cellboot.objects import instance_mapping
from cellboot.objects import request_spec
from cellboot.objects import server_group
from tests import base as test_base
from tests.functional.cmd import base

LONG_AGO = datetime.datetime(2020, 1, 1)
BEFORE = '2021-01-01'

API_TABLES = ('instance_mappings', 'request_specs', 'server_group_members',
              'build_requests')
CELL_TABLES = ('instances', 'instance_faults', 'instance_actions',
               'instance_actions_events')
FLOW_TABLES = ('logbooks', 'flowdetails', 'atomdetails')


def _engine(url):
    return sa.create_engine(url, poolclass=sa.pool.NullPool)


def execute(url, statement):
    engine = _engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(statement)
    finally:
        engine.dispose()


def keys(url, table, column):
    """The values of ``column`` in every row of ``table`` at ``url``."""
    engine = _engine(url)
    try:
        with engine.connect() as conn:
            return sorted(str(value) for value in conn.execute(
                sa.text(f'SELECT {column} FROM {table}')).scalars())
    finally:
        engine.dispose()


class _Deployment:
    """A deployment that has run for a while, and how to look at it."""

    def setUp(self):
        super().setUp()
        flow_schema.sync_flow_database(self.flow_url)
        flow_schema.sync_tables(self.cell1_url)
        self.addCleanup(flow_db.reset)
        self.cell0 = self.map_cell0()
        self.cell1 = self.map_cell1(transport_url='fake://')
        self.group = server_group.ServerGroup.create(self.context, 'g', 'p1',
                                                     'anti-affinity')
        self.servers = {}
        self.flows = {}

    # -- laying out a deployment -----------------------------------------

    def server(self, name, cell, vm_state='active', deleted_at=None,
               queued=None, mapped=True, history=True):
        """An instance in ``cell`` with its API rows; its uuid.

        ``deleted_at``: soft-deleted then. ``queued``: whether its
        mapping is queued for delete (default: when deleted).
        """
        uuid = uuidutils.generate_uuid()
        self.servers[name] = uuid
        request_spec.RequestSpec.create(self.context, uuid, {'flavor': {}})
        if mapped:
            mapping = instance_mapping.InstanceMapping.create(
                self.context, uuid, 'p1', cell_uuid=cell.uuid)
            if queued if queued is not None else deleted_at is not None:
                mapping.set_queued_for_delete(self.context)
        self.group.add_members(self.context, [uuid])
        with cb_context.target_cell(self.context, cell) as cctxt:
            instance = instance_obj.Instance.create(cctxt, uuid, 'p1',
                                                    vm_state)
            if history:
                instance_fault.InstanceFault.create(cctxt, uuid, 500, 'f')
                instance_action.InstanceAction.start(cctxt, uuid, 'create',
                                                     'req-1')
                for event in ('schedule', 'build'):
                    instance_action.InstanceActionEvent.event_start(
                        cctxt, uuid, 'req-1', event)
            if deleted_at is not None:
                instance.destroy(cctxt)
        if deleted_at is not None:
            table = cell_models.Instance.__table__
            execute(cell.database_connection, sa.update(table).where(
                table.c.uuid == uuid).values(deleted_at=deleted_at))
        return uuid

    def building(self, name):
        """A server that is only a build request, created long ago."""
        uuid = uuidutils.generate_uuid()
        self.servers[name] = uuid
        build_request.BuildRequest.create(self.context, uuid, 'p1', {})
        request_spec.RequestSpec.create(self.context, uuid, {})
        instance_mapping.InstanceMapping.create(self.context, uuid, 'p1')
        self.backdate_spec(uuid)
        return uuid

    def orphan_spec(self, name, created_at=LONG_AGO):
        uuid = uuidutils.generate_uuid()
        self.servers[name] = uuid
        request_spec.RequestSpec.create(self.context, uuid, {})
        self.backdate_spec(uuid, created_at)
        return uuid

    def backdate_spec(self, uuid, created_at=LONG_AGO):
        table = api_models.RequestSpec.__table__
        execute(self.api_url, sa.update(table).where(
            table.c.instance_uuid == uuid).values(created_at=created_at))

    def flow(self, name, url, state, ended_at=LONG_AGO):
        """A flow with two atoms in its own logbook, last changed then."""
        book = tf_models.LogBook(name, uuid=uuidutils.generate_uuid())
        detail = tf_models.FlowDetail(name, uuid=book.uuid)
        detail.state = state
        for atom in ('a', 'b'):
            detail.add(tf_models.TaskDetail(atom, uuidutils.generate_uuid()))
        book.add(detail)
        flow_db.get_connection(url).save_logbook(book)
        execute(url, sa.text(
            'UPDATE flowdetails SET updated_at = :at, created_at = :at '
            'WHERE uuid = :uuid').bindparams(at=ended_at, uuid=book.uuid))
        self.flows[name] = book.uuid
        return book.uuid

    def deployment(self):
        now = timeutils.utcnow()
        self.server('live', self.cell1)
        self.server('building-in-cell', self.cell1, vm_state='building')
        self.server('deleted-long-ago', self.cell1, deleted_at=LONG_AGO)
        self.server('deleted-lately', self.cell1, deleted_at=now)
        self.server('delete-unfinished', self.cell1, deleted_at=LONG_AGO,
                    queued=False)
        self.server('deleted-while-building', self.cell1,
                    deleted_at=LONG_AGO, mapped=False)
        self.server('buried-deleted', self.cell0, vm_state='error',
                    deleted_at=LONG_AGO)
        self.server('buried', self.cell0, vm_state='error')
        self.building('build-request')
        self.orphan_spec('orphan-spec-old')
        self.orphan_spec('orphan-spec-new', created_at=now)
        for state in ('SUCCESS', 'REVERTED', 'RUNNING', 'FAILURE',
                      'PENDING'):
            self.flow(f'boot-{state}', self.flow_url, state)
        self.flow('boot-SUCCESS-lately', self.flow_url, 'SUCCESS',
                  ended_at=now)
        self.flow('reschedule-SUCCESS', self.cell1_url, 'SUCCESS')
        self.flow('reschedule-RUNNING', self.cell1_url, 'RUNNING')

    # -- looking at it ----------------------------------------------------

    def names(self, uuids):
        by_uuid = {uuid: name for name, uuid in self.servers.items()}
        by_uuid.update({uuid: name for name, uuid in self.flows.items()})
        return sorted(by_uuid.get(uuid, uuid) for uuid in uuids)

    def snapshot(self):
        """Every row that purge may touch, in every database."""
        found = {}
        for table in API_TABLES:
            found[('api', table)] = keys(self.api_url, table, 'id')
        for label, url in (('cell0', self.cell0_url),
                           ('cell1', self.cell1_url)):
            for table in CELL_TABLES:
                found[(label, table)] = keys(url, table, 'id')
        for label, url in (('flows', self.flow_url),
                           ('cell1', self.cell1_url)):
            for table in FLOW_TABLES:
                found[(label, table)] = keys(url, table, 'uuid')
        return found

    def instances(self, url):
        return self.names(keys(url, 'instances', 'uuid'))

    def purge(self, *args):
        return self.manage('db', 'purge', '--before', BEFORE, *args)


class _PurgeTests(_Deployment):

    # -- the specification -----------------------------------------------

    def test_purge_deletes_what_is_over_and_keeps_everything_else(self):
        self.deployment()
        result = self.purge()
        self.assertSucceeded(result)
        self.assertEqual(['building-in-cell', 'delete-unfinished',
                          'deleted-lately', 'live'],
                         self.instances(self.cell1_url))
        self.assertEqual(['buried'], self.instances(self.cell0_url))
        kept = ['build-request', 'building-in-cell', 'buried',
                'delete-unfinished', 'deleted-lately', 'live']
        self.assertEqual(kept, self.names(keys(
            self.api_url, 'instance_mappings', 'instance_uuid')))
        self.assertEqual(kept + ['orphan-spec-new'], self.names(keys(
            self.api_url, 'request_specs', 'instance_uuid')))
        self.assertEqual(sorted(set(kept) - {'build-request'}), self.names(
            keys(self.api_url, 'server_group_members', 'instance_uuid')))
        for url in (self.cell0_url, self.cell1_url):
            instances = keys(url, 'instances', 'uuid')
            self.assertEqual(instances, sorted(set(keys(
                url, 'instance_faults', 'instance_uuid'))))
            self.assertEqual(instances, keys(url, 'instance_actions',
                                             'instance_uuid'))
            self.assertEqual(2 * len(instances), len(keys(
                url, 'instance_actions_events', 'id')))
        self.assertEqual(['boot-FAILURE', 'boot-PENDING', 'boot-RUNNING',
                          'boot-SUCCESS-lately'],
                         self.names(keys(self.flow_url, 'flowdetails',
                                         'uuid')))
        self.assertEqual(self.names(keys(self.flow_url, 'flowdetails',
                                         'uuid')),
                         self.names(keys(self.flow_url, 'logbooks', 'uuid')))
        self.assertEqual(8, len(keys(self.flow_url, 'atomdetails', 'uuid')))
        self.assertEqual(['reschedule-RUNNING'], self.names(
            keys(self.cell1_url, 'flowdetails', 'uuid')))
        self.assertEqual(2, len(keys(self.cell1_url, 'atomdetails',
                                     'uuid')))
        self.assertIn('1 deleted instance(s) kept: their delete has not '
                      'finished', result.stdout)

    def test_dry_run_counts_the_same_rows_and_deletes_nothing(self):
        self.deployment()
        before = self.snapshot()
        dry = self.purge('--dry-run', '--verbose')
        self.assertSucceeded(dry)
        self.assertEqual(before, self.snapshot())
        self.assertIn('Dry run: nothing deleted', dry.stdout)
        real = self.purge('--verbose')
        self.assertSucceeded(real)
        after = self.snapshot()
        gone = sum(len(set(before[key]) - set(after[key])) for key in before)
        self.assertIn(f'Dry run: nothing deleted: {gone} rows to purge',
                      dry.stdout)
        self.assertIn(f'Done: {gone} rows purged', real.stdout)
        self.assertEqual(
            [row.replace('to purge', '') for row in _counts(dry.stdout)],
            [row.replace('purged', '') for row in _counts(real.stdout)])

    def test_verbose_prints_each_table_and_a_progress_line_per_batch(self):
        self.deployment()
        result = self.purge('--verbose', '--batch-size', '1')
        self.assertSucceeded(result)
        rows = {(row[0], row[1]): int(row[2])
                for row in _table(result.stdout)}
        # deleted-long-ago and deleted-while-building
        self.assertEqual(2, rows[('cell cell1', 'instances')])
        self.assertEqual(4, rows[('cell cell1', 'instance_actions_events')])
        self.assertEqual(1, rows[('cell0', 'instances')])
        self.assertEqual(2, rows[('flow database', 'flowdetails')])
        self.assertEqual(1, rows[('cell cell1', 'flowdetails')])
        progress = [line for line in result.stderr_lines
                    if 'so far' in line]
        self.assertIn('cell cell1: 2 deleted instances purged so far',
                      progress)
        self.assertIn('flow database: 2 ended flows purged so far',
                      progress)
        self.assertIn('API database: 1 orphaned request specs purged so far',
                      progress)

    def test_a_second_purge_finds_nothing_more(self):
        self.deployment()
        self.assertSucceeded(self.purge())
        after_first = self.snapshot()
        result = self.purge()
        self.assertSucceeded(result)
        self.assertIn('Done: 0 rows purged', result.stdout)
        self.assertEqual(after_first, self.snapshot())

    def test_batches_of_one_purge_the_same_as_one_batch(self):
        self.deployment()
        self.assertSucceeded(self.purge('--batch-size', '1'))
        self.assertEqual(['building-in-cell', 'delete-unfinished',
                          'deleted-lately', 'live'],
                         self.instances(self.cell1_url))
        self.assertEqual(['buried'], self.instances(self.cell0_url))

    def test_a_cell_that_does_not_answer_is_reported_the_others_purged(self):
        self.deployment()
        self.map_cell1(name='cell2', url=base.DEAD_DATABASE_URL,
                       transport_url='fake://')
        result = self.purge()
        self.assertEqual(1, result.code, result)
        errors = [line for line in result.stderr_lines
                  if line.startswith('ERROR: ')]
        self.assertEqual(1, len(errors), result)
        self.assertIn('cell cell2', errors[0])
        self.assertNotIn(base.DEAD_PASSWORD, result.stderr + result.stdout)
        self.assertNotIn('Traceback', result.stderr)
        self.assertEqual(['buried'], self.instances(self.cell0_url))
        self.assertNotIn('deleted-long-ago', self.instances(self.cell1_url))
        self.assertEqual(4, len(keys(self.flow_url, 'flowdetails', 'uuid')))

    def test_a_bad_or_future_date_is_refused_and_nothing_deleted(self):
        self.deployment()
        before = self.snapshot()
        future = (timeutils.utcnow() + datetime.timedelta(days=1)).date()
        for value, fragment in (('yesterday', 'not a date'),
                                ('2021-13-01', 'not a date'),
                                (future.isoformat(), 'future')):
            result = self.manage('db', 'purge', '--before', value)
            self.assertOneLineError(result, 2, fragment)
        result = self.manage('db', 'purge')
        self.assertOneLineError(result, 2, '--before')
        result = self.manage('db', 'purge', '--before', BEFORE,
                             '--batch-size', '0')
        self.assertOneLineError(result, 2, '--batch-size')
        self.assertEqual(before, self.snapshot())

    def test_a_date_with_a_zone_is_read_as_utc(self):
        self.server('deleted', self.cell1,
                    deleted_at=datetime.datetime(2020, 6, 1, 10, 30))
        result = self.manage('db', 'purge', '--before',
                             '2020-06-01T12:00:00+02:00')
        self.assertSucceeded(result)
        self.assertEqual(['deleted'], self.instances(self.cell1_url))
        result = self.manage('db', 'purge', '--before',
                             '2020-06-01T12:00:00+01:00')
        self.assertSucceeded(result)
        self.assertEqual([], self.instances(self.cell1_url))


def _table(stdout):
    return [[cell.strip() for cell in line.strip('|').split('|')]
            for line in stdout.splitlines()
            if line.startswith('| ') and not line.startswith('| Database')]


def _counts(stdout):
    return [line for line in stdout.splitlines()
            if ': ' in line and line.split(':')[0] in (
                'cell0', 'cell cell1', 'API database', 'flow database')]


class SQLitePurgeTest(_PurgeTests, test_base.SQLiteMixin,
                      base.ManageTestCase):
    pass


class MySQLPurgeTest(_PurgeTests, test_base.MySQLMixin, base.ManageTestCase):
    pass


class PostgreSQLPurgeTest(_PurgeTests, test_base.PostgreSQLMixin,
                          base.ManageTestCase):
    pass
