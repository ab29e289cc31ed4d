"""Deletes, kills and dead conductors racing a move to another cell.

The same two cells as ``test_cross_cell``: every host of cell1 fails
builds, so each server is handed back and moved to cell2.
"""

import time
from unittest import mock

from taskflow import states

from cellboot.api import server_records
from cellboot.conductor import handbacks
from cellboot.conductor import manager
from cellboot.conductor import orphans
from cellboot.conf import CONF
from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import records
from cellboot.flowrun import tables
from cellboot.objects import build_request
from tests.functional.boot import test_cross_cell
from tests.functional.boot import test_owner_delete
from tests.functional.boot import test_resume
from tests.functional import invariants
from tests.functional.sweepers import base as sweep_base

ATOMS = test_cross_cell.ATOMS
CELL1_HOSTS = test_cross_cell.CELL1_HOSTS
_CrossCellTest = test_cross_cell._CrossCellTest


class DeleteDuringMoveTest(_CrossCellTest):
    """DELETE /servers/{id} at every moment of the move."""

    def _api_delete(self, uuid):
        server_records.delete(self.ctx, uuid, self.cluster.scheduler)

    def _shown_once_building(self, uuid, cast=False):
        """GET shows BUILD (or ACTIVE once ``cast`` to its host), and a
        listing shows the server once."""
        record = server_records.get(self.ctx, uuid)
        if isinstance(record, server_records.InCell):
            self.assertIn(record.instance.vm_state,
                          ('building', 'active') if cast else ('building',))
        else:
            self.assertIsInstance(record, build_request.BuildRequest)
        listed = server_records.list_servers(
            self.ctx, self.ctx.project_id, 5, 100).records
        self.assertEqual(1, len(listed))

    def test_a_delete_before_the_hand_back_is_taken_leaves_nothing(self):
        lost = self.lose_hand_back_casts()
        uuid = self.boot_handed_back()
        self._shown_once_building(uuid)
        self._api_delete(uuid)
        lost.stop()
        sweep = handbacks.HandedBack(self.cluster.super_conductor)
        self.assertEqual(0, sweep.sweep_once(self.ctx)['moves_started'])
        self.cluster.wait_for_quiet()
        self.assert_gone(uuid)

    def test_a_delete_after_each_atom_of_the_move_leaves_nothing(self):
        runner = self.cluster.super_conductor.cross_cell_runner
        for atom in ATOMS:
            with self.subTest(atom=atom):
                checked = []

                def delete(uuid, atom=atom):
                    self._shown_once_building(
                        uuid, cast=ATOMS.index(atom) >= ATOMS.index(
                            'cast-to-compute'))
                    checked.append(uuid)
                    self._api_delete(uuid)

                runner.flow_listeners = [
                    lambda engine, atom=atom: test_owner_delete.DeleteAfter(
                        engine, atom, delete)]
                self.flags(fail_hosts=CELL1_HOSTS, group='fake_driver')
                (uuid,) = self.cluster.boot()
                self.cluster.wait_for_quiet()
                self.assertEqual([uuid], checked)
                self.assert_gone(uuid)

    def test_a_delete_after_the_move_leaves_nothing(self):
        self.flags(fail_hosts=CELL1_HOSTS, group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        self._api_delete(uuid)
        self.assert_gone(uuid)


class KilledDuringMoveTest(_CrossCellTest):
    """A super conductor killed at each atom boundary of the move.

    The test's own conductors run the sweeps: the deployment's periodic
    one must not take the moves first.
    """

    SWEEP_INTERVAL = 3600

    def test_a_move_killed_after_each_atom_is_finished_by_the_next(self):
        for number, atom in enumerate(ATOMS):
            with self.subTest(atom=atom):
                lost = self.lose_hand_back_casts()
                uuid = self.boot_handed_back()
                lost.stop()
                dying = manager.SuperConductorManager(
                    scheduler=self.cluster.scheduler)
                dying.runner.owner = dying.cross_cell_runner.owner = \
                    f'conductor:{2 * number + 10}'
                dying.cross_cell_runner.flow_listeners = [
                    lambda engine, atom=atom: test_resume.KillAfter(
                        engine, atom, states.SUCCESS)]
                self.assertRaises(test_resume.Killed,
                                  handbacks.HandedBack(dying).sweep_once,
                                  self.ctx)
                survivor = manager.SuperConductorManager(
                    scheduler=self.cluster.scheduler)
                survivor.cross_cell_runner.owner = \
                    f'conductor:{2 * number + 11}'
                self.assertEqual(
                    1, survivor.cross_cell_runner.resume_unfinished())
                self.cluster.wait_for_quiet()
                cell, instance = self.cluster.find(uuid)
                self.assertEqual(('cell2', 'active'),
                                 (cell.name, instance.vm_state))
                self.assertEqual([], self.rows(self.cell1, uuid))
                self.assertEqual({}, self.allocations_in(self.cell1, uuid))
                self.assertEqual([], invariants.check_invariants(self.ctx))


class OrphanMoveTest(_CrossCellTest):
    """A move whose conductor died, on a deployment without a jobboard.

    The test runs the sweeps itself: the deployment's periodic one must
    not hand the move over first.
    """

    SWEEP_INTERVAL = 3600

    def test_the_sweep_hands_it_over_and_leaves_its_build_request(self):
        self.flags(orphan_build_request_timeout=1,
                   unstarted_build_request_timeout=1, group='conductor')
        lost = self.lose_hand_back_casts()
        uuid = self.boot_handed_back()
        lost.stop()
        dying = manager.SuperConductorManager(
            scheduler=self.cluster.scheduler)
        dying.cross_cell_runner.owner = \
            f'{CONF.host}:{sweep_base.dead_pid()}'
        dying.cross_cell_runner.flow_listeners = [
            lambda engine: test_resume.KillAfter(engine, 'remove-from-old-'
                                                         'cell')]
        self.assertRaises(test_resume.Killed,
                          handbacks.HandedBack(dying).sweep_once, self.ctx)
        time.sleep(2.5)  # past both timeouts (1 s), whole seconds or not
        # The boot's orphan sweep leaves the move's build request alone.
        done = orphans.OrphanBuildRequests(
            self.cluster.super_conductor).sweep_once(self.ctx)
        self.assertEqual((0, 0), (done['started'], done['settled']))
        handed = handbacks.HandedBack(
            self.cluster.super_conductor).sweep_once(self.ctx)
        self.assertEqual(1, handed['moves_handed_over'])
        self.cluster.wait_for_quiet()
        cell, instance = self.cluster.find(uuid)
        self.assertEqual(('cell2', 'active'), (cell.name, instance.vm_state))
        self.assertEqual([], invariants.check_invariants(self.ctx))


class FailedScheduleDuringMoveTest(_CrossCellTest):
    """The move's ``schedule`` fails after the build left cell1."""

    def test_the_build_is_buried_in_cell0_with_nothing_left(self):
        lost = self.lose_hand_back_casts()
        uuid = self.boot_handed_back()
        lost.stop()
        conductor = self.cluster.super_conductor
        with mock.patch.object(conductor.scheduler, 'select_destinations',
                               side_effect=RuntimeError('scheduler broke')):
            handbacks.start_move(conductor, self.ctx, uuid, self.cell1)
            self.cluster.wait_for_quiet()
        cell, instance = self.cluster.find(uuid)
        self.assertEqual(('cell0', 'error'), (cell.name, instance.vm_state))
        self.assertIn('cell1', self.cluster.fault(uuid).details)
        self.assertEqual([], self.rows(self.cell1, uuid))
        self.assertEqual({}, self.cluster.allocations(uuid))
        self.assertEqual([], build_request.BuildRequest.get_all(self.ctx))
        flows = {flow['kind']: flow['state']
                 for flow in self.cluster.flows(uuid)}
        self.assertEqual(states.REVERTED, flows['cross-cell'])
        self.assertEqual([], invariants.check_invariants(self.ctx))


class LateBootReplayTest(_CrossCellTest):
    """The boot flow replayed after its build moved to another cell.

    What the chaos test met: a super conductor killed after the boot's
    cast, before its last steps' states were written; another took the
    flow over after the build had failed in cell1 and moved to cell2,
    and its replay created the server in cell1 again, mapped it there and
    built it: one server in two cells.
    """

    REPLAYED = ('create-in-cell', 'map-instance', 'delete-build-request',
                'cast-to-compute')

    def _as_if_its_last_steps_were_lost(self, flow_uuid):
        url = self.cluster.flow_url
        changed = {}
        for atom in records.load_detail(url, flow_uuid):
            if atom.name in self.REPLAYED:
                reset = atom.copy()
                reset.reset(states.PENDING)
                changed[atom.uuid] = reset
        owner = f'{CONF.host}:{sweep_base.dead_pid()}'
        with flow_db.get_backend(url).engine.begin() as conn:
            self.assertTrue(tables.change_flow_state(
                conn, flow_uuid, states.SUCCESS, states.RUNNING))
            tables.update_atoms(conn, changed)
            tables.merge_flow_meta(conn, flow_uuid,
                                   lambda meta: dict(meta, owner=owner))

    def test_the_replay_leaves_the_moved_server_where_it_went(self):
        self.flags(fail_hosts=CELL1_HOSTS, group='fake_driver')
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        self.assertEqual('cell2', self.cluster.find(uuid)[0].name)
        (boot,) = [flow for flow in self.cluster.flows(uuid)
                   if flow['kind'] == 'boot']
        self._as_if_its_last_steps_were_lost(boot['uuid'])
        runner = self.cluster.super_conductor.runner
        self.assertTrue(runner.hand_over(boot['uuid']))
        for thread in list(runner._resumers):
            thread.join(30)
        self.cluster.wait_for_quiet()
        cell, instance = self.cluster.find(uuid)
        self.assertEqual(('cell2', 'active'), (cell.name, instance.vm_state))
        self.assertEqual([], [row for row in self.rows(self.cell1, uuid)
                              if not row.deleted])
        self.assertEqual('SUCCESS', [
            flow['state'] for flow in self.cluster.flows(uuid)
            if flow['kind'] == 'boot'][0])
        self.assertEqual([], invariants.check_invariants(self.ctx))
