"""A cell's conductors on Redis credentials limited to their cell's keys.

The Redis user is made on the local Redis (7.0) by the very ``ACL
SETUSER`` command that docs/reliability.md gives operators (read from
the page, with this test's user, password and namespace), and deleted
at clean-up. With it, a cell's board works in full (post, claim, renew,
abandon, consume, trash, its conductors' sweep lock; a real cell
conductor runs a reschedule on it), and Redis refuses every read and
write of the boot board, of the super conductors' sweep lock and of
another cell's keys. ``ACL DRYRUN`` then checks, key by key, that a
cell's pattern covers every key its conductors use and none of anybody
else's, whatever the cells are called.
"""

import os
import re
import shlex
import time
import uuid

import redis as redis_lib
from taskflow import exceptions as tf_exc

from cellboot.conductor import manager
from cellboot.conductor import sweep_lock
from cellboot.conductor import unowned_flows
from cellboot.compute import rpcapi as compute_rpcapi
from cellboot.flowrun import board_keys
from cellboot.flowrun import jobboard
from cellboot.flowrun import lookup
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional import cluster

DOC = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'docs',
                   'reliability.md')

# TaskFlow's Redis board keys, after its namespace and ':'.
BOARD_KEYS = ('listings', 'sequence', 'trash',
              '3d5a6f0e-8a5c-4b3f-9a1d-2c7e9f1b0a11.owned',
              '3d5a6f0e-8a5c-4b3f-9a1d-2c7e9f1b0a11.last_modified')

# Cell names that a careless prefix would let overlap or match wildly.
CELL_NAMES = ('cell1', 'cell10', 'cell1.x', 'cell1:x', 'cell1*', 'c?',
              'c[1]', 'ce\\ll', 'boot', 'sweeper', 'zürich', 'a b', '%41')

TIMEOUT = 20


def documented_rules():
    """The ACL SETUSER rules docs/reliability.md gives for cell1.

    ``(user, rules)``, the rules as the shell would pass them to
    ``redis-cli ACL SETUSER USER``.
    """
    with open(DOC) as doc:
        text = doc.read()
    match = re.search(r'^redis-cli ACL SETUSER .*?(?<!\\)$', text,
                      re.MULTILINE | re.DOTALL)
    words = shlex.split(match.group(0).replace('\\\n', ' '))
    return words[3], words[4:]


class CellACLTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.redis = self.useFixture(cb_fixtures.Redis())
        self.admin = self.redis.client
        self.flags(backend='redis', namespace=self.redis.namespace,
                   url=self.redis.url, claim_expiry=2.0, group='jobboard')
        self.cell_url = self.user_url('cell1')

    def make_user(self, cell_name, rules=None):
        """An ACL user for ``cell_name`` by the documented command."""
        doc_user, doc_rules = documented_rules()
        self.assertEqual('cellboot-cell1', doc_user)
        user = f'cbtest-{uuid.uuid4().hex[:12]}'
        password = uuid.uuid4().hex
        rules = [
            f'>{password}' if rule == '>CELL1_PASSWORD' else
            f'~{board_keys.acl_key_pattern(cell_name)}'
            if rule == '~cellboot.cell.cell1.*' else rule
            for rule in (rules or doc_rules)]
        self.assertIn(f'>{password}', rules)
        self.admin.execute_command('ACL', 'SETUSER', user, *rules)
        self.addCleanup(self.admin.execute_command, 'ACL', 'DELUSER', user)
        return user, password

    def user_url(self, cell_name):
        user, password = self.make_user(cell_name)
        host = self.admin.connection_pool.connection_kwargs
        return (f'redis://{user}:{password}@{host["host"]}:{host["port"]}/'
                f'{host.get("db", 0)}')

    def as_cell(self):
        self.flags(url=self.cell_url, group='jobboard')

    def as_admin(self):
        self.flags(url=self.redis.url, group='jobboard')

    def board(self, kind, cell_name=None):
        board = jobboard.connect(kind, 'sqlite://', cell_name=cell_name)
        self.addCleanup(board.close)
        return board

    # -- what the cell may do ----------------------------------------------

    def test_every_operation_of_the_cells_board_and_lock_works(self):
        self.as_cell()
        board = self.board('reschedule', 'cell1')
        flow_uuid = str(uuid.uuid4())
        job = jobboard.post(board, 'reschedule', flow_uuid)
        self.assertEqual(({flow_uuid}, 1),
                         (jobboard.referenced_flow_uuids(board),
                          board.job_count))
        board.claim(job, 'cell1-conductor:1')
        self.assertEqual(('CLAIMED', (True, 'cell1-conductor:1')),
                         (job.state, board.renew_claim(
                             job, 'cell1-conductor:1')))
        board.abandon(job, 'cell1-conductor:1')
        board.claim(job, 'cell1-conductor:2')
        board.consume(job, 'cell1-conductor:2')
        trashed = jobboard.post(board, 'reschedule', str(uuid.uuid4()))
        board.claim(trashed, 'cell1-conductor:2')
        board.trash(trashed, 'cell1-conductor:2')
        self.assertEqual((0, 1), (board.job_count,
                                  self.admin.hlen(board.trash_key)))
        lock = sweep_lock.Locks('cell1').lock(board)
        self.assertTrue(lock.acquire(blocking=False))
        lock.reacquire()
        lock.release()

    def test_a_cell_conductor_runs_a_reschedule_and_sweeps_on_it(self):
        self.as_cell()
        deployment = self.useFixture(cluster.Cluster(cells=1,
                                                     hosts_per_cell=2))
        cell = deployment.cells[0]
        conductor = manager.CellConductorManager(
            cell_name=cell.name, database_connection=cell.database_connection,
            scheduler=deployment.cell_schedulers[cell.name],
            compute_rpcapi=compute_rpcapi.ComputeAPI(cell.name,
                                                     deployment.transport))
        self.addCleanup(conductor.stop)
        conductor.start(deployment.ctx)
        # A reschedule of an instance that is not there: posted, claimed,
        # renewed as it starts, run (REVERTED: no alternate), consumed.
        instance_uuid = str(uuid.uuid4())
        conductor.build_instances(
            deployment.ctx, {'uuid': instance_uuid, 'host': 'cell1-host1'},
            {}, [], {'num_attempts': 1, 'hosts': []})
        deadline = time.monotonic() + TIMEOUT
        while (not lookup.find_flows(cell.database_connection) or
               conductor.runner.board.job_count) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        (flow,) = lookup.find_flows(cell.database_connection)
        self.assertEqual(('REVERTED', 0),
                         (flow['state'], conductor.runner.board.job_count))
        # Its sweep takes and gives back the cell's lock.
        self.assertEqual({'handed_over': 0}, unowned_flows.UnownedFlows(
            conductor).sweep_once(deployment.ctx))
        self.assertEqual(0, self.admin.exists(
            board_keys.sweep_lock_name('cell1')))

    # -- what the cell may not do ------------------------------------------

    def _boot_job_and_super_lock(self):
        """A boot job on the boot board and the super lock, held."""
        self.as_admin()
        boot_board = self.board('boot')
        job = jobboard.post(boot_board, 'boot', str(uuid.uuid4()))
        held = sweep_lock.redis_lock(self.admin)
        self.assertTrue(held.acquire(blocking=False))
        self.addCleanup(held.release)
        return boot_board, job, held

    def test_the_boot_board_and_the_super_lock_are_out_of_reach(self):
        boot_board, job, held = self._boot_job_and_super_lock()
        before = {key: self.admin.dump(key) for key in
                  self.admin.scan_iter(match=f'{self.redis.namespace}*')}
        self.as_cell()
        cell_client = redis_lib.Redis.from_url(self.cell_url)
        self.addCleanup(cell_client.close)
        listings, lock = boot_board.listings_key, sweep_lock.lock_name()
        for attempt in (
                lambda: cell_client.hgetall(listings),
                lambda: cell_client.hset(listings, 'x', 'y'),
                lambda: cell_client.hdel(listings, job.uuid),
                lambda: cell_client.delete(listings),
                lambda: cell_client.get(lock),
                lambda: cell_client.set(lock, 'mine'),
                lambda: cell_client.delete(lock)):
            self.assertRaises(redis_lib.exceptions.NoPermissionError,
                              attempt)
        as_cell = self.board('boot')
        for attempt in (
                lambda: as_cell.job_count,
                lambda: list(as_cell.iterjobs()),
                lambda: jobboard.post(as_cell, 'boot', str(uuid.uuid4())),
                lambda: as_cell.claim(job, 'cell1-conductor:1'),
                lambda: as_cell.consume(job, 'cell1-conductor:1'),
                lambda: as_cell.trash(job, 'cell1-conductor:1')):
            self.assertRaises(tf_exc.JobFailure, attempt)
        self.assertRaises(redis_lib.exceptions.NoPermissionError,
                          sweep_lock.Locks().lock(as_cell).acquire,
                          blocking=False)
        after = {key: self.admin.dump(key) for key in
                 self.admin.scan_iter(match=f'{self.redis.namespace}*')}
        self.assertEqual(before, after)
        self.assertEqual('UNCLAIMED', job.state)
        self.assertTrue(held.owned())

    def test_another_cells_keys_are_out_of_reach(self):
        self.as_admin()
        cell2 = self.board('reschedule', 'cell2')
        job = jobboard.post(cell2, 'reschedule', str(uuid.uuid4()))
        self.as_cell()
        as_cell1 = self.board('reschedule', 'cell2')
        self.assertRaises(tf_exc.JobFailure, lambda: as_cell1.job_count)
        self.assertRaises(tf_exc.JobFailure, as_cell1.claim, job, 'cell1:1')
        self.assertRaises(redis_lib.exceptions.NoPermissionError,
                          sweep_lock.Locks('cell2').lock(as_cell1).acquire,
                          blocking=False)
        self.assertEqual(('UNCLAIMED', 1), (job.state, cell2.job_count))

    # -- the key patterns, key by key --------------------------------------

    def _keys(self, cell_name=None):
        board = board_keys.board_name(
            'reschedule' if cell_name else 'boot', cell_name)
        return [f'{board}:{key}' for key in BOARD_KEYS] + [
            board_keys.sweep_lock_name(cell_name)]

    def _may(self, user, key):
        answer = self.admin.execute_command('ACL', 'DRYRUN', user, 'GET',
                                            key)
        return answer in (b'OK', 'OK')

    def test_each_cells_pattern_covers_its_keys_and_no_other(self):
        for namespace in ('cellboot', 'deploy*[a]?', 'a\\b'):
            self.flags(namespace=namespace, group='jobboard')
            super_keys = self._keys()
            for name in CELL_NAMES:
                user, _password = self.make_user(name, rules=[
                    'reset', 'on', '>CELL1_PASSWORD', '~cellboot.cell.cell1.*',
                    '-@all', '+get'])
                others = super_keys + [key for other in CELL_NAMES
                                       if other != name
                                       for key in self._keys(other)]
                self.assertEqual(
                    ([True] * 6, []),
                    ([self._may(user, key) for key in self._keys(name)],
                     [key for key in others if self._may(user, key)]),
                    (namespace, name))

    def test_the_documented_super_user_reaches_the_super_keys_only(self):
        _doc_user, rules = documented_rules()
        user, _password = self.make_user('cell1', rules=[
            rule for rule in rules if not rule.startswith('~')] + [
            '~cellboot.boot:*', '~cellboot.sweeper.boot'])
        self.flags(namespace='cellboot', group='jobboard')
        self.assertEqual(
            ([True] * 6, []),
            ([self._may(user, key) for key in self._keys()],
             [key for name in CELL_NAMES for key in self._keys(name)
              if self._may(user, key)]))
