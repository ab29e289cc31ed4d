"""Conductors whose databases go away mid-flow.

The boot flow's steps write to the API database (claims through the
scheduler, mappings, build requests) and the engine writes the flow's
progress to the flow database. Each test cuts one of them as a step
starts (or, for the flow database, as a step ends, so that the engine's
next write meets it) and brings it back ``OUTAGE_SECONDS`` later: the
step, or the write, rides it out and the flow ends SUCCESS, its
instances ACTIVE with one claim each, every step run to SUCCESS. The
same for a cell conductor's reschedule flow and its cell database.
"""

import functools

import fixtures
import pymysql
from taskflow import states

from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import lookup
from cellboot.workflows.tasks import alternates
from tests.functional.outage import base


class FlowOutageTest(base.OutageTestCase):
    """On MariaDB."""

    CUT = ('api', 'flows')

    def boot_and_check(self, count=2):
        uuids = self.cluster.boot(count=count)
        self.wait_for_quiet()
        self.assertTrue(getattr(self, '_was_cut', False))
        self.assert_active(uuids)
        (flow,) = self.cluster.flows(uuids[0])
        self.assertEqual(states.SUCCESS, flow['state'])
        atoms = lookup.get_flow(self.cluster.flow_url, flow['uuid'])['atoms']
        self.assertEqual({states.SUCCESS},
                         {atom['state'] for atom in atoms}, atoms)
        self.assert_rode_it_out()
        return uuids

    def test_schedule_rides_out_an_api_database_outage(self):
        # The scheduler's claims fail; the step runs again as a resumed
        # one would (releasing what it may have claimed first).
        self.cut_when('schedule', names=['api'])
        self.boot_and_check()

    def test_map_instance_rides_out_an_api_database_outage(self):
        self.cut_when('map-instance', names=['api'])
        self.boot_and_check()

    def test_the_flow_s_writes_ride_out_a_flow_database_outage(self):
        # Cut as create-in-cell ends: its outcome is written when
        # map-instance starts, into a database that is not there.
        self.cut_when('create-in-cell', state=states.SUCCESS,
                      names=['flows'])
        self.boot_and_check()

    def test_both_at_once(self):
        self.cut_when('delete-build-request')
        self.boot_and_check()


class PostgreSQLFlowOutageTest(FlowOutageTest):
    """The same on PostgreSQL."""

    BACKEND = 'postgresql'


class CellOutageTest(base.OutageTestCase):
    """The boot flow's steps that write to the chosen cell's database."""

    CUT = ('cell1',)

    def boot_and_check(self):
        uuids = self.cluster.boot(count=2)
        self.wait_for_quiet()
        self.assertTrue(self._was_cut)
        self.assert_active(uuids)
        (flow,) = self.cluster.flows(uuids[0])
        self.assertEqual(states.SUCCESS, flow['state'])
        self.assert_rode_it_out()

    def test_create_in_cell_waits_for_the_cell_rather_than_bury(self):
        self.cut_when('create-in-cell')
        self.boot_and_check()

    def test_cast_to_compute_waits_for_the_cell(self):
        self.cut_when('cast-to-compute')
        self.boot_and_check()


class FlowSaveOutageTest(base.OutageTestCase):
    """A cast that arrives while its flow cannot be saved waits for it."""

    CUT = ('flows',)

    def assert_booted(self, uuids):
        self.assert_active(uuids)
        (flow,) = self.cluster.flows(uuids[0])
        self.assertEqual(states.SUCCESS, flow['state'])

    def test_the_flow_is_saved_once_the_database_is_back(self):
        self.cut_for()
        uuids = self.cluster.boot(count=2)
        self.wait_for_quiet()
        self.assert_booted(uuids)
        self.assert_rode_it_out()

    def test_a_save_that_committed_and_lost_its_answer_runs_its_flow(self):
        # The worst case: the flow is saved, and the conductor is told
        # the connection was lost. Its retry finds the flow it saved.
        dialect = flow_db.get_backend(self.cluster.flow_url).engine.dialect
        real = dialect.do_commit
        lost = []

        def do_commit(dbapi_connection):
            real(dbapi_connection)
            if not lost:
                lost.append(1)
                raise pymysql.err.OperationalError(
                    2013, 'Lost connection to MySQL server during query')

        self.useFixture(fixtures.MockPatch('tenacity.nap.time.sleep'))
        dialect.do_commit = do_commit
        self.addCleanup(vars(dialect).pop, 'do_commit', None)
        uuids = self.cluster.boot(count=1)
        self.wait_for_quiet()
        self.assertEqual([1], lost)
        self.assert_booted(uuids)
        self.assertIn('saving its flow', self.log.output)


class RescheduleOutageTest(base.OutageTestCase):
    """A cell conductor whose cell database goes away mid-reschedule.

    ``cell1-host1`` (the scheduler's first choice, the bigger host) fails
    every build; the cell conductor's reschedule flow claims the
    alternate and moves the instance onto it, in the cell database,
    which is cut as ``claim-alternate`` starts.
    """

    CUT = ('cell1',)
    HOSTS_PER_CELL = 2
    HOST_CAPACITY = {'cell1-host1': {'memory_mb': 16384}}

    def test_claim_alternate_rides_out_a_cell_database_outage(self):
        self.flags(fail_hosts=['cell1-host1'], group='fake_driver')
        execute = alternates.ClaimAlternate.execute

        @functools.wraps(execute)
        def cut_then_execute(task, *args, **kwargs):
            # Times the cut only; the step's own code runs.
            self.cut_for()
            return execute(task, *args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'cellboot.workflows.tasks.alternates.ClaimAlternate.execute',
            cut_then_execute))
        (uuid,) = self.cluster.boot()
        self.wait_for_quiet()
        self.assertTrue(self._was_cut)
        self.assert_active([uuid])
        _cell, instance = self.cluster.find(uuid)
        self.assertEqual('cell1-host2', instance.host)
        flows = {flow['kind']: flow for flow in self.cluster.flows(uuid)}
        self.assertEqual(states.SUCCESS, flows['reschedule']['state'])
        self.assert_rode_it_out()

    def test_a_reschedule_waits_for_its_flow_to_be_saved(self):
        # The cell database is cut as the failing host hands the build
        # back: the cell conductor cannot save the reschedule flow yet.
        self.flags(fail_hosts=['cell1-host1'], group='fake_driver')
        host1 = self.cluster.computes['cell1-host1']
        conductor = host1.cell_conductor

        class CutFirst:
            def __getattr__(self_, name):
                return getattr(conductor, name)

            def build_instances(self_, *args, **kwargs):
                self.cut_for()
                conductor.build_instances(*args, **kwargs)

        host1.cell_conductor = CutFirst()
        (uuid,) = self.cluster.boot()
        self.wait_for_quiet()
        self.assertTrue(self._was_cut)
        self.assert_active([uuid])
        flows = {flow['kind']: flow for flow in self.cluster.flows(uuid)}
        self.assertEqual(states.SUCCESS, flows['reschedule']['state'])
        self.assert_rode_it_out()
        self.assertIn('saving its flow', self.log.output)


class PostgreSQLCellOutageTest(CellOutageTest):
    """The same on PostgreSQL."""

    BACKEND = 'postgresql'


class PostgreSQLRescheduleOutageTest(RescheduleOutageTest):
    """The same on PostgreSQL."""

    BACKEND = 'postgresql'
