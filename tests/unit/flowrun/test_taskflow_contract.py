"""The private parts of TaskFlow that ``cellboot.flowrun`` relies on.

``cellboot.flowrun`` overrides or reads TaskFlow internals for measured
reasons (its modules' docstrings say which): the storage's save hooks
and lock (a boot flow's persistence went from 17 transactions to 6),
the action engine's compiler (shared by the engines of a kind's flow)
and compiled runtime, the Redis jobboard's client, keys and encoders
(jobs posted once, owner-checked claim renewal), the executor
conductor's dispatch hooks (claims checked before a flow runs, jobs
left to their claim rather than abandoned), the listener's receivers,
and the columns of TaskFlow's tables (``flowrun.tables``).
None of these is a public API: TaskFlow may rename or reshape them in
any release.

Each test below names one of them and checks that it is still there,
with the parameters cellboot passes (``inspect.signature``), so that a
TaskFlow upgrade that changes one fails here, loudly, rather than in a
conductor. ``requirements.txt`` bounds taskflow below its next major
version (``taskflow>=5.9,<7``; 6.5.0 is what these checks were written
against): a new major may break these contracts, and raising the bound
means running this test (and the functional jobboard and boot tests)
against it first.
"""

import inspect

import sqlalchemy as sa
from taskflow.conductors.backends import impl_executor
from taskflow.conductors.backends import impl_nonblocking
from taskflow.engines.action_engine import compiler
from taskflow.engines.action_engine import engine as action_engine
from taskflow.engines.action_engine import executor as tf_executor
from taskflow.engines.action_engine import runtime
from taskflow.jobs.backends import impl_redis
from taskflow.jobs import base as jobs_base
from taskflow.listeners import base as listener_base
from taskflow.patterns import linear_flow
from taskflow.persistence.backends import impl_memory
from taskflow.persistence.backends import impl_sqlalchemy
from taskflow.persistence.backends.sqlalchemy import tables as tf_tables
from taskflow.persistence import models
from taskflow import storage as tf_storage
from taskflow import task
from taskflow.utils import misc
from taskflow.utils import persistence_utils
import testtools

from cellboot.flowrun import conductor as flow_conductor
from cellboot.flowrun import engine as flow_engine
from cellboot.flowrun import outages
from cellboot.flowrun import storage as flow_storage
from cellboot.flowrun import tables


class _Nothing(task.Task):
    def execute(self):
        return None


def _params(func):
    """The parameter names of ``func``, ``self`` left out."""
    return [name for name in inspect.signature(func).parameters
            if name != 'self']


class TaskFlowContractTest(testtools.TestCase):
    """What cellboot.flowrun uses of TaskFlow beyond its public API."""

    def assertParams(self, expected, func):
        self.assertEqual(expected, _params(func), func.__qualname__)

    # -- storage (cellboot.flowrun.storage) -----------------------------------

    def test_storage_save_hooks(self):
        self.assertParams(['conn', 'original_atom_detail', 'atom_detail'],
                          tf_storage.Storage._save_atom_detail)
        self.assertParams(['conn', 'original_flow_detail', 'flow_detail'],
                          tf_storage.Storage._save_flow_detail)
        self.assertParams(['flow_detail', 'backend', 'scope_fetcher'],
                          tf_storage.Storage.__init__)
        self.assertParams(['atom_name', 'state'],
                          tf_storage.Storage.set_atom_state)
        self.assertParams(['task_name', 'progress', 'details'],
                          tf_storage.Storage.set_task_progress)
        self.assertParams(['pairs', 'transient'], tf_storage.Storage.inject)
        # Our override keeps the parameters TaskFlow calls it with.
        self.assertParams(_params(tf_storage.Storage._save_atom_detail),
                          flow_storage.Storage._save_atom_detail)
        self.assertParams(_params(tf_storage.Storage._save_flow_detail),
                          flow_storage.Storage._save_flow_detail)

    def test_storage_attributes(self):
        flow = linear_flow.Flow('f').add(_Nothing('a'))
        storage = tf_storage.Storage(
            persistence_utils.create_flow_detail(flow))
        for name in ('_lock', '_flowdetail', '_backend'):
            self.assertTrue(hasattr(storage, name), name)
        self.assertTrue(hasattr(storage._lock, 'write_lock'))
        self.assertIsInstance(tf_storage.Storage.injector_name, str)

    # -- engine (cellboot.flowrun.engine) -------------------------------------

    def test_engine_internals(self):
        self.assertParams(['flow', 'flow_detail', 'backend', 'options'],
                          action_engine.SerialActionEngine.__init__)
        self.assertParams(['timeout'], action_engine.ActionEngine.run_iter)
        self.assertIsInstance(
            action_engine.ActionEngine.__dict__['storage'],
            misc.cachedproperty)
        self.assertParams(['atom_name'], runtime.Runtime.fetch_scopes_for)
        flow = linear_flow.Flow('f').add(_Nothing('a'))
        engine = flow_engine.CellbootEngine(
            flow, persistence_utils.create_flow_detail(flow), None, {})
        for name in ('_compiled', '_flow_detail', '_backend'):
            self.assertTrue(hasattr(engine, name), name)
        engine.compile()
        self.assertTrue(engine._compiled)
        self.assertTrue(hasattr(engine._runtime, 'fetch_scopes_for'))
        self.assertIsInstance(engine.storage, flow_storage.Storage)
        engine.run()

    def test_engine_compiler(self):
        """``cellboot.flowrun.engine``: a flow's shared compiler."""
        self.assertParams(['root', 'freeze'],
                          compiler.PatternCompiler.__init__)
        flow = linear_flow.Flow('f').add(_Nothing('a'))
        engine = flow_engine.CellbootEngine(
            flow, persistence_utils.create_flow_detail(flow), None, {})
        # The engine compiles with its ``_compiler``, which returns one
        # frozen compilation every time.
        shared_compiler = compiler.PatternCompiler(flow)
        engine._compiler = shared_compiler
        engine.compile()
        self.assertIs(shared_compiler.compile(), engine.compilation)
        self.assertIs(engine.compilation, shared_compiler.compile())
        self.assertTrue(engine.compilation.execution_graph.frozen)
        self.assertTrue(engine.compilation.hierarchy.frozen)

    def test_executors(self):
        """``cellboot.flowrun.outages``: the executors and their futures."""
        self.assertParams(['task', 'task_uuid', 'arguments',
                           'progress_callback'],
                          tf_executor.SerialTaskExecutor.execute_task)
        self.assertParams(['task', 'task_uuid', 'arguments', 'result',
                           'failures', 'progress_callback'],
                          tf_executor.SerialTaskExecutor.revert_task)
        self.assertParams(['retry', 'arguments'],
                          tf_executor.SerialRetryExecutor.execute_retry)
        self.assertParams(['retry', 'arguments'],
                          tf_executor.SerialRetryExecutor.revert_retry)
        flow = linear_flow.Flow('f').add(_Nothing('a'))
        engine = flow_engine.CellbootEngine(
            flow, persistence_utils.create_flow_detail(flow), None, {})
        self.assertIsInstance(engine._task_executor, outages.TaskExecutor)
        self.assertIsInstance(engine._retry_executor, outages.RetryExecutor)
        engine.compile()
        # The runtime took the retry executor the engine had at compile.
        self.assertIs(engine._retry_executor,
                      engine._runtime._retry_executor)
        engine.run()

    def test_sqlalchemy_backend(self):
        self.assertParams(['conf', 'engine'],
                          impl_sqlalchemy.SQLAlchemyBackend.__init__)
        backend = impl_memory.MemoryBackend()
        flow = linear_flow.Flow('f').add(_Nothing('a'))
        # An unpersisted run writes through TaskFlow's own saves.
        storage = flow_storage.Storage(
            persistence_utils.create_flow_detail(flow), backend=backend)
        self.assertFalse(storage._deferred)

    def test_persistence_utils_and_models(self):
        self.assertParams(['flow', 'book', 'backend', 'meta'],
                          persistence_utils.create_flow_detail)
        self.assertParams(['atom_detail'], models.atom_detail_type)
        detail = models.TaskDetail('a', 'u')
        self.assertEqual('TASK_DETAIL', models.atom_detail_type(detail))
        self.assertLessEqual(set(tables.OUTCOME_FIELDS) | {'meta'},
                             set(detail.to_dict()))

    # -- tables (cellboot.flowrun.tables) -------------------------------------

    def test_table_columns(self):
        fetched = tf_tables.fetch(sa.MetaData())
        used = {
            'logbooks': {'uuid'},
            'flowdetails': {'uuid', 'parent_uuid', 'name', 'state', 'meta',
                            'created_at', 'updated_at'},
            'atomdetails': {'uuid', 'parent_uuid', 'atom_type', 'meta'} |
            set(tables.OUTCOME_FIELDS),
        }
        for table, columns in used.items():
            self.assertLessEqual(
                columns, set(getattr(fetched, table).c.keys()), table)
        # What insert_book writes: the models' dicts, column for column.
        book = models.LogBook('b')
        flow_detail = models.FlowDetail('f', 'u')
        self.assertLessEqual(set(book.to_dict()),
                             set(fetched.logbooks.c.keys()))
        self.assertLessEqual(set(flow_detail.to_dict()),
                             set(fetched.flowdetails.c.keys()))
        self.assertLessEqual(set(models.TaskDetail('a', 'u').to_dict()),
                             set(fetched.atomdetails.c.keys()))

    # -- jobboard (cellboot.flowrun.jobboard, claims) -------------------------

    def test_redis_board_internals(self):
        board_cls = impl_redis.RedisJobBoard
        self.assertParams(['name', 'conf', 'client', 'persistence'],
                          board_cls.__init__)
        self.assertParams(['job', 'who', 'expiry'], board_cls.claim)
        for name in ('sequence_key', 'listings_key', '_dumps', '_loads',
                     '_fetch_jobs', '_encode_owner', '_decode_owner'):
            self.assertTrue(hasattr(board_cls, name), name)
        self.assertEqual(['text'], _params(board_cls._encode_owner)[:1])
        self.assertEqual(['data'], _params(board_cls._decode_owner)[:1])
        self.assertEqual([], _params(impl_redis._translate_failures))
        self.assertParams(
            ['board', 'name', 'sequence', 'key', 'uuid', 'details',
             'created_on', 'backend', 'book', 'book_data', 'priority'],
            impl_redis.RedisJob.__init__)
        self.assertTrue(hasattr(impl_redis.RedisJob, 'owner_key'))
        self.assertTrue(hasattr(impl_redis.RedisJob, 'sequence'))
        # listings.Listings decodes what format_posting writes.
        # (plus 'sequence', 'book', which the poster adds).
        posting = jobs_base.format_posting('u', 'n', created_on='c')
        self.assertEqual({'uuid', 'name', 'created_on', 'details',
                          'priority'}, set(posting))
        self.assertEqual(
            ['uuid', 'name', 'created_on', 'last_modified', 'details',
             'book', 'priority'], _params(jobs_base.format_posting))
        board = board_cls('contract', {'namespace': 'contract'})
        self.assertTrue(hasattr(board, '_client'))
        self.assertTrue(hasattr(board, '_persistence'))

    # -- conductor (cellboot.flowrun.conductor) -------------------------------

    def test_conductor_hooks(self):
        executor = impl_executor.ExecutorConductor
        self.assertParams(['job'], executor._dispatch_job)
        self.assertParams(['job', 'fut'], executor._on_job_done)
        self.assertParams(['job', 'consume', 'trash'],
                          executor._try_finish_job)
        self.assertParams(['timeout'], executor.wait)
        self.assertParams(
            ['name', 'jobboard', 'persistence', 'engine', 'engine_options',
             'wait_timeout', 'log', 'max_simultaneous_jobs',
             'executor_factory'],
            impl_nonblocking.NonBlockingConductor.__init__)
        self.assertTrue(issubclass(flow_conductor.FlowConductor, executor))
        # Our overrides keep the parameters TaskFlow calls them with.
        self.assertParams(_params(executor._dispatch_job),
                          flow_conductor.FlowConductor._dispatch_job)
        self.assertParams(_params(executor._on_job_done),
                          flow_conductor.FlowConductor._on_job_done)
        # The loop ExecutorConductor.run calls, and what ours uses.
        self.assertParams(['executor', 'max_dispatches'],
                          executor._run_until_dead)
        self.assertParams(_params(executor._run_until_dead),
                          flow_conductor.FlowConductor._run_until_dead)
        self.assertIsInstance(executor.WAIT_TIMEOUT, (int, float))
        conductor = impl_nonblocking.NonBlockingConductor(
            'contract', _Board())
        self.assertIsInstance(conductor._dispatched, set)
        self.assertTrue(hasattr(conductor, '_jobboard'))
        self.assertTrue(hasattr(conductor, '_name'))
        self.assertIsInstance(conductor._max_simultaneous_jobs, int)
        self.assertFalse(conductor._wait_timeout.is_stopped())

    # -- listeners (cellboot.flowrun.claims, listeners) -----------------------

    def test_listener_receivers(self):
        listener = listener_base.Listener
        self.assertParams(['engine', 'task_listen_for', 'flow_listen_for',
                           'retry_listen_for'], listener.__init__)
        for name in ('_flow_receiver', '_task_receiver', '_retry_receiver'):
            self.assertParams(['state', 'details'], getattr(listener, name))
        self.assertParams([], listener.register)
        self.assertParams([], listener.deregister)
        flow = linear_flow.Flow('f').add(_Nothing('a'))
        engine = flow_engine.CellbootEngine(
            flow, persistence_utils.create_flow_detail(flow), None, {})
        self.assertIs(engine, listener(engine)._engine)


class _Board:
    """Just enough of a jobboard to build a conductor."""

    name = 'contract'
