"""A build its cell cannot place moves to another cell (cross-cell flow).

Two cells of two hosts; cell2's hosts are smaller, so the API level's
scheduler sends a build to cell1 first. ``[fake_driver] fail_hosts``
makes hosts fail builds (reschedulable), so that cell1's reschedule
flow runs out of alternates and hands the build back.
"""

import time
from unittest import mock

import sqlalchemy as sa

from cellboot.api import server_records
from cellboot.builds import handback
from cellboot.conductor import handbacks
from cellboot import context as cb_context
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot.flowrun import kinds
from cellboot.objects import build_request
from cellboot.objects import fault_messages
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_action
from cellboot.objects import instance_history
from cellboot.objects import instance_mapping
from cellboot.scheduler.pools import claims as pool_claims
from cellboot.scheduler.pools import records as pool_records
from cellboot.scheduler.resources import usage
from tests import base
from tests.functional import cluster
from tests.functional import invariants

SMALL_CELL2 = {'cell2-host1': {'memory_mb': 4096},
               'cell2-host2': {'memory_mb': 4096}}
CELL1_HOSTS = ['cell1-host1', 'cell1-host2']
ALL_HOSTS = CELL1_HOSTS + ['cell2-host1', 'cell2-host2']

# The cross-cell flow's atoms, in order.
ATOMS = ['recreate-build-request', 'unmap-instance', 'release-old-cell',
         'remove-from-old-cell', 'schedule', 'claim-pool',
         'map-host-to-cell', 'create-in-cell', 'map-instance',
         'delete-build-request', 'cast-to-compute', 'carry-history']

_INSTANCES = cell_models.Instance.__table__


class _CrossCellTest(base.TestCase):

    # [conductor] sweep_interval of the deployment (None: the default).
    SWEEP_INTERVAL = None
    # What each host of the deployment reports, where it differs.
    HOST_CAPACITY = SMALL_CELL2
    # The root disk every host reports (0: disks come from a pool).
    LOCAL_GB = 200

    def setUp(self):
        super().setUp()
        if self.SWEEP_INTERVAL is not None:
            self.flags(sweep_interval=self.SWEEP_INTERVAL, group='conductor')
        self.cluster = self.useFixture(cluster.Cluster(
            cells=2, hosts_per_cell=2, host_capacity=self.HOST_CAPACITY,
            local_gb=self.LOCAL_GB))
        self.ctx = self.cluster.ctx
        self.cell1, self.cell2 = self.cluster.cells

    def rows(self, cell, uuid):
        """Every row of ``uuid`` in ``cell``, deleted ones included."""
        engine = cell_connection.get_engine(cell.database_connection)
        with engine.connect() as conn:
            return conn.execute(sa.select(_INSTANCES).where(
                _INSTANCES.c.uuid == uuid)).all()

    def allocations_in(self, cell, uuid):
        with cb_context.target_cell(self.ctx, cell) as cctxt:
            return usage.get_allocations_for_consumer(cctxt, uuid)

    def lose_hand_back_casts(self):
        """The super conductors never hear a hand-back (lost cast) until
        the returned patcher is stopped."""
        patcher = mock.patch.object(handbacks, 'start_move',
                                    return_value=None)
        self.lost_casts = patcher.start()
        self.addCleanup(mock.patch.stopall)
        return patcher

    def boot_handed_back(self):
        """Boot one server; return once cell1 handed it back.

        After ``lose_hand_back_casts``, once the cast was lost too: the
        mark is written before the cast is sent, and a cast still on its
        way when the test stops losing them would start the move.
        """
        lost, self.lost_casts = getattr(self, 'lost_casts', None), None
        self.flags(fail_hosts=CELL1_HOSTS, group='fake_driver')
        (uuid,) = self.cluster.boot()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            rows = self.rows(self.cell1, uuid)
            if rows and rows[0].task_state == 'handed-back' and (
                    lost is None or any(
                        uuid in list(call.args) + list(call.kwargs.values())
                        for call in lost.call_args_list)):
                return uuid
            time.sleep(0.05)
        self.fail(f'cell1 did not hand back {uuid}')

    def assert_gone(self, uuid):
        """Deleted: nothing of it is left but soft-deleted rows."""
        self.assertRaises(server_records.ServerNotFound, server_records.get,
                          self.ctx, uuid)
        self.assertEqual([], build_request.BuildRequest.get_all(self.ctx))
        for cell in [self.cluster.cell0] + self.cluster.cells:
            self.assertEqual([], [row for row in self.rows(cell, uuid)
                                  if not row.deleted], cell.name)
        self.assertEqual({}, self.cluster.allocations(uuid))
        self.assertEqual([], invariants.check_invariants(self.ctx))


class CrossCellMoveTest(_CrossCellTest):

    def test_a_build_no_host_of_cell1_takes_ends_active_in_cell2(self):
        self.flags(fail_hosts=CELL1_HOSTS, group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        cell, instance = self.cluster.find(uuid)
        self.assertEqual(('cell2', 'active'), (cell.name, instance.vm_state))
        self.assertEqual([], self.rows(self.cell1, uuid))
        self.assertEqual({}, self.allocations_in(self.cell1, uuid))
        self.assertNotEqual({}, self.allocations_in(self.cell2, uuid))
        flows = self.cluster.flows(uuid)
        self.assertEqual(
            [kinds.KIND_BOOT, kinds.KIND_RESCHEDULE, kinds.KIND_RESCHEDULE,
             kinds.KIND_CROSS_CELL],
            [flow['kind'] for flow in flows])
        self.assertEqual(['SUCCESS', 'SUCCESS', 'REVERTED', 'SUCCESS'],
                         [flow['state'] for flow in flows])
        # The request spec records the cell the build left.
        self.assertEqual([{'uuid': self.cell1.uuid, 'name': 'cell1'}],
                         handback.cells_tried(self._spec(uuid)))
        # The action in cell2 shows cell1's events too.
        with cb_context.target_cell(self.ctx, self.cell2) as cctxt:
            (action,) = instance_action.InstanceAction.get_by_instance_uuid(
                cctxt, uuid)
            events = [event.event for event in instance_action.
                      InstanceActionEvent.get_by_action(cctxt, action.id)]
        self.assertIn('cell1:' + handback.HANDBACK_EVENT, events)
        self.assertIn('compute_build_and_run_instance', events)
        self.assertEqual([], invariants.check_invariants(self.ctx))

    def _spec(self, uuid):
        from cellboot.objects import request_spec
        return request_spec.RequestSpec.get_by_instance_uuid(
            self.ctx, uuid).spec

    def test_a_build_both_cells_fail_ends_in_error_naming_both(self):
        self.flags(fail_hosts=ALL_HOSTS, group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        cell, instance = self.cluster.find(uuid)
        self.assertEqual(('cell2', 'error'), (cell.name, instance.vm_state))
        fault = self.cluster.fault(uuid)
        self.assertEqual(fault_messages.RETRIES_EXCEEDED, fault.message)
        self.assertTrue(fault.details.startswith(
            'Exceeded maximum number of retries'), fault.details)
        self.assertIn('cell1, cell2', fault.details)
        self.assertIn('last failure', fault.details)
        self.assertIn('cell2-host', fault.details)
        self.assertEqual({}, self.cluster.allocations(uuid))
        self.assertEqual([], self.rows(self.cell1, uuid))
        self.assertEqual([], invariants.check_invariants(self.ctx))

    def test_with_the_option_off_the_build_ends_in_error_in_cell1(self):
        self.flags(cross_cell_reschedule=False, group='conductor')
        self.flags(fail_hosts=CELL1_HOSTS, group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        cell, instance = self.cluster.find(uuid)
        self.assertEqual(('cell1', 'error'), (cell.name, instance.vm_state))
        self.assertTrue(self.cluster.fault(uuid).details.startswith(
            'Exceeded maximum number of retries. Exhausted the alternate'))
        self.assertNotIn(kinds.KIND_CROSS_CELL,
                         [flow['kind'] for flow in self.cluster.flows(uuid)])
        self.assertEqual({}, self.cluster.allocations(uuid))
        self.assertEqual([], invariants.check_invariants(self.ctx))

    def test_max_cells_one_is_the_option_off(self):
        self.flags(max_cells=1, group='conductor')
        self.flags(fail_hosts=CELL1_HOSTS, group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        cell, instance = self.cluster.find(uuid)
        self.assertEqual(('cell1', 'error'), (cell.name, instance.vm_state))
        self.assertEqual([], invariants.check_invariants(self.ctx))

    def test_a_lost_hand_back_is_moved_by_the_sweep_once(self):
        lost = self.lose_hand_back_casts()
        uuid = self.boot_handed_back()
        lost.stop()
        sweep = handbacks.HandedBack(self.cluster.super_conductor)
        self.assertEqual(1, sweep.sweep_once(self.ctx)['moves_started'])
        # Again (a second sweep, or a late cast): still one flow.
        sweep.sweep_once(self.ctx)
        handbacks.start_move(self.cluster.super_conductor, self.ctx, uuid,
                             self.cell1)
        self.cluster.wait_for_quiet()
        self.assertEqual(
            1, [flow['kind'] for flow in self.cluster.flows(uuid)].count(
                kinds.KIND_CROSS_CELL))
        self.assertEqual('cell2', self.cluster.find(uuid)[0].name)
        self.assertEqual([], invariants.check_invariants(self.ctx))


class HostileHandBackTest(_CrossCellTest):
    """What arrives on a cell's bus is that cell's word only.

    The build is really handed back, its cast lost: the super
    conductors' sweep, which would rightly move it, must not run during
    the test (its first run comes one interval after the start).
    """

    SWEEP_INTERVAL = 3600

    def setUp(self):
        super().setUp()
        self.lost = self.lose_hand_back_casts()
        self.uuid = self.boot_handed_back()
        self.lost.stop()

    def _endpoint(self, cell):
        return handbacks.HandBackEndpoint(self.cluster.super_conductor,
                                          cell)

    def _assert_nothing_changed(self):
        (row,) = self.rows(self.cell1, self.uuid)
        self.assertEqual(('building', 'handed-back', False),
                         (row.vm_state, row.task_state, bool(row.deleted)))
        mapping = instance_mapping.InstanceMapping.get_by_instance_uuid(
            self.ctx, self.uuid)
        self.assertEqual(self.cell1.uuid, mapping.cell_mapping.uuid)
        self.assertNotIn(kinds.KIND_CROSS_CELL, [
            flow['kind'] for flow in self.cluster.flows(self.uuid)])
        self.assertEqual([], build_request.BuildRequest.get_all(self.ctx))

    def test_cell2_cannot_hand_back_an_instance_of_cell1(self):
        with self.assertLogs('cellboot.conductor.handbacks',
                             'WARNING') as logs:
            self._endpoint(self.cell2).hand_back_instance(
                self.ctx, instance_uuid=self.uuid)
        self.assertIn('not a live instance of cell cell2', logs.output[0])
        self._assert_nothing_changed()

    def test_unknown_malformed_and_unexpected_arguments_are_refused(self):
        endpoint = self._endpoint(self.cell1)
        for kwargs in ({'instance_uuid': '8a1c5d2e-0000-4000-8000-'
                                         '000000000000'},
                       {'instance_uuid': 42}, {'instance_uuid': None},
                       {'instance_uuid': "x'; DROP TABLE instances"},
                       {'instance_uuid': self.uuid, 'cell': 'cell2'}):
            with self.subTest(kwargs=kwargs):
                with self.assertLogs('cellboot.conductor.handbacks',
                                     'WARNING'):
                    endpoint.hand_back_instance(self.ctx, **kwargs)
                self._assert_nothing_changed()

    def test_an_instance_not_handed_back_is_refused(self):
        self.flags(fail_hosts=[], group='fake_driver')
        (other,) = self.cluster.boot()
        deadline = time.monotonic() + 20
        while True:
            self.assertLess(time.monotonic(), deadline)
            rows = self.rows(self.cell1, other) or self.rows(self.cell2,
                                                             other)
            if rows and rows[0].vm_state == 'active':
                break
            time.sleep(0.05)
        cell, _instance = self.cluster.find(other)
        with self.assertLogs('cellboot.conductor.handbacks', 'WARNING'):
            self._endpoint(cell).hand_back_instance(self.ctx,
                                                    instance_uuid=other)
        self.assertEqual('active', self.cluster.find(other)[1].vm_state)
        self._assert_nothing_changed()

    def test_a_flood_of_history_in_the_old_cell_is_carried_bounded(self):
        # cell1 writes far more events and faults for its instance than
        # a build makes: what the move carries to cell2 stays bounded.
        with cb_context.target_cell(self.ctx, self.cell1) as cctxt:
            (action,) = instance_action.InstanceAction.get_by_instance_uuid(
                cctxt, self.uuid)
        engine = cell_connection.get_engine(self.cell1.database_connection)
        with engine.begin() as conn:
            conn.execute(sa.insert(cell_models.InstanceActionEvent.__table__),
                         [{'action_id': action.id, 'event': f'flood-{n}',
                           'details': 'x' * 10000} for n in range(500)])
            conn.execute(sa.insert(cell_models.InstanceFault.__table__),
                         [{'instance_uuid': self.uuid, 'code': 500,
                           'message': f'fault {n}'} for n in range(50)])
        self.assertIsNone(handbacks.start_move(
            self.cluster.super_conductor, self.ctx, self.uuid, self.cell1))
        self.cluster.wait_for_quiet()
        cell, _instance = self.cluster.find(self.uuid)
        self.assertEqual('cell2', cell.name)
        with cb_context.target_cell(self.ctx, self.cell2) as cctxt:
            carried = [event for action in instance_action.InstanceAction.
                       get_by_instance_uuid(cctxt, self.uuid)
                       for event in instance_action.InstanceActionEvent.
                       get_by_action(cctxt, action.id)
                       if event.event.startswith('cell1:')]
        self.assertEqual(instance_history.MAX_EVENTS, len(carried))
        # The latest ones are kept: the flood's last event among them.
        self.assertIn('cell1:flood-499', [e.event for e in carried])
        self.assertTrue(all(len(e.details or '') <= 4000 for e in carried))

    def test_a_forged_mark_in_another_cell_is_refused(self):
        # cell2 writes the mark on a row of its own for cell1's uuid.
        with cb_context.target_cell(self.ctx, self.cell2) as cctxt:
            instance_obj.Instance.create(
                cctxt, self.uuid, 'project-a',
                instance_obj.vm_states.BUILDING,
                task_state='handed-back')
        with self.assertLogs('cellboot.conductor.handbacks', 'WARNING'):
            self._endpoint(self.cell2).hand_back_instance(
                self.ctx, instance_uuid=self.uuid)
        self._assert_nothing_changed()


class NoRoomElsewhereTest(_CrossCellTest):
    """cell2 has no host with room for the flavor: the move finds none."""

    HOST_CAPACITY = {'cell2-host1': {'memory_mb': 256},
                     'cell2-host2': {'memory_mb': 256}}

    def test_the_build_is_buried_in_cell0_naming_every_cell(self):
        self.flags(fail_hosts=CELL1_HOSTS, group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        cell, instance = self.cluster.find(uuid)
        self.assertEqual(('cell0', 'error'), (cell.name, instance.vm_state))
        fault = self.cluster.fault(uuid)
        self.assertEqual(fault_messages.RETRIES_EXCEEDED, fault.message)
        self.assertIn('Tried cell(s) cell1', fault.details)
        self.assertIn('cell1-host', fault.details)   # the last failure
        self.assertEqual([], self.rows(self.cell1, uuid))
        self.assertEqual({}, self.cluster.allocations(uuid))
        flows = {flow['kind']: flow['state']
                 for flow in self.cluster.flows(uuid)}
        self.assertEqual('REVERTED', flows[kinds.KIND_CROSS_CELL])
        # The history of cell1 is kept in cell0's action.
        with cb_context.target_cell(self.ctx, self.cluster.cell0) as cctxt:
            events = [event.event for action in instance_action.
                      InstanceAction.get_by_instance_uuid(cctxt, uuid)
                      for event in instance_action.InstanceActionEvent.
                      get_by_action(cctxt, action.id)]
        self.assertIn('cell1:' + handback.HANDBACK_EVENT, events)
        self.assertEqual([], invariants.check_invariants(self.ctx))


class PoolShareMoveTest(_CrossCellTest):
    """No host has a disk: every root disk is a share of a pool serving
    both cells, which must follow the build from cell1 to cell2."""

    LOCAL_GB = 0

    def test_a_moved_server_holds_one_share_of_the_pool(self):
        root_gb = cluster.FLAVOR['root_gb']
        pool = pool_records.create_pool(
            self.ctx, 'shared-disk', {'DISK_GB': {'total': root_gb * 2}},
            cells=['cell1', 'cell2'])
        self.cluster.scheduler.pools.invalidate()
        self.flags(fail_hosts=CELL1_HOSTS, group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        cell, instance = self.cluster.find(uuid)
        self.assertEqual(('cell2', 'active'), (cell.name, instance.vm_state))
        self.assertIn(kinds.KIND_CROSS_CELL,
                      [flow['kind'] for flow in self.cluster.flows(uuid)])
        self.assertEqual({pool['uuid']: {'DISK_GB': root_gb}},
                         pool_claims.holdings(self.ctx, uuid))
        self.assertEqual(root_gb, pool_records.get_pool(
            self.ctx, 'shared-disk')['usages']['DISK_GB'])
        (host,) = self.allocations_in(self.cell2, uuid).values()
        self.assertNotIn('DISK_GB', host)
        self.assertEqual({}, self.allocations_in(self.cell1, uuid))
        self.assertEqual([], invariants.check_invariants(self.ctx))
