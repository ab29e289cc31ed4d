"""The cell conductor's sweep hands over the reschedule flows nobody runs.

A build fails on its host, which casts ``build_instances`` to its cell
conductor; that conductor saves the reschedule flow and dies before the
flow gets anywhere: with a jobboard, before it posted the flow's job;
without one, as it starts the flow's first step. The instance is left
building, and the BUILD-timeout check leaves it alone for as long as
its reschedule flow is unfinished. Another conductor of the cell, the
survivor, must finish the flow: its sweep (all the cell conductor's
checks, as its sweeper thread runs them) hands the flow over once it is
older than ``[conductor] orphan_build_request_timeout``.

In-process (SQLite, ``fake://``; Redis for the jobboard): the dead
conductor is a conductor of the cell whose board cannot take the post,
or whose engine is stopped by a listener; the test ages the flow rather
than wait out the timeout, and polls, never sleeps a fixed time.
"""

from taskflow.listeners import base as listener_base
from taskflow import states

from cellboot.conductor import manager as conductor_manager
from cellboot.conductor import sweepers
from cellboot.compute import rpcapi as compute_rpcapi
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import records
from cellboot.flowrun import jobboard
from cellboot.flowrun import kinds
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional.compute import base as compute_base
from tests.functional import cluster
from tests.functional import invariants
from tests.functional.sweepers import base as sweep_base

TIMEOUT = 60
FAILING_HOST = 'cell1-host1'
# The bigger host is the scheduler's first choice, so the build fails
# there first and is rescheduled to cell1-host2.
BIG_FAILING_HOST = {FAILING_HOST: {'memory_mb': 16384}}
OTHER_HOST = 'cell1-host2'
# Seconds the handed-over build may take (it takes well under one).
QUIET_TIMEOUT = 15
# Seconds a jobboard claim lasts here (renewed every third of it).
CLAIM_EXPIRY = 2.0


class Killed(BaseException):
    """The conductor process is gone (SIGKILL): nothing of it goes on."""


class KillAt(listener_base.Listener):
    """Kills the conductor as ``atom`` starts."""

    def __init__(self, engine_, atom):
        super().__init__(engine_, task_listen_for=[states.RUNNING],
                         flow_listen_for=[], retry_listen_for=[])
        self.atom = atom

    def _task_receiver(self, state, details):
        if details['task_name'] == self.atom:
            raise Killed(f'killed as {self.atom} started')


class DeadBoard:
    """The board of a conductor killed before it posted: takes nothing."""

    name = 'the dead conductor\'s board'

    def post_once(self, *args, **kwargs):
        raise ConnectionError('the conductor was killed before it posted')


class Cast:
    """Stands for the cell conductor's RPC client: keeps the cast."""

    def __init__(self):
        self.calls = []

    def build_instances(self, context, **kwargs):
        self.calls.append((context, kwargs))


class _Test(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(orphan_build_request_timeout=TIMEOUT,
                   sweep_interval=3600, group='conductor')
        self.flags(fail_hosts=[FAILING_HOST], group='fake_driver')
        self.cluster = self.useFixture(cluster.Cluster(
            cells=1, hosts_per_cell=2, host_capacity=BIG_FAILING_HOST))
        self.cell = self.cluster.cells[0]
        self.ctx = cb_context.get_admin_context()

    def cell_conductor(self, owner=None):
        conductor = conductor_manager.CellConductorManager(
            cell_name=self.cell.name,
            database_connection=self.cell.database_connection,
            scheduler=self.cluster.cell_schedulers[self.cell.name],
            compute_rpcapi=compute_rpcapi.ComputeAPI(self.cell.name,
                                                     self.cluster.transport))
        if owner is not None:
            conductor.runner.owner = owner
        return conductor

    def reschedule_to(self, conductor):
        """Boot one server; the failing host casts its reschedule to
        ``conductor``."""
        self.cluster.computes[FAILING_HOST].cell_conductor = conductor
        (uuid,) = self.cluster.boot()
        return uuid

    def saved_flow(self):
        """The reschedule flow the dead conductor saved (waits for it)."""
        found = []

        def saved():
            found[:] = records.unfinished(self.cell.database_connection,
                                          'reschedule', kinds.CELL)
            return found

        self.assertTrue(compute_base.wait_for(saved))
        (flow,) = found
        return flow['uuid']

    def sweep(self, survivor):
        """One sweep of all the survivor's checks; their results."""
        return sweepers.Sweeper(sweepers.checks_for(survivor), 1,
                                'cell1 sweeper').sweep_once(self.ctx)

    def assert_finished_by_the_sweep(self, survivor, uuid, flow_uuid):
        # Younger than the timeout: nothing to do yet.
        self.assertEqual([], [done for done in self.sweep(survivor).values()
                              if any(done.values())])
        self.assertEqual('building', self.cluster.find(uuid)[1].vm_state)
        sweep_base.update_flow_meta(self.cell.database_connection,
                                    flow_uuid,
                                    started_at=sweep_base.ago(TIMEOUT + 1))
        done = self.sweep(survivor)
        self.cluster.wait_for_quiet(timeout=QUIET_TIMEOUT)
        # The alternate builds it (a build the flow could not finish
        # would end ERROR with a fault, which the invariants accept).
        instance = self.cluster.find(uuid)[1]
        self.assertEqual(('active', OTHER_HOST),
                         (instance.vm_state, instance.host))
        self.assertEqual({'UnownedFlows': {'handed_over': 1},
                          'AbandonedFlows': {'settled': 0},
                          'BuildTimeouts': sweep_base.timeouts(0),
                          'StrayClaims': {'released': 0}}, done)
        self.assertTrue(compute_base.wait_for(lambda: not records.unfinished(
            self.cell.database_connection, 'reschedule', kinds.CELL)))
        self.assertEqual({'handed_over': 0},
                         self.sweep(survivor)['UnownedFlows'])
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))


class SavedNeverPostedTest(_Test):
    """With a jobboard: the job was never posted."""

    def test_the_flow_is_posted_again_and_the_build_ends(self):
        redis = self.useFixture(cb_fixtures.Redis())
        self.flags(backend='redis', url=redis.url, namespace=redis.namespace,
                   claim_expiry=CLAIM_EXPIRY, group='jobboard')
        dead = self.cell_conductor(owner='cell1-conductor-gone:1')
        dead.runner.board = DeadBoard()
        uuid = self.reschedule_to(dead)
        flow_uuid = self.saved_flow()
        survivor = self.cell_conductor()
        self.addCleanup(survivor.stop)
        survivor.start(self.ctx)
        self.assert_finished_by_the_sweep(survivor, uuid, flow_uuid)


class PostedOnTheOldBoardTest(_Test):
    """Upgrade: the job is on the board a cell had before its own prefix.

    Versions before the per-cell key prefix posted a cell's reschedules
    on ``NAMESPACE.reschedule.CELL``, which the upgraded conductors no
    longer read: the sweep posts the flow on the cell's board.
    """

    def test_the_flow_is_posted_on_the_cells_board_and_the_build_ends(self):
        redis = self.useFixture(cb_fixtures.Redis())
        self.flags(backend='redis', url=redis.url, namespace=redis.namespace,
                   claim_expiry=CLAIM_EXPIRY, group='jobboard')
        old = self.cell_conductor(owner='cell1-conductor-old:1')
        conf = jobboard._redis_conf(redis.url)
        old_name = f'{redis.namespace}.reschedule.{self.cell.name}'
        conf['namespace'] = old_name
        old.runner.board = jobboard.ExpiringRedisJobBoard(
            old_name, conf, CLAIM_EXPIRY, kind='reschedule',
            persistence=flow_db.get_backend(self.cell.database_connection))
        old.runner.board.connect()
        self.addCleanup(old.runner.board.close)
        uuid = self.reschedule_to(old)
        flow_uuid = self.saved_flow()
        self.assertEqual({flow_uuid},
                         jobboard.referenced_flow_uuids(old.runner.board))
        survivor = self.cell_conductor()
        self.addCleanup(survivor.stop)
        survivor.start(self.ctx)
        self.assertEqual(f'{redis.namespace}.cell.cell1.reschedule',
                         survivor.runner.board.name)
        self.assert_finished_by_the_sweep(survivor, uuid, flow_uuid)
        # The old job stays where it was, for the operator to delete.
        self.assertEqual(1, old.runner.board.job_count)


class SavedNeverRunTest(_Test):
    """Without a jobboard: killed as it started the flow's first step."""

    def test_a_flow_of_a_dead_process_of_this_host_is_resumed(self):
        cast = Cast()
        uuid = self.reschedule_to(cast)
        self.assertTrue(compute_base.wait_for(lambda: cast.calls))
        ((context, kwargs),) = cast.calls
        dead = self.cell_conductor(
            owner=f'{CONF.host}:{sweep_base.dead_pid()}')
        dead.runner.flow_listeners = [lambda engine_: KillAt(
            engine_, 'claim-alternate')]
        self.assertRaises(Killed, dead.build_instances,
                          context, **kwargs)
        flow_uuid = self.saved_flow()
        survivor = self.cell_conductor()
        self.addCleanup(survivor.stop)
        self.assert_finished_by_the_sweep(survivor, uuid, flow_uuid)
