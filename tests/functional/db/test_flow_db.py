"""TaskFlow persistence in the flow and cell databases, on every backend.

Flows are saved through cellboot's shared persistence connection and read
back through a TaskFlow backend of its own, so what is checked is what
reached the database.
"""

import concurrent.futures
import os

from alembic.script import ScriptDirectory
from taskflow import engines
from taskflow.patterns import linear_flow
from taskflow.persistence.backends import impl_sqlalchemy
from taskflow.persistence.backends.sqlalchemy import (
    migration as taskflow_migration)
from taskflow.persistence import models as taskflow_models
from taskflow import states
from taskflow import task

from cellboot.db.cell import models as cell_models
from cellboot.flowrun import backend as flow_db
from cellboot.db import migration
from cellboot import exception
from cellboot.flowrun import schema as flow_schema
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional.db.schema import CELL_HEAD
from tests.functional.db.schema import recorded_revision
from tests.functional.db.schema import schema_snapshot
from tests.functional.db.schema import table_names

TASKFLOW_TABLES = {'logbooks', 'flowdetails', 'atomdetails'}
# TaskFlow's, and the flows' fences (cellboot.flowrun.fencing).
FLOW_TABLES = TASKFLOW_TABLES | {'flowfences'}

TASKFLOW_HEAD = ScriptDirectory(os.path.join(
    os.path.dirname(taskflow_migration.__file__),
    'alembic')).get_current_head()


class Add(task.Task):
    """Adds two numbers: a result worth persisting."""

    def execute(self, x, y):
        return x + y


class _FlowDatabaseTests:
    """Specification of flow_db and the flow/cell syncs on one backend.

    ``TASKFLOW_MIGRATES``: TaskFlow runs its alembic migrations (and keeps
    its revision in ``alembic_version``) on server databases only; on
    SQLite it creates its tables from its models.
    """

    TASKFLOW_MIGRATES = True

    def setUp(self):
        super().setUp()
        self.url = self.useFixture(cb_fixtures.Database(self.BACKEND)).url

    def read_back(self):
        """A TaskFlow connection of its own, sharing nothing with ours."""
        backend = impl_sqlalchemy.SQLAlchemyBackend({'connection': self.url})
        self.addCleanup(backend.close)
        return backend.get_connection()

    def save_flow_detail(self):
        book = taskflow_models.LogBook('instance-1234')
        flow_detail = taskflow_models.FlowDetail('boot', uuid='fd-1')
        atom = taskflow_models.TaskDetail('schedule', uuid='ad-1')
        atom.state = states.SUCCESS
        atom.results = {'host': 'compute-1', 'alternates': ['compute-2']}
        flow_detail.add(atom)
        book.add(flow_detail)
        flow_db.get_connection(self.url).save_logbook(book)
        return book

    def test_cell_database_gets_cell_and_taskflow_tables(self):
        flow_schema.sync_cell_database(self.url)

        names = table_names(self.url)
        self.assertLessEqual(set(cell_models.Base.metadata.tables), names)
        self.assertLessEqual(FLOW_TABLES, names)

    def test_cell_database_keeps_both_revisions_apart(self):
        flow_schema.sync_cell_database(self.url)

        self.assertEqual(CELL_HEAD, recorded_revision(
            self.url, cell_models.VERSION_TABLE))
        self.assertEqual(TASKFLOW_HEAD if self.TASKFLOW_MIGRATES else None,
                         recorded_revision(self.url, 'alembic_version'))

    def test_cell_tree_alone_leaves_taskflow_tables_out(self):
        migration.db_sync('cell', self.url)

        self.assertEqual(set(), FLOW_TABLES & table_names(self.url))

    def test_flow_database_gets_only_the_flow_tables(self):
        flow_schema.sync_flow_database(self.url)

        self.assertEqual(FLOW_TABLES,
                         table_names(self.url) - {'alembic_version'})

    def test_cell_database_sync_twice_changes_nothing(self):
        flow_schema.sync_cell_database(self.url)
        before = schema_snapshot(self.url)

        flow_schema.sync_cell_database(self.url)

        self.assertEqual(before, schema_snapshot(self.url))

    def test_saved_flow_detail_reads_back(self):
        flow_schema.sync_flow_database(self.url)
        self.save_flow_detail()

        flow_detail = self.read_back().get_flow_details('fd-1')

        self.assertEqual('boot', flow_detail.name)
        atom = flow_detail.find('ad-1')
        self.assertEqual(states.SUCCESS, atom.state)
        self.assertEqual({'host': 'compute-1', 'alternates': ['compute-2']},
                         atom.results)

    def test_saved_logbook_lists_its_flow(self):
        flow_schema.sync_flow_database(self.url)
        self.save_flow_detail()

        books = list(self.read_back().get_logbooks())

        self.assertEqual(['instance-1234'], [b.name for b in books])
        self.assertEqual(['fd-1'], [fd.uuid for fd in books[0]])

    def test_flow_run_on_the_backend_is_persisted(self):
        flow_schema.sync_cell_database(self.url)
        book = taskflow_models.LogBook('instance-5678')
        flow_detail = taskflow_models.FlowDetail('reschedule', uuid='fd-2')
        book.add(flow_detail)
        flow_db.get_connection(self.url).save_logbook(book)
        flow = linear_flow.Flow('reschedule').add(Add('add'))

        engines.run(flow, store={'x': 2, 'y': 3}, flow_detail=flow_detail,
                    book=book, backend=flow_db.get_backend(self.url))

        persisted = self.read_back().get_flow_details('fd-2')
        self.assertEqual(states.SUCCESS, persisted.state)
        atoms = {atom.name: atom for atom in persisted}
        self.assertEqual((states.SUCCESS, 5),
                         (atoms['add'].state, atoms['add'].results))


class SQLiteFlowDatabaseTest(_FlowDatabaseTests, base.SQLiteMixin,
                             base.TestCase):

    TASKFLOW_MIGRATES = False

    def test_flow_database_runs_in_wal_mode(self):
        flow_schema.sync_flow_database(self.url)

        engine = flow_db.get_backend(self.url).engine
        with engine.connect() as conn:
            mode = conn.exec_driver_sql('PRAGMA journal_mode').scalar()
        self.assertEqual('wal', mode)


class MySQLFlowDatabaseTest(_FlowDatabaseTests, base.MySQLMixin,
                            base.TestCase):
    pass


class PostgreSQLFlowDatabaseTest(_FlowDatabaseTests, base.PostgreSQLMixin,
                                 base.TestCase):
    pass


class PersistenceCacheTest(base.TestCase):
    """One backend and one persistence connection per URL, process-wide."""

    def setUp(self):
        super().setUp()
        self.url = f'sqlite:///{self.state_path}/flows.sqlite'

    def test_backend_is_cached_per_url(self):
        other = f'sqlite:///{self.state_path}/other.sqlite'

        self.assertIs(flow_db.get_backend(self.url),
                      flow_db.get_backend(self.url))
        self.assertIsNot(flow_db.get_backend(self.url),
                         flow_db.get_backend(other))

    def test_every_thread_shares_one_connection(self):
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            connections = set(pool.map(
                lambda _: flow_db.get_connection(self.url), range(32)))

        self.assertEqual({flow_db.get_connection(self.url)}, connections)

    def test_engine_asks_the_backend_for_the_shared_connection(self):
        backend = flow_db.get_backend(self.url)

        self.assertIs(flow_db.get_connection(self.url),
                      backend.get_connection())

    def test_reset_forgets_backends(self):
        before = flow_db.get_backend(self.url)

        flow_db.reset()

        self.assertIsNot(before, flow_db.get_backend(self.url))

    def test_invalid_url_is_refused(self):
        self.assertRaises(exception.InvalidDatabaseURL,
                          flow_db.get_backend, 'nonsense://')
