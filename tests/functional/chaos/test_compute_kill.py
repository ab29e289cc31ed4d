"""A compute host that dies while it builds: the build times out to ERROR.

Nova leaves such a server in BUILD forever, its resources claimed. Here
the host is SIGKILLed while the fake driver spawns (a spawn that would
take ten minutes); nobody will ever report on that build, so the cell
conductor's periodic check must set the instance ERROR with a fault
within ``build_timeout`` + ``sweep_interval`` of the host's last word on
it, and give back its claim. The invariant checker then finds nothing:
no allocation left for an ERROR instance, no flow unfinished.
"""

import time

from cellboot import context as cb_context
from cellboot.objects import cell_mapping
from cellboot.objects import instance_action
from cellboot.objects import instance_fault
from tests import base
from tests.functional import invariants
from tests.functional.multiprocess import deployment as deployment_mod

BUILD_TIMEOUT = 6
SWEEP_INTERVAL = 1
# Seconds the DB writes, the check's own run and a loaded machine add.
SLACK = 8
# Seconds a boot may take to reach the host's driver.
SPAWN_START_TIMEOUT = 30
# Seconds the sweep that wrote the ERROR may take to give the claim back.
CLAIM_RELEASE_TIMEOUT = 10

HOST = 'cell1-host1'
EVENT_BUILD = 'compute_build_and_run_instance'


class ComputeKillTest(base.MySQLMixin, base.TestCase):
    """One cell, one host that never finishes a spawn, killed midway."""

    def setUp(self):
        super().setUp()
        self.deployment = self.useFixture(deployment_mod.Deployment(
            self, backend=self.BACKEND, cells={'cell1': [HOST]},
            cell_options='[fake_driver]\nspawn_time = 600\n',
            options=f"""
                [conductor]
                build_timeout = {BUILD_TIMEOUT}
                sweep_interval = {SWEEP_INTERVAL}
                """))

    def _spawning(self, instance_uuid):
        """True once the host started building (its event started)."""
        cell, instance = self.deployment.instance(instance_uuid)
        if instance is None:
            return False
        ctxt = cb_context.get_admin_context()
        with cb_context.target_cell(ctxt, self._cell_mapping(cell)) as cctxt:
            for action in instance_action.InstanceAction.get_by_instance_uuid(
                    cctxt, instance_uuid):
                for event in instance_action.InstanceActionEvent. \
                        get_by_action(cctxt, action.id):
                    if event.event == EVENT_BUILD and event.host == HOST:
                        return True
        return False

    @staticmethod
    def _cell_mapping(name):
        return cell_mapping.CellMapping.get_by_name(
            cb_context.get_admin_context(), name)

    def _wait(self, condition, timeout, what):
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                self.fail(f'{what} after {timeout} s')
            time.sleep(0.2)

    def test_build_on_a_killed_host_times_out_to_error_with_a_fault(self):
        [booted] = self.deployment.boot(hints={'target_cell': 'cell1'})
        self._wait(lambda: self._spawning(booted), SPAWN_START_TIMEOUT,
                   f'host {HOST} did not start building {booted}')
        self.deployment.kill(HOST)
        killed = time.monotonic()

        bound = BUILD_TIMEOUT + SWEEP_INTERVAL + SLACK
        self._wait(
            lambda: self.deployment.instance(booted)[1].vm_state == 'error',
            bound, f'instance {booted} is not ERROR')
        settled_in = time.monotonic() - killed
        self.assertLessEqual(settled_in, bound)

        cell, instance = self.deployment.instance(booted)
        self.assertEqual(('cell1', HOST), (cell, instance.host))
        ctxt = cb_context.get_admin_context()
        with cb_context.target_cell(ctxt, self._cell_mapping(cell)) as cctxt:
            faults = instance_fault.InstanceFault.get_latest_for_instances(
                cctxt, [booted])
        self.assertIn(booted, faults)
        self.assertIn('timed out', faults[booted].details)
        self.assertIn(HOST, faults[booted].details)
        # The claim is given back, and nothing else is amiss. The sweep
        # gives it back right after the ERROR it wrote (ERROR, fault,
        # event, then the claim): wait for it, bounded, rather than race
        # it (CI once read the invariants between the two).
        self.deployment.wait_settled([booted])
        deadline = time.monotonic() + CLAIM_RELEASE_TIMEOUT
        while (invariants.check_invariants()
               and time.monotonic() < deadline):
            time.sleep(0.2)
        self.assertEqual([], invariants.check_invariants())
