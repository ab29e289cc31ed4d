"""Jobs planted on the boards run nothing, and the conductor goes on.

Anyone who reaches a board (without Redis ACLs, any cell's conductors)
can post jobs on it. Planted here, on the boot board and on cell1's:
jobs naming planted flow rows (``tests.functional.planted``), a job
carrying TaskFlow's own ``store`` beside a real flow's uuid, one naming
a factory the way TaskFlow's own conductor would read it, one of the
other kind, one whose details are not even a mapping. The conductor
claims each, moves it to the board's trash with a WARNING and runs
nothing of it; a real request still builds, and the real flow that a
planted job named is posted properly by the sweep and finishes.
In-process (SQLite, ``fake://``) against the local Redis.
"""

import os
import time
import uuid

from cellboot.conductor import manager
from cellboot.conductor import sweepers
from cellboot.compute import rpcapi as compute_rpcapi
from cellboot import context as cb_context
from cellboot.flowrun import records
from cellboot.flowrun import jobboard
from cellboot.flowrun import lookup
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional import cluster
from tests.functional import planted
from tests.functional.sweepers import base as sweep_base

CLAIM_EXPIRY = 2.0
TIMEOUT = 20


class PlantedJobsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.redis = self.useFixture(cb_fixtures.Redis())
        self.flags(backend='redis', url=self.redis.url,
                   namespace=self.redis.namespace,
                   claim_expiry=CLAIM_EXPIRY, group='jobboard')
        self.flags(orphan_build_request_timeout=60, sweep_interval=3600,
                   group='conductor')
        self.cluster = self.useFixture(cluster.Cluster(cells=1,
                                                       hosts_per_cell=2))
        self.marker = os.path.join(self.state_path, 'taskflow-factory-ran')
        self.addCleanup(self.assertFalse, os.path.exists(self.marker))

    def _board(self, kind, persistence, cell_name=None):
        """The board, as whoever plants jobs on it reaches it."""
        board = jobboard.connect(kind, persistence, cell_name=cell_name)
        self.addCleanup(board.close)
        return board

    def _plant_jobs(self, board, kind, plants, real_flow_uuid):
        """Post the planted jobs; how many there are."""
        for flow_uuid in plants.uuids.values():
            self.assertIsNotNone(jobboard.post(board, kind, flow_uuid))
        other = 'reschedule' if kind == 'boot' else 'boot'
        hostile = [
            (jobboard.job_uuid(real_flow_uuid),
             {'flow_uuid': real_flow_uuid, 'kind': kind,
              'store': {'request_spec': {'flavor': {'vcpus': 10 ** 6}}}}),
            (str(uuid.uuid4()),
             {'factory': {'name': 'os.system',
                          'args': [f'touch {self.marker}'], 'kwargs': {}},
              'store': {}}),
            (str(uuid.uuid4()), {'flow_uuid': real_flow_uuid,
                                 'kind': other}),
            (str(uuid.uuid4()), ['flow_uuid', real_flow_uuid]),
            (str(uuid.uuid4()), {'flow_uuid': 'not-a-uuid', 'kind': kind}),
        ]
        for job_uuid, details in hostile:
            self.assertIsNotNone(board.post_once(job_uuid, 'planted',
                                                 details=details))
        return len(plants.uuids) + len(hostile)

    def _wait_for_trash(self, board, count):
        deadline = time.monotonic() + TIMEOUT
        while (board.job_count or
               self.redis.client.hlen(board.trash_key) < count) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual((0, count),
                         (board.job_count,
                          self.redis.client.hlen(board.trash_key)))

    def _saved_flow(self, conductor, store, instance_uuids, key):
        """A real flow, saved and never posted (its poster died)."""
        meta = records.flow_meta(conductor.KIND, instance_uuids,
                                 self.cluster.ctx, owner='gone:1',
                                 posted=True)
        flow_detail, _created = records.create(
            conductor.KIND, store, conductor.persistence(),
            uuid_=records.flow_uuid(conductor.KIND, key), meta=meta)
        return flow_detail.uuid

    def _state(self, persistence, flow_uuid):
        return lookup.get_flow(persistence, flow_uuid)['state']

    def _sweep(self, conductor, persistence, flow_uuid):
        """Age the real flow, and sweep: it is posted properly."""
        sweep_base.update_flow_meta(persistence, flow_uuid,
                                    started_at=sweep_base.ago(120))
        return sweepers.Sweeper(sweepers.checks_for(conductor), 1,
                                'sweeper').sweep_once(
            cb_context.get_admin_context())

    def test_the_boot_board(self):
        plants = planted.Plants(self.state_path, 'boot')
        plants.plant(self.cluster.flow_url)
        conductor = manager.SuperConductorManager(
            scheduler=self.cluster.scheduler)
        conductor.runner.owner = 'conductor:1'
        build_requests, specs = self.cluster.build_request(1)
        (orphan,) = [br['instance_uuid'] for br in build_requests]
        real = self._saved_flow(
            conductor,
            {'instance_uuids': [orphan],
             'build_requests': {orphan: build_requests[0]},
             'request_spec': specs[0]}, [orphan],
            records.boot_flow_key(build_requests))
        board = self._board('boot', self.cluster.flow_url)
        planted_jobs = self._plant_jobs(board, 'boot', plants, real)

        self.addCleanup(conductor.stop)
        with self.assertLogs('cellboot.flowrun.conductor', 'WARNING') as log:
            conductor.start(self.cluster.ctx)
            self._wait_for_trash(board, planted_jobs)
        warnings = '\n'.join(log.output)
        self.assertEqual(planted_jobs,
                         warnings.count('is moved to the board\'s trash'))
        self.assertIn('is not a job cellboot posts', warnings)
        self.assertIn('names a corrupt flow', warnings)
        self.assertEqual([], plants.ran())
        self.assertIn(self._state(self.cluster.flow_url, real),
                      (None, 'PENDING'))

        # The conductor goes on: a new request builds, and the real flow
        # the planted job named is posted by the sweep and finishes.
        (new,) = self.cluster.boot()
        done = self._sweep(conductor, self.cluster.flow_url, real)
        self.assertEqual(1, done['OrphanBuildRequests']['handed_over'])
        self.cluster.wait_for_quiet()
        self.assertEqual(('active', 'active', 'SUCCESS'),
                         (self.cluster.find(new)[1].vm_state,
                          self.cluster.find(orphan)[1].vm_state,
                          self._state(self.cluster.flow_url, real)))

    def test_a_cells_board(self):
        cell = self.cluster.cells[0]
        plants = planted.Plants(self.state_path, 'reschedule')
        plants.plant(cell.database_connection)
        conductor = manager.CellConductorManager(
            cell_name=cell.name, database_connection=cell.database_connection,
            scheduler=self.cluster.cell_schedulers[cell.name],
            compute_rpcapi=compute_rpcapi.ComputeAPI(cell.name,
                                                     self.cluster.transport))
        # A reschedule flow of an instance that is not there: it ends
        # REVERTED once run (no alternate), which says it ran.
        instance_uuid = str(uuid.uuid4())
        real = self._saved_flow(
            conductor,
            {'instance': {'uuid': instance_uuid, 'host': 'cell1-host1'},
             'request_spec': {}, 'host_list': [],
             'build_retry': {'num_attempts': 1, 'hosts': []},
             'max_attempts': 3}, [instance_uuid], f'{instance_uuid}:1')
        board = self._board('reschedule', cell.database_connection,
                            cell_name=cell.name)
        planted_jobs = self._plant_jobs(board, 'reschedule', plants, real)

        self.addCleanup(conductor.stop)
        with self.assertLogs('cellboot.flowrun.conductor', 'WARNING') as log:
            conductor.start(self.cluster.ctx)
            self._wait_for_trash(board, planted_jobs)
        self.assertEqual(planted_jobs, '\n'.join(log.output).count(
            'is moved to the board\'s trash'))
        self.assertEqual([], plants.ran())
        self.assertIn(self._state(cell.database_connection, real),
                      (None, 'PENDING'))

        done = self._sweep(conductor, cell.database_connection, real)
        self.assertEqual(1, done['UnownedFlows']['handed_over'])
        deadline = time.monotonic() + TIMEOUT
        while self._state(cell.database_connection, real) in (
                None, 'PENDING', 'RUNNING', 'REVERTING') and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual('REVERTED',
                         self._state(cell.database_connection, real))
