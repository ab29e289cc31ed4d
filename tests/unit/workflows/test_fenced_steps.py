"""The boot flow's steps act only while their run owns the flow.

A conductor that stalls inside a step (starved of CPU, or waiting on a
slow call) past its claim is taken over by another conductor. When it
wakes up, each step checks the run's fence right before its side effect
outside the flow's records (the scheduler's claims, the cell's
instance, the API's mapping and build request, the cast): the stale run
stops there (FencedOut) and leaves nothing behind. Each test stalls a
step at the last call before its side effect, takes the flow over
meanwhile, and looks at the databases and the casts; the first test is
the control: a run that keeps its flow goes through every step.
"""

import fixtures

from cellboot import exception
from cellboot.flowrun import fencing
from cellboot.workflows.tasks import cells
from cellboot.workflows.tasks import compute
from cellboot.workflows.tasks import mappings
from cellboot.workflows.tasks import schedule
from tests import base
from tests.unit.workflows import fleet


class _FencedStepsTests:
    """Two instances to boot onto h1 and h2 of cell1; a run's fence."""

    def setUp(self):
        super().setUp()
        self.add_host('h1')
        self.add_host('h2')
        self.start_scheduler()
        self.store, self.uuids = self.request(2)
        # Any database holds a fence; the boot flow's is the flow
        # database, here cell1's.
        self.flow = fleet.FlowFence(self.cells[0])
        self.fence = self.flow.fence

    def _schedule(self, scheduler=None, resumed=False):
        self.store['selections'] = schedule.Schedule('schedule').execute(
            self.ctx, scheduler or self.scheduler,
            self.store['request_spec'], self.uuids, resumed=resumed,
            fence=self.fence)
        self.store['cells'] = cells.MapHostToCell('map-host-to-cell').execute(
            self.ctx, self.scheduler, self.store['selections'],
            self.store['build_requests'], self.store['request_spec'])

    def _create(self, cell_mappings=None):
        store = self.store
        store['created'] = cells.CreateInCell('create-in-cell').execute(
            self.ctx, self.scheduler, store['cells'], store['selections'],
            store['build_requests'], store['request_spec'],
            cell_mappings or self.cell_mappings, fence=self.fence)

    def _map(self):
        self.store['mapped'] = mappings.MapInstance('map-instance').execute(
            self.ctx, self.scheduler, self.store['cells'],
            self.store['created'], self.cell_mappings, fence=self.fence)

    def _settle(self):
        self.store['settled'] = mappings.DeleteBuildRequest(
            'delete-build-request').execute(
            self.ctx, self.scheduler, self.store['cells'],
            self.store['mapped'], self.cell_mappings, fence=self.fence)

    def _cast(self, compute_rpcapi=None):
        return compute.CastToCompute('cast-to-compute').execute(
            self.ctx, self.scheduler, compute_rpcapi or self.compute,
            self.store['cells'], self.store['selections'],
            self.store['settled'], self.store['request_spec'],
            self.cell_mappings, fence=self.fence)

    def _assert_fenced_out(self, step):
        with self.assertRaises(fencing.FencedOut) as raised:
            step()
        self.assertEqual((self.flow.flow_uuid, fencing.FIRST),
                         (raised.exception.flow_uuid, raised.exception.token))

    def test_a_run_that_owns_its_flow_goes_through_every_step(self):
        self._schedule()
        self._create()
        self._map()
        self._settle()
        self.assertEqual(dict.fromkeys(self.uuids, 'ok'), self._cast())
        self.assertEqual(sorted(self.uuids),
                         sorted(self.compute.by_instance()))
        self.assertEqual(['cell1', 'cell1'],
                         [self.mapped_cell(uuid) for uuid in self.uuids])

    def test_schedule_taken_over_while_releasing_claims_nothing(self):
        # A resumed run gives back the dead run's claims first; it
        # stalls there and loses the flow: it must not claim anew.
        stalling = fleet.Stalling(self.scheduler, 'release_resources',
                                  self.flow.take_over)
        self._assert_fenced_out(lambda: self._schedule(stalling,
                                                       resumed=True))
        for uuid in self.uuids:
            self.assertEqual({}, self.held(uuid))

    def test_create_in_cell_taken_over_creates_nothing(self):
        self._schedule()
        stalling = fleet.Stalling(self.cell_mappings, 'get',
                                  self.flow.take_over)
        self._assert_fenced_out(lambda: self._create(stalling))
        for uuid in self.uuids:
            self.assertRaises(exception.InstanceNotFound, self.instance_in,
                              self.cells[0], uuid, read_deleted=True)

    def test_map_instance_taken_over_maps_nothing(self):
        self._schedule()
        self._create()
        self.flow.take_over()
        self._assert_fenced_out(self._map)
        self.assertEqual([None, None],
                         [self.mapped_cell(uuid) for uuid in self.uuids])

    def test_delete_build_request_taken_over_deletes_nothing(self):
        self._schedule()
        self._create()
        self._map()
        self.flow.take_over()
        self._assert_fenced_out(self._settle)
        self.assertTrue(all(self.has_build_request(uuid)
                            for uuid in self.uuids))

    def test_cast_taken_over_after_the_first_cast_sends_no_more(self):
        self._schedule()
        self._create()
        self._map()
        self._settle()
        # One cast at a time, so that the takeover falls between two:
        # with several in flight at once (cellboot.rpc.fanout), those
        # already checked go through, as a cast right after its check
        # would, and the next ones are not sent.
        self.useFixture(fixtures.MockPatch('cellboot.rpc.fanout.WIDTH', 1))
        # The stale run stalls right after its first cast.
        self._assert_fenced_out(lambda: self._cast(
            lambda cell: fleet.Stalling(self.compute(cell),
                                        'build_and_run_instance',
                                        self.flow.take_over)))
        self.assertEqual(1, len(self.compute.casts))

    def test_a_fresh_proof_is_not_queried_again(self):
        # What makes the checks free in a boot whose steps take
        # milliseconds: a proof younger than ``fresh`` stands.
        flow = fleet.FlowFence(self.cells[0], fresh=60.0)
        flow.fence.check()
        flow.take_over()
        flow.fence.check()
        stale = fencing.Fence(flow.flow_uuid, fencing.FIRST, flow.engine,
                              fresh=60.0)
        self.assertRaises(fencing.FencedOut, stale.check)


class SQLiteFencedStepsTest(_FencedStepsTests, base.SQLiteMixin,
                            fleet.FleetTestCase):
    pass


class MySQLFencedStepsTest(_FencedStepsTests, base.MySQLMixin,
                           fleet.FleetTestCase):
    pass


class PostgreSQLFencedStepsTest(_FencedStepsTests, base.PostgreSQLMixin,
                                fleet.FleetTestCase):
    pass
