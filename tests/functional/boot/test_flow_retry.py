"""``retrying.retry``: a FAILURE or stuck flow finished by a conductor.

In-process deployments (``cluster``) on SQLite and MariaDB, without a
jobboard. A conductor "dies" as in ``test_resume`` (a BaseException
leaves the engine between two atoms; its owner names a process that was
really SIGKILLed, so that the owner predicate sees a dead pid). A
FAILURE flow is planted from such a flow: the step under way had its
revert fail, the flow ended FAILURE, which no conductor ever resumes on
its own. The retry hands it back; a conductor of the host finishes it
from its last good atom and the servers go ACTIVE with nothing leaked.
"""

import os
import signal
import subprocess

import sqlalchemy as sa
from taskflow import states

from cellboot.conductor import manager
from cellboot.conf import CONF
from cellboot import exception
from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import fencing
from cellboot.flowrun import jobboard
from cellboot.flowrun import lookup
from cellboot.flowrun import owners
from cellboot.flowrun import retrying
from cellboot.flowrun import tables
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional.boot import test_resume
from tests.functional import cluster
from tests.functional import invariants


def sigkilled_pid():
    """The pid of a process this test SIGKILLed (a dead conductor's)."""
    process = subprocess.Popen(['sleep', '60'])
    process.send_signal(signal.SIGKILL)
    process.wait()
    return process.pid


class _Deployment:
    """A deployment whose conductors die, and how to look at its flows."""

    BACKEND = 'sqlite'

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster.Cluster(
            cells=1, hosts_per_cell=2, backend=self.BACKEND))

    def live_pid(self):
        process = subprocess.Popen(['sleep', '60'])
        self.addCleanup(process.wait)
        self.addCleanup(process.kill)
        return process.pid

    def boot_and_kill(self, owner, atom='create-in-cell', count=2):
        """Boot on a conductor named ``owner`` that dies after ``atom``;
        ``(flow uuid, instance uuids)``."""
        dying = manager.SuperConductorManager(
            scheduler=self.cluster.scheduler)
        dying.runner.owner = owner
        dying.runner.flow_listeners = [
            lambda engine: test_resume.KillAfter(engine, atom)]
        build_requests, specs = self.cluster.build_request(count)
        self.assertRaises(test_resume.Killed,
                          dying.schedule_and_build_instances,
                          self.cluster.ctx, build_requests, specs)
        uuids = [br['instance_uuid'] for br in build_requests]
        (flow,) = self.cluster.flows(uuids[0])
        return flow['uuid'], uuids

    def plant_failure(self, flow_uuid):
        """What a revert that failed leaves: the step under way failed
        to revert, the flow ended FAILURE."""
        engine = flow_db.get_backend(self.cluster.flow_url).engine
        atoms = tables.ATOMS
        with engine.begin() as conn:
            conn.execute(sa.update(atoms).where(
                atoms.c.parent_uuid == flow_uuid,
                atoms.c.name == 'claim-pool').values(
                state=states.REVERT_FAILURE, intention=states.REVERT))
            conn.execute(sa.update(tables.FLOWS).where(
                tables.FLOWS.c.uuid == flow_uuid).values(
                state=states.FAILURE))

    def restart(self, quiet=True):
        """A conductor of this host starts: ``(flows resumed, atoms run)``.

        ``quiet``: wait until the deployment is settled.
        """
        ran = []
        survivor = manager.SuperConductorManager(
            scheduler=self.cluster.scheduler)
        survivor.runner.owner = f'{CONF.host}:{os.getpid()}'
        survivor.runner.flow_listeners = [
            lambda engine: test_resume.RunRecorder(engine, ran)]
        self.addCleanup(survivor.stop)
        resumed = survivor.start(self.cluster.ctx)
        if quiet:
            self.cluster.wait_for_quiet()
        return resumed, ran

    def flow(self, flow_uuid):
        return lookup.get_flow(self.cluster.flow_url, flow_uuid)

    def generation(self, flow_uuid):
        engine = flow_db.get_backend(self.cluster.flow_url).engine
        with engine.connect() as conn:
            return fencing.current(conn, flow_uuid)

    def assertFinished(self, flow_uuid, uuids):
        self.assertEqual('SUCCESS', self.flow(flow_uuid)['state'])
        self.assertEqual({'active'}, {self.cluster.find(uuid)[1].vm_state
                                      for uuid in uuids})
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))


class _RetryTests(_Deployment):

    # -- the specification -------------------------------------------------

    def test_a_failure_flow_runs_again_from_its_last_good_atom(self):
        flow_uuid, uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}')
        self.plant_failure(flow_uuid)
        before = self.generation(flow_uuid)

        done = retrying.retry(self.cluster.ctx, flow_uuid, 'operator-1')

        self.assertEqual(('FAILURE', ['claim-pool']),
                         (done['from_state'], done['reset_atoms']))
        flow = self.flow(flow_uuid)
        self.assertEqual(('SUSPENDED', CONF.host),
                         (flow['state'], flow['meta']['owner']))
        (note,) = flow['meta']['retries']
        self.assertEqual(('operator-1', 'FAILURE'),
                         (note['by'], note['from_state']))
        self.assertEqual(before + 1, self.generation(flow_uuid))
        resumed, ran = self.restart()
        self.assertEqual(1, resumed)
        # schedule ended SUCCESS: its result holds, it is not run again.
        self.assertEqual(test_resume.AFTER_SCHEDULE, ran)
        self.assertFinished(flow_uuid, uuids)

    def test_without_the_retry_a_failure_flow_is_never_resumed(self):
        flow_uuid, _uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}')
        self.plant_failure(flow_uuid)
        self.assertEqual((0, []), self.restart(quiet=False))
        self.assertEqual('FAILURE', self.flow(flow_uuid)['state'])

    def test_a_flow_left_by_a_sigkilled_conductor_is_handed_back(self):
        flow_uuid, uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}', atom='map-instance')
        done = retrying.retry(self.cluster.ctx, flow_uuid, 'operator-1')
        self.assertEqual(('RUNNING', []),
                         (done['from_state'], done['reset_atoms']))
        self.assertIn(f'host {CONF.host}', done['handed_to'])
        resumed, _ran = self.restart()
        self.assertEqual(1, resumed)
        self.assertFinished(flow_uuid, uuids)

    def test_a_flow_a_live_conductor_owns_is_refused_untouched(self):
        flow_uuid, _uuids = self.boot_and_kill(
            f'{CONF.host}:{self.live_pid()}')
        before = (self.flow(flow_uuid), self.generation(flow_uuid))
        exc = self.assertRaises(exception.FlowActionRefused, retrying.retry,
                                self.cluster.ctx, flow_uuid, 'operator-1')
        self.assertIn('is alive and runs it', str(exc))
        self.assertEqual(409, exc.code)
        self.assertEqual(before, (self.flow(flow_uuid),
                                  self.generation(flow_uuid)))

    def test_another_hosts_flow_is_refused_without_a_jobboard(self):
        flow_uuid, _uuids = self.boot_and_kill('elsewhere:4242')
        exc = self.assertRaises(exception.FlowActionRefused, retrying.retry,
                                self.cluster.ctx, flow_uuid, 'operator-1')
        self.assertIn('owned by elsewhere:4242, on another host', str(exc))
        self.assertEqual('RUNNING', self.flow(flow_uuid)['state'])

    def test_a_flow_that_succeeded_is_refused(self):
        (uuid,) = self.cluster.boot(1)
        self.cluster.wait_for_quiet()
        (flow,) = self.cluster.flows(uuid)
        exc = self.assertRaises(exception.FlowActionRefused, retrying.retry,
                                self.cluster.ctx, flow['uuid'], 'op')
        self.assertIn('it ended SUCCESS: nothing is left to do', str(exc))
        self.assertNotIn('retries', self.flow(flow['uuid'])['meta'])

    def test_an_unknown_flow_is_not_found(self):
        self.assertRaises(exception.FlowNotFound, retrying.retry,
                          self.cluster.ctx,
                          '0b8f4d9e-5c1a-4e43-9d0f-7a2c6e1b3f55', 'op')

    def test_a_flow_whose_state_changed_meanwhile_is_refused(self):
        flow_uuid, _uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}')
        self.plant_failure(flow_uuid)
        # As if a conductor had changed it between the read and the
        # retry's transaction.
        exc = self.assertRaises(
            exception.FlowActionRefused, retrying.reopen,
            self.cluster.flow_url, flow_uuid, states.RUNNING, 'op')
        self.assertIn('its state changed meanwhile', str(exc))
        self.assertEqual('FAILURE', self.flow(flow_uuid)['state'])

    def test_a_corrupt_fence_is_refused_and_nothing_changes(self):
        flow_uuid, _uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}')
        self.plant_failure(flow_uuid)
        engine = flow_db.get_backend(self.cluster.flow_url).engine
        with engine.begin() as conn:
            conn.execute(sa.update(fencing.FENCES).where(
                fencing.FENCES.c.flow_uuid == flow_uuid).values(
                generation=-3))
        before = self.flow(flow_uuid)
        exc = self.assertRaises(exception.FlowActionRefused, retrying.retry,
                                self.cluster.ctx, flow_uuid, 'op')
        self.assertIn('has a corrupt fence', str(exc))
        self.assertEqual(before, self.flow(flow_uuid))


class SQLiteRetryTest(_RetryTests, base.TestCase):
    pass


class MySQLRetryTest(_RetryTests, base.TestCase):
    BACKEND = 'mysql'


class JobboardRetryTest(_Deployment, base.TestCase):
    """With a jobboard (real Redis): the board decides who runs a flow.

    The deployment's conductors were started without the board; the
    one a test starts afterwards takes the board's jobs.
    """

    def setUp(self):
        super().setUp()
        redis = self.useFixture(cb_fixtures.Redis())
        self.flags(backend='redis', url=redis.url, namespace=redis.namespace,
                   claim_expiry=5, group='jobboard')

    def board(self):
        board = jobboard.connect('boot', self.cluster.flow_url)
        self.addCleanup(board.close)
        return board

    def test_the_retried_flow_is_posted_and_a_conductor_finishes_it(self):
        # Another host's flow: with a board, no host is needed to see it.
        flow_uuid, uuids = self.boot_and_kill('elsewhere:4242')
        self.plant_failure(flow_uuid)
        done = retrying.retry(self.cluster.ctx, flow_uuid, 'operator-1')
        board = self.board()
        self.assertIn(board.name, done['handed_to'])
        self.assertEqual((True, None),
                         owners.board_holder(board, flow_uuid))
        self.restart()
        self.assertFinished(flow_uuid, uuids)

    def test_a_flow_whose_job_a_conductor_holds_is_refused(self):
        flow_uuid, _uuids = self.boot_and_kill('elsewhere:4242')
        board = self.board()
        job = jobboard.post(board, 'boot', flow_uuid)
        board.claim(job, 'controller9:77')
        before = (self.flow(flow_uuid), self.generation(flow_uuid))
        exc = self.assertRaises(exception.FlowActionRefused, retrying.retry,
                                self.cluster.ctx, flow_uuid, 'operator-1')
        self.assertIn('conductor controller9:77 holds its job', str(exc))
        self.assertEqual(before, (self.flow(flow_uuid),
                                  self.generation(flow_uuid)))
