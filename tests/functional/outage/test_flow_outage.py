"""A super conductor whose API or flow database goes away mid-flow.

The boot flow's steps write to the API database (claims through the
scheduler, mappings, build requests) and the engine writes the flow's
progress to the flow database. Each test cuts one of them as a step
starts (or, for the flow database, as a step ends, so that the engine's
next write meets it) and brings it back ``OUTAGE_SECONDS`` later: the
step, or the write, rides it out and the flow ends SUCCESS, its
instances ACTIVE with one claim each, every step run to SUCCESS.
"""

from taskflow import states

from cellboot.flowrun import lookup
from tests.functional.outage import base


class FlowOutageTest(base.OutageTestCase):
    """On MariaDB."""

    CUT = ('api', 'flows')

    def boot_and_check(self, count=2):
        uuids = self.cluster.boot(count=count)
        self.cluster.wait_for_quiet()
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
