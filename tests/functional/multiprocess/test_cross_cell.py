"""A build every host of its cell fails moves to another cell, in processes.

MariaDB for every database, RabbitMQ between the processes (each cell
on a vhost of its own), each service started by its own command. Both
hosts of cell1 have the most room (the API level's first choice) and
fail every build, reschedulably; cell2's host builds. The hand-back
crosses the cell's own bus to the super conductors
(``cellboot-super-conductor.cell1``), without API-database credentials
in the cell: the server must end ACTIVE in cell2 with its claims there
and nothing left in cell1, also when the super conductor that runs the
move is SIGKILLed while the cell hands the build back; when cell2's host
fails it too, ERROR with a fault naming both cells.
"""

import time

from cellboot import context as cb_context
from cellboot.objects import instance_fault
from cellboot.objects import instance_mapping
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional import invariants
from tests.functional.multiprocess import deployment
from tests.functional.multiprocess import test_boot

CELLS = {'cell1': ['cell1-host1', 'cell1-host2'], 'cell2': ['cell2-host1']}
ROOMY = '[compute]\nmemory_mb = 65536\n'
# Seconds each build spawns: a failing host fails it this late.
SPAWN = 1


class _CrossCellTests:
    """The specification, mixed into one class per backend."""

    def deploy(self, super_conductors=1, jobboard=None,
               failing=CELLS['cell1']):
        return self.useFixture(deployment.Deployment(
            self, backend=self.BACKEND, cells=CELLS,
            host_options={host: ROOMY for host in CELLS['cell1']},
            cell_options=f'[fake_driver]\n'
                         f'fail_hosts = {",".join(failing)}\n'
                         f'fail_mode = reschedule\n'
                         f'spawn_time = {SPAWN}\n',
            super_conductors=super_conductors, jobboard=jobboard))

    def assertMovedToCell2(self, cluster, uuid):
        cell, instance = cluster.instance(uuid)
        self.assertEqual(('cell2', 'cell2-host1', 'active'),
                         (cell, instance.host, instance.vm_state))
        listed = cluster.manage('flows', 'list', '--instance', uuid)
        names = test_boot.table_columns(listed.stdout, 'Name', 'State',
                                        'Where')
        self.assertIn(['boot', 'SUCCESS', 'flow database'], names)
        self.assertIn(['cross-cell', 'SUCCESS', 'flow database'], names)
        self.assertIn(['reschedule', 'SUCCESS', 'cell cell1'], names)
        self.assertEqual([], invariants.check_invariants())
        self.assertEqual([], cluster.api_database_files())

    def test_a_build_both_cells_fail_ends_in_error_naming_both(self):
        cluster = self.deploy(failing=CELLS['cell1'] + CELLS['cell2'])
        booted = cluster.boot()
        cluster.wait_settled(booted)
        cell, instance = cluster.instance(booted[0])
        self.assertEqual(('cell2', 'error'), (cell, instance.vm_state))
        ctxt = cb_context.get_admin_context()
        mapping = instance_mapping.InstanceMapping.get_by_instance_uuid(
            ctxt, booted[0])
        with cb_context.target_cell(ctxt, mapping.cell_mapping) as cctxt:
            fault = instance_fault.InstanceFault.get_latest_for_instances(
                cctxt, booted)[booted[0]]
        self.assertIn('cell1', fault.details)
        self.assertIn('cell2', fault.details)
        self.assertEqual([], invariants.check_invariants())

    def test_a_build_no_host_of_cell1_builds_moves_despite_kills(self):
        # (Each deployment costs 20 s or more: the plain move is this
        # test's, its kills on top.) Two super conductors share a Redis
        # jobboard. Once cell1 hands
        # the build back, each super conductor in turn is SIGKILLed and
        # restarted: whichever took the move dies once, at whatever atom
        # it was, and the other one finishes it from the board.
        redis = self.useFixture(cb_fixtures.Redis())
        cluster = self.deploy(super_conductors=2, jobboard=redis)
        (uuid,) = cluster.boot()
        deadline = time.monotonic() + deployment.SETTLE_TIMEOUT
        while not any(flow['name'] == 'cross-cell'
                      for flow in cluster.flows(uuid)):
            self.assertLess(time.monotonic(), deadline,
                            'cell1 never handed the build back')
            time.sleep(0.05)
        for name in cluster.super_conductor_names:
            cluster.kill(name)
            cluster.restart(name)
        cluster.wait_settled([uuid])
        self.assertMovedToCell2(cluster, uuid)


class MariaDBRabbitCrossCellTest(_CrossCellTests, base.MySQLMixin,
                                 base.TestCase):
    """MariaDB + RabbitMQ, services in separate processes."""
