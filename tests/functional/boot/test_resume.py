"""A conductor that dies midway: the next one resumes its boot flows.

Embedded mode (no jobboard), SQLite and ``fake://`` in-process. The
conductor "dies" the way a killed process does for TaskFlow: a
BaseException (which nothing in the engine catches) leaves the engine
between two atoms, so the flow stays RUNNING in the flow database with
the atoms before it SUCCESS, and nothing reverts. A new conductor
manager of the same host then starts and finishes the flow.
"""


import prometheus_client
from taskflow.listeners import base as listener_base
from taskflow import states

from cellboot.conductor import manager
from cellboot.flowrun import lookup
from tests import base
from tests.functional import cluster
from tests.functional import invariants
from tests.functional.sweepers import base as sweep_base


# The boot flow's atoms after schedule, in order: all rerun-safe
# (cellboot.flowrun.storage), so a run killed after schedule's outcome
# was written runs them all again when resumed.
AFTER_SCHEDULE = ['claim-pool', 'map-host-to-cell', 'create-in-cell',
                  'map-instance', 'delete-build-request', 'cast-to-compute']


class Killed(BaseException):
    """The conductor process is gone (SIGKILL, power loss)."""


class KillAfter(listener_base.Listener):
    """Kills the conductor once ``atom`` reached ``state``."""

    def __init__(self, engine, atom, state=states.SUCCESS):
        super().__init__(engine, task_listen_for=[state],
                         flow_listen_for=[], retry_listen_for=[])
        self.atom = atom

    def _task_receiver(self, state, details):
        if details['task_name'] == self.atom:
            raise Killed(f'killed after {self.atom} {state}')


class DieAfterClaiming:
    """The scheduler of a conductor killed while ``schedule`` runs.

    The scheduler claims the hosts it chose, then the conductor dies
    before the step's result (or even the flow's RUNNING state, which
    the engine defers) is written: like a SIGKILL, the engine writes
    nothing more (a BaseException skips its last flush).
    """

    def __init__(self, scheduler):
        self._scheduler = scheduler

    def __getattr__(self, name):
        return getattr(self._scheduler, name)

    def select_destinations(self, *args, **kwargs):
        self._scheduler.select_destinations(*args, **kwargs)
        raise Killed('killed in schedule, after the scheduler claimed')


class RunRecorder(listener_base.Listener):
    """Records the names of the atoms an engine runs to their end.

    (A resumed atom left RUNNING is run again without a new RUNNING
    notification: its SUCCESS is what tells that it ran.)
    """

    def __init__(self, engine, ran):
        super().__init__(engine, task_listen_for=[states.SUCCESS],
                         flow_listen_for=[], retry_listen_for=[])
        self.ran = ran

    def _task_receiver(self, state, details):
        self.ran.append(details['task_name'])


class _KilledConductorTest(base.TestCase):
    """A cluster, a conductor that dies at an atom, and its successor."""

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster.Cluster(cells=1,
                                                       hosts_per_cell=2))

    def _boot_and_kill(self, atom, state=states.SUCCESS, count=2):
        """Boot ``count`` servers on a conductor killed at ``atom``."""
        dying = manager.SuperConductorManager(
            scheduler=self.cluster.scheduler)
        dying.runner.owner = 'conductor:1'
        dying.runner.flow_listeners = [
            lambda engine: KillAfter(engine, atom, state)]
        build_requests, specs = self.cluster.build_request(count)
        self.assertRaises(Killed, dying.schedule_and_build_instances,
                          self.cluster.ctx, build_requests, specs)
        return [br['instance_uuid'] for br in build_requests]

    def _restart(self, owner='conductor:2'):
        """A new conductor manager starts; returns the atoms it ran.

        ``owner``: its name; a restarted process has another pid than
        the dead one, hence another name.
        """
        ran = []
        survivor = manager.SuperConductorManager(
            scheduler=self.cluster.scheduler)
        survivor.runner.owner = owner
        survivor.runner.flow_listeners = [
            lambda engine: RunRecorder(engine, ran)]
        self.addCleanup(survivor.stop)
        self.assertEqual(1, survivor.start(self.cluster.ctx))
        self.cluster.wait_for_quiet()
        return ran


class ResumeAfterCrashTest(_KilledConductorTest):

    def test_a_killed_flow_is_left_running_with_its_first_atoms_done(self):
        (uuid,) = self._boot_and_kill('create-in-cell', count=1)
        (flow,) = self.cluster.flows(uuid)
        atoms = {atom['name']: atom['state'] for atom in
                 lookup.get_flow(self.cluster.flow_url, flow['uuid'])['atoms']}
        # Written last before claim-pool started: schedule's outcome.
        # The successes of the rerun-safe atoms after it wait for the
        # next write that something needs (here: the end), and were
        # lost with the process.
        self.assertEqual(
            ('RUNNING', 'SUCCESS', 'RUNNING', 'PENDING', 'PENDING',
             'PENDING'),
            (flow['state'], atoms['schedule'], atoms['claim-pool'],
             atoms['map-host-to-cell'], atoms['create-in-cell'],
             atoms['map-instance']))

    def test_the_next_conductor_finishes_it_without_redoing_schedule(self):
        # schedule's outcome was written before the next atom ran; those
        # of map-host-to-cell and create-in-cell were not, so they run
        # again (as replays).
        uuids = self._boot_and_kill('create-in-cell')
        ran = self._restart()
        self.assertEqual(AFTER_SCHEDULE, ran)
        self.assertEqual({'active'}, {self.cluster.find(uuid)[1].vm_state
                                      for uuid in uuids})
        (flow,) = self.cluster.flows(uuids[0])
        self.assertEqual('SUCCESS', flow['state'])
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_the_flow_meta_records_the_resumption(self):
        (uuid,) = self._boot_and_kill('schedule', count=1)
        self._restart()
        (flow,) = self.cluster.flows(uuid)
        (resumption,) = flow['meta']['resumptions']
        # Killed before anything of the run was written: the flow looks
        # never started, but its owner is gone.
        self.assertEqual(('PENDING', 'conductor:2'),
                         (resumption['from_state'], resumption['by']))
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_the_resumption_is_counted(self):
        def resumed():
            return prometheus_client.REGISTRY.get_sample_value(
                'cellboot_flows_resumed_total', {'kind': 'boot'}) or 0

        self._boot_and_kill('map-instance', count=1)
        before = resumed()
        self._restart()
        self.assertEqual(before + 1, resumed())

    def test_a_step_killed_while_running_is_replayed_harmlessly(self):
        # The cast may or may not have left: the replayed cast-to-compute
        # and the compute host's idempotence make it one build either way.
        uuids = self._boot_and_kill('cast-to-compute', states.RUNNING)
        ran = self._restart()
        # Every atom after schedule is rerun-safe: none wrote its
        # success before the cast; all replay.
        self.assertEqual(AFTER_SCHEDULE, ran)
        self.assertEqual({'active'}, {self.cluster.find(uuid)[1].vm_state
                                      for uuid in uuids})
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_a_replayed_build_request_removal_keeps_the_server(self):
        # Killed once the build requests were removed, before that was
        # recorded: the resumed step finds them gone, which is its own
        # earlier work and not the owner's delete.
        uuids = self._boot_and_kill('delete-build-request')
        self._restart()
        self.assertEqual({'active'}, {self.cluster.find(uuid)[1].vm_state
                                      for uuid in uuids})
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_a_conductor_killed_in_schedule_leaks_no_claim(self):
        # Killed after the scheduler claimed, before anything of the run
        # was written: the flow looks never started, but its owner is
        # gone (a restarted process has another pid), so the restarted
        # conductor's schedule gives back what the dead run claimed. One
        # instance: the dead claim weighs on its host, so the next run
        # picks the other host, where a leak would show.
        scheduler = DieAfterClaiming(self.cluster.scheduler)
        dying = manager.SuperConductorManager(scheduler=scheduler)
        dying.runner.owner = 'conductor:1'
        build_requests, specs = self.cluster.build_request(1)
        self.assertRaises(Killed, dying.schedule_and_build_instances,
                          self.cluster.ctx, build_requests, specs)
        uuids = [br['instance_uuid'] for br in build_requests]
        (flow,) = self.cluster.flows(uuids[0])
        self.assertIn(flow['state'], (None, 'PENDING'))
        self.assertEqual('schedule', self._restart(owner='conductor:2')[0])
        self.assertEqual({'active'}, {self.cluster.find(uuid)[1].vm_state
                                      for uuid in uuids})
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))
        (flow,) = self.cluster.flows(uuids[0])
        (resumption,) = flow['meta']['resumptions']
        self.assertEqual(('conductor:2', 'PENDING'),
                         (resumption['by'], resumption['from_state']))


class FlowsOfEarlierVersionsTest(_KilledConductorTest):
    """Upgrade: flows written before the registry of kinds still resume.

    Earlier versions wrote TaskFlow's factory details into every flow's
    meta; the registry reads their known names as the kind and never
    imports them.
    """

    def _as_written_before(self, uuid):
        (flow,) = self.cluster.flows(uuid)
        sweep_base.update_flow_meta(
            self.cluster.flow_url, flow['uuid'],
            factory={'name': 'cellboot.workflows.boot.get_flow',
                     'args': [], 'kwargs': {}})
        return flow['uuid']

    def test_a_killed_flow_of_an_earlier_version_is_resumed(self):
        uuids = self._boot_and_kill('create-in-cell')
        flow_uuid = self._as_written_before(uuids[0])
        self.assertEqual(AFTER_SCHEDULE, self._restart())
        flow = lookup.get_flow(self.cluster.flow_url, flow_uuid)
        self.assertEqual(
            ('SUCCESS', None, 'cellboot.workflows.boot.get_flow'),
            (flow['state'], flow['corrupt'], flow['meta']['factory']['name']))
        self.assertEqual({'active'}, {self.cluster.find(uuid)[1].vm_state
                                      for uuid in uuids})
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_its_atoms_are_shown_in_flow_order(self):
        (uuid,) = self._boot_and_kill('map-instance', count=1)
        flow = lookup.get_flow(self.cluster.flow_url,
                               self._as_written_before(uuid))
        self.assertEqual(
            (None, ['schedule', 'claim-pool', 'map-host-to-cell',
                    'create-in-cell',
                    'map-instance', 'delete-build-request',
                    'cast-to-compute']),
            (flow['corrupt'], [atom['name'] for atom in flow['atoms']]))
