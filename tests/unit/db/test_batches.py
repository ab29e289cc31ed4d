"""``in_batches`` and ``in_chunks``: many instances per transaction,
failures kept apart."""

from cellboot import context
from cellboot.db import batches
from cellboot.db.cell import connection as cell_connection
from cellboot.objects import service
from tests import base


class _BatchTests:
    """Steps that write service rows in the local cell database."""

    def setUp(self):
        super().setUp()
        self.ctx = context.get_admin_context()
        self.manager = cell_connection.pick_context_manager(self.ctx)

    def _step(self, failing=()):
        def step(name):
            service.Service.create(self.ctx, name, 'cellboot-compute')
            if name in failing:
                raise RuntimeError(f'{name} is broken')
            return 'ok'
        return step

    def _hosts(self):
        return sorted(svc.host for svc in service.Service.get_all(self.ctx))

    def test_every_step_is_written(self):
        names = [f'h{i:03}' for i in range(120)]
        results = batches.in_batches(self.ctx, self.manager, names,
                                     self._step())
        self.assertEqual((names, dict.fromkeys(names, 'ok')),
                         (self._hosts(), results))

    def test_a_failing_step_gets_on_error_and_its_chunk_goes_on(self):
        results = batches.in_batches(
            self.ctx, self.manager, ['a', 'b', 'c'], self._step({'b'}),
            on_error=lambda name, exc: str(exc))
        self.assertEqual({'a': 'ok', 'b': 'b is broken', 'c': 'ok'},
                         results)

    def test_the_failing_steps_writes_are_rolled_back(self):
        batches.in_batches(self.ctx, self.manager, ['a', 'b', 'c'],
                           self._step({'b'}), on_error=lambda *args: None)
        self.assertEqual(['a', 'c'], self._hosts())

    def test_without_on_error_a_failing_step_raises(self):
        self.assertRaises(RuntimeError, batches.in_batches, self.ctx,
                          self.manager, ['a', 'b'], self._step({'b'}))

    def test_a_reader_batch_reads(self):
        batches.in_batches(self.ctx, self.manager, ['a'], self._step())
        found = batches.in_batches(
            self.ctx, self.manager, ['a'],
            lambda name: service.Service.get_by_host_and_binary(
                self.ctx, name, 'cellboot-compute').host, mode='reader')
        self.assertEqual({'a': 'a'}, found)

    def _chunk_step(self, failing=(), seen=None):
        step = self._step(failing)

        def chunk_step(names):
            if seen is not None:
                seen.append(list(names))
            return {name: step(name) for name in names}
        return chunk_step

    def test_a_chunk_step_gets_whole_chunks(self):
        names = [f'h{i:03}' for i in range(batches.CHUNK_SIZE + 3)]
        seen = []
        results = batches.in_chunks(self.ctx, self.manager, names,
                                    self._chunk_step(seen=seen))
        self.assertEqual(
            ([names[:batches.CHUNK_SIZE], names[batches.CHUNK_SIZE:]],
             dict.fromkeys(names, 'ok'), names),
            (seen, results, self._hosts()))

    def test_a_failed_chunk_is_stepped_again_one_instance_at_a_time(self):
        seen = []
        results = batches.in_chunks(
            self.ctx, self.manager, ['a', 'b', 'c'],
            self._chunk_step({'b'}, seen),
            on_error=lambda name, exc: str(exc))
        self.assertEqual(
            ([['a', 'b', 'c'], ['a'], ['b'], ['c']],
             {'a': 'ok', 'b': 'b is broken', 'c': 'ok'}, ['a', 'c']),
            (seen, results, self._hosts()))


class SQLiteBatchTest(_BatchTests, base.SQLiteMixin, base.DatabaseTestCase):
    pass


class MySQLBatchTest(_BatchTests, base.MySQLMixin, base.DatabaseTestCase):
    pass


class PostgreSQLBatchTest(_BatchTests, base.PostgreSQLMixin,
                          base.DatabaseTestCase):
    pass
