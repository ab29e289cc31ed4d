"""A build whose cast to its host was lost is sent again, not failed.

An in-process deployment (SQLite, ``fake://``) of one cell and two
hosts, where ``cell1-host1`` has the most room (the scheduler's first
choice, ``cell1-host2`` its alternate). The super conductor's casts to
the hosts are lost, as a broker restart loses them (the real broker's
version of this is ``tests/functional/multiprocess/test_lost_casts.py``):
the instance is left building on host1, untaken. The test ages it past
``[conductor] build_not_taken_timeout`` rather than wait, then runs the
cell conductor's sweep.
"""

import datetime

from oslo_utils import timeutils
import sqlalchemy as sa

from cellboot.compute import build_records
from cellboot.compute import rpcapi as compute_rpcapi
from cellboot.conductor import build_timeouts
from cellboot.conductor import manager as conductor_manager
from cellboot.conductor import untaken_builds
from cellboot import context as cb_context
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot import exception
from cellboot.objects import build_args
from cellboot.objects import fault_messages
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action
from tests import base
from tests.functional.compute import base as compute_base
from tests.functional import cluster
from tests.functional import invariants
from tests.functional.sweepers import base as sweep_base

HOST, ALTERNATE = 'cell1-host1', 'cell1-host2'
NOT_TAKEN = 5
_INSTANCES = cell_models.Instance.__table__
_SERVICES = cell_models.Service.__table__


class _LostCasts:
    """A compute client that loses every cast, as a broker might."""

    def __init__(self):
        self.lost = []

    def build_and_run_instance(self, ctxt, host, instance, *args):
        self.lost.append((host, instance['uuid']))


class UntakenBuildsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster.Cluster(
            cells=1, hosts_per_cell=2,
            host_capacity={HOST: {'memory_mb': 65536}}))
        self.flags(build_not_taken_timeout=NOT_TAKEN, group='conductor')
        self.cell = self.cluster.cells[0]
        self.ctx = cb_context.get_admin_context()
        self.lost = _LostCasts()
        self.cluster.super_conductor._compute_rpcapi_for = (
            lambda _cell: self.lost)
        self.check = build_timeouts.BuildTimeouts(self._cell_conductor())

    def _cell_conductor(self):
        """A conductor of the cell, as a cell conductor process has it."""
        return conductor_manager.CellConductorManager(
            cell_name=self.cell.name,
            database_connection=self.cell.database_connection,
            scheduler=self.cluster.cell_schedulers[self.cell.name],
            compute_rpcapi=compute_rpcapi.ComputeAPI(self.cell.name,
                                                     self.cluster.transport))

    def _write(self, uuid, table=_INSTANCES, where=None, **values):
        engine = cell_connection.get_engine(self.cell.database_connection)
        where = where if where is not None else table.c.uuid == uuid
        with engine.begin() as conn:
            conn.execute(sa.update(table).where(where).values(**values))

    def _age(self, uuid, seconds=NOT_TAKEN + 1):
        """As if nothing had happened to it for ``seconds``."""
        then = timeutils.utcnow() - datetime.timedelta(seconds=seconds)
        self._write(uuid, created_at=then, updated_at=then)

    def _host_dies(self, host):
        """Its heartbeat stops and its last one is long past."""
        self.cluster.computes[host].stop()
        self._write(None, _SERVICES, _SERVICES.c.host == host,
                    last_seen_up=timeutils.utcnow() -
                    datetime.timedelta(days=1))

    def _boot_lost(self):
        """One server whose cast to host1 is lost; its uuid."""
        (uuid,) = self.cluster.boot()
        self.assertTrue(compute_base.wait_for(
            lambda: (HOST, uuid) in self.lost.lost))
        instance = self.cluster.find(uuid)[1]
        self.assertEqual(('building', None, HOST),
                         (instance.vm_state, instance.task_state,
                          instance.host))
        return uuid

    def _events(self, uuid):
        with cb_context.target_cell(self.ctx, self.cell) as cctxt:
            (action,) = instance_action.InstanceAction.get_by_instance_uuid(
                cctxt, uuid)
            return [(event.event, event.result, event.details)
                    for event in instance_action.InstanceActionEvent.
                    get_by_action(cctxt, action.id)]

    def _reschedule_flows(self, uuid):
        return len([flow for flow in self.cluster.flows(uuid)
                    if flow['kind'] == 'reschedule'])

    def _settled(self, uuid):
        self.cluster.wait_for_quiet()
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))
        return self.cluster.find(uuid)[1]

    def test_a_live_hosts_build_is_sent_again_and_goes_active_there(self):
        uuid = self._boot_lost()
        # Not before the timeout: a cast may just be slow.
        self.assertEqual(sweep_base.timeouts(0),
                         self.check.sweep_once(self.ctx))
        self._age(uuid)
        self.assertEqual(1, self.check.sweep_once(self.ctx)['recast'])
        instance = self._settled(uuid)
        self.assertEqual(('active', HOST), (instance.vm_state, instance.host))
        self.assertEqual(1, instance.build_recasts)
        self.assertIn(
            (untaken_builds.EVENT_RECAST, instance_action.RESULT_SUCCESS,
             f'Re-sent to host {HOST} (1 of 3): not taken after '
             f'{NOT_TAKEN} s'), self._events(uuid))

    def test_a_build_its_boot_flow_has_not_cast_yet_is_left_alone(self):
        # The boot flow created it in its cell (scheduling) and is held
        # up before its cast, here longer than the timeout (riding out
        # another cell's outage): no cast was sent, none was lost.
        uuid = self._boot_lost()
        self._write(uuid, task_state=instance_obj.task_states.SCHEDULING)
        self._age(uuid)
        self.assertEqual(sweep_base.timeouts(0),
                         self.check.sweep_once(self.ctx))
        self.assertEqual((instance_obj.task_states.SCHEDULING, 0),
                         (self.cluster.find(uuid)[1].task_state,
                          self.cluster.find(uuid)[1].build_recasts))
        # Its flow goes on and hands it over, then casts (lost again):
        # the host has the whole timeout from then.
        with cb_context.target_cell(self.ctx, self.cell) as cctxt:
            instance_obj.Instance.end_scheduling(cctxt, [uuid])
        self.assertEqual(sweep_base.timeouts(0),
                         self.check.sweep_once(self.ctx))
        self._age(uuid)
        self.assertEqual(1, self.check.sweep_once(self.ctx)['recast'])
        self.assertEqual(('active', HOST),
                         (self._settled(uuid).vm_state,
                          self._settled(uuid).host))

    def test_a_zero_timeout_turns_the_check_off(self):
        self.flags(build_not_taken_timeout=0, group='conductor')
        uuid = self._boot_lost()
        self._age(uuid, 300)  # past the check, not the build timeout
        self.assertEqual(sweep_base.timeouts(0),
                         self.check.sweep_once(self.ctx))
        self.assertEqual([(HOST, uuid)], self.lost.lost)
        self.assertEqual(('building', 0),
                         (self.cluster.find(uuid)[1].vm_state,
                          self.cluster.find(uuid)[1].build_recasts))
        # Left to the build timeout, as before the check existed.
        self.flags(build_timeout=60, group='conductor')
        self.assertEqual(sweep_base.timeouts(1),
                         self.check.sweep_once(self.ctx))

    def test_two_conductors_sweeping_at_once_send_it_once(self):
        uuid = self._boot_lost()
        self._age(uuid)
        results = sweep_base.sweep_at_once(
            [self.check, build_timeouts.BuildTimeouts(self._cell_conductor())])
        self.assertEqual(1, sum(result['recast'] for result in results))
        self.assertEqual(1, self._settled(uuid).build_recasts)

    def test_a_dead_hosts_build_is_rescheduled_to_the_alternate(self):
        uuid = self._boot_lost()
        self._host_dies(HOST)
        self._age(uuid)
        self.assertEqual(1, self.check.sweep_once(self.ctx)['reschedule'])
        instance = self._settled(uuid)
        self.assertEqual(('active', ALTERNATE),
                         (instance.vm_state, instance.host))
        # The dead host's claim went back (the invariants say the
        # instance holds only its alternate's).
        self.assertEqual(1, len(self.cluster.allocations(uuid)))
        [(_event, result, details)] = [
            event for event in self._events(uuid)
            if event[0] == untaken_builds.EVENT_NOT_TAKEN]
        self.assertEqual(instance_action.RESULT_SUCCESS, result)
        self.assertIn(f'host {HOST} had not taken the build', details)
        self.assertEqual(['build_and_run_instance'],
                         self.cluster.handled(ALTERNATE))

    def test_a_build_its_host_handed_back_unheard_is_rescheduled(self):
        # The host failed the build and handed it back, but its
        # build_instances cast to the conductors was lost (the cell's
        # bus was down): the sweep starts the reschedule from what the
        # host stored, counting the host's failure once.
        uuid = self._boot_lost()
        instance = self.cluster.find(uuid)[1]
        args, node = instance.build_args, instance.node
        with cb_context.target_cell(self.ctx, self.cell) as cctxt:
            build_records.hand_back(cctxt, instance, build_args.make(
                args['host_list'], args['request_spec'],
                build_args.next_retry(args['retry'], HOST,
                                      node, 'spawn failed')))
        self._age(uuid)
        self.assertEqual(1, self.check.sweep_once(self.ctx)['reschedule'])
        instance = self._settled(uuid)
        self.assertEqual(
            ('active', ALTERNATE, 1, [[HOST, node]]),
            (instance.vm_state, instance.host,
             instance.build_args['retry']['num_attempts'],
             instance.build_args['retry']['hosts']))
        self.assertIn(f'its reschedule off host {HOST} had not started',
                      str(self._events(uuid)))

    def test_a_reschedule_the_scheduler_missed_is_tried_again(self):
        uuid = self._boot_lost()
        self._host_dies(HOST)
        manager = self.check.manager
        scheduler = manager.scheduler

        class Silent:
            """The scheduler, not answering its first release."""

            def __init__(self):
                self.missed = 0

            def release_resources(self, *args, **kwargs):
                if not self.missed:
                    self.missed += 1
                    raise exception.RPCTimeout(
                        method='release_resources', topic='scheduler',
                        timeout=60, url='fake://')
                return scheduler.release_resources(*args, **kwargs)

            def __getattr__(self, name):
                return getattr(scheduler, name)

        manager.scheduler = Silent()
        self._age(uuid)
        self.check.sweep_once(self.ctx)
        instance = self.cluster.find(uuid)[1]
        # Off the host, no flow yet: the host can no longer take it.
        self.assertEqual(('building', 'rescheduling', HOST, 0),
                         (instance.vm_state, instance.task_state,
                          instance.host, self._reschedule_flows(uuid)))
        self._age(uuid)
        self.assertEqual(1, self.check.sweep_once(self.ctx)['reschedule'])
        instance = self._settled(uuid)
        self.assertEqual(('active', ALTERNATE),
                         (instance.vm_state, instance.host))
        self.assertEqual(1, self._reschedule_flows(uuid))

    def test_a_live_host_that_never_takes_it_ends_in_error(self):
        self.flags(build_recasts=1, build_timeout=NOT_TAKEN + 1,
                   group='conductor')
        uuid = self._boot_lost()
        # The host's queue loses the re-send too.
        self.check.manager.compute_rpcapi = self.lost
        self._age(uuid)
        self.assertEqual(1, self.check.sweep_once(self.ctx)['recast'])
        self._age(uuid, NOT_TAKEN + 2)
        # Re-sent as often as allowed: left to the build timeout.
        self.assertEqual(sweep_base.timeouts(1),
                         self.check.sweep_once(self.ctx))
        instance = self._settled(uuid)
        self.assertEqual(('error', fault_messages.BUILD_TIMED_OUT),
                         (instance.vm_state,
                          self.cluster.fault(uuid).message))
        self.assertEqual([(HOST, uuid)] * 2, self.lost.lost)

    def test_a_dead_host_and_no_alternate_end_in_error(self):
        self.flags(max_attempts=1, group='scheduler')
        uuid = self._boot_lost()
        self._host_dies(HOST)
        self._age(uuid)
        self.check.sweep_once(self.ctx)
        instance = self._settled(uuid)
        self.assertEqual(('error', fault_messages.RETRIES_EXCEEDED),
                         (instance.vm_state,
                          self.cluster.fault(uuid).message))
        self.assertIn(f'host {HOST} had not taken the build',
                      self.cluster.fault(uuid).details)

    def test_a_build_the_host_took_meanwhile_is_left_to_it(self):
        uuid = self._boot_lost()
        self._age(uuid)
        with cb_context.target_cell(self.ctx, self.cell) as cctxt:
            stale = instance_obj.Instance.get_by_uuid(cctxt, uuid)
            instance_obj.Instance(uuid=uuid).claim_build(cctxt, HOST)
            cutoff = timeutils.utcnow()
            # What a sweep that read it just before would try.
            self.assertFalse(stale.recast_build(cctxt, cutoff))
            self.assertFalse(stale.start_reschedule(cctxt, cutoff))
            self.assertRaises(exception.UnexpectedVMState,
                              stale.move_build, cctxt, ALTERNATE, ALTERNATE,
                              None)
        self.assertEqual(sweep_base.timeouts(0),
                         self.check.sweep_once(self.ctx))

    def test_damaged_build_args_still_send_it_again(self):
        # Garbage in the cell's column: the build goes out with no
        # alternates, and the host builds it all the same.
        uuid = self._boot_lost()
        self._write(uuid, build_args='{"host_list": "all of them"')
        self._age(uuid)
        with self.assertLogs('cellboot.conductor.untaken_builds',
                             'WARNING') as log:
            self.assertEqual(1, self.check.sweep_once(self.ctx)['recast'])
        self.assertIn('no readable build arguments', '\n'.join(log.output))
        instance = self._settled(uuid)
        self.assertEqual(('active', HOST), (instance.vm_state, instance.host))

    def test_damaged_build_args_on_a_dead_host_end_in_error(self):
        uuid = self._boot_lost()
        self._write(uuid, build_args='[1, 2, 3]')
        self._host_dies(HOST)
        self._age(uuid)
        self.check.sweep_once(self.ctx)
        instance = self._settled(uuid)
        self.assertEqual(('error', HOST), (instance.vm_state, instance.host))
        self.assertEqual([], self.cluster.handled(ALTERNATE))
