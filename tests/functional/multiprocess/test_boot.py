"""Boots through cellboot's services in separate processes.

MariaDB for every database, RabbitMQ between the processes, each
service started by its own command as an operator would, and the
services inside a cell configured with their cell's database and bus
alone. The happy path across two cells and a reschedule onto an
alternate are the two scenarios the in-process tests also cover on
SQLite and ``fake://``: here they prove that the pieces fit across
process boundaries. After each, the invariant checker must find nothing.
"""

import time

from tests import base
from tests.functional import invariants
from tests.functional.multiprocess import deployment


def table_columns(text, *names):
    """The cells under the headers ``names`` of a printed table's rows.

    Read by header, not by position: ``flows list`` gains columns.
    """
    rows = [[cell.strip() for cell in line.strip('|').split('|')]
            for line in text.splitlines() if line.startswith('| ')]
    header, data = rows[0], rows[1:]
    wanted = [header.index(name) for name in names]
    return [[row[index] for index in wanted] for row in data]


class _BootTests:
    """The specification, mixed into one class per backend."""

    def assertCellServicesUsedNoApiDatabase(self, cluster):
        self.assertEqual([], cluster.api_database_files())

    def test_boots_go_active_in_the_cells_their_hints_target(self):
        cluster = self.useFixture(deployment.Deployment(
            self, backend=self.BACKEND,
            cells={'cell1': ['cell1-host1'], 'cell2': ['cell2-host1']}))
        first = cluster.boot(hints={'target_cell': 'cell1'})
        second = cluster.boot(hints={'target_cell': 'cell2'})
        cluster.wait_settled(first + second)

        placed = {}
        for instance_uuid in first + second:
            cell, instance = cluster.instance(instance_uuid)
            placed[instance_uuid] = (cell, instance.host, instance.vm_state)
        self.assertEqual(
            {first[0]: ('cell1', 'cell1-host1', 'active'),
             second[0]: ('cell2', 'cell2-host1', 'active')}, placed)
        self.assertEqual([], invariants.check_invariants())
        self.assertCellServicesUsedNoApiDatabase(cluster)

    def test_build_failing_on_its_host_is_rescheduled_to_an_alternate(self):
        # host1 has more free RAM, so the scheduler picks it first; its
        # builds fail, reschedulably: the cell conductor must move the
        # instance to host2, the alternate the boot flow passed along.
        cluster = self.useFixture(deployment.Deployment(
            self, backend=self.BACKEND,
            cells={'cell1': ['cell1-host1', 'cell1-host2']},
            host_options={'cell1-host1': '[compute]\nmemory_mb = 65536\n'},
            cell_options='[fake_driver]\nfail_hosts = cell1-host1\n'
                         'fail_mode = reschedule\n'))
        booted = cluster.boot(hints={'target_cell': 'cell1'})
        cluster.wait_settled(booted)

        cell, instance = cluster.instance(booted[0])
        self.assertEqual(('cell1', 'cell1-host2', 'active'),
                         (cell, instance.host, instance.vm_state))
        # As an operator reads it; sorted, since MariaDB keeps TaskFlow's
        # timestamps to the second.
        listed = cluster.manage('flows', 'list', '--instance', booted[0])
        self.assertEqual(
            [['boot', 'SUCCESS', 'flow database'],
             ['reschedule', 'SUCCESS', 'cell cell1']],
            sorted(table_columns(listed.stdout, 'Name', 'State', 'Where')))
        self.assertEqual([], invariants.check_invariants())
        self.assertCellServicesUsedNoApiDatabase(cluster)

    def test_a_cell_keeps_rescheduling_with_the_api_level_stopped(self):
        # The build reaches host1 (first choice, most memory), which fails
        # it after SPAWN seconds. Meanwhile every API-level process dies:
        # the super conductors, the API level's scheduler and the API.
        # The cell's own conductor and scheduler must still move the
        # build to host2.
        cluster = self.useFixture(deployment.Deployment(
            self, backend=self.BACKEND,
            cells={'cell1': ['cell1-host1', 'cell1-host2']},
            host_options={'cell1-host1': '[compute]\nmemory_mb = 65536\n'},
            cell_options=f'[fake_driver]\nfail_hosts = cell1-host1\n'
                         f'fail_mode = reschedule\n'
                         f'spawn_time = {API_LEVEL_GONE_SPAWN}\n'))
        (booted,) = cluster.boot(hints={'target_cell': 'cell1'})
        deadline = time.monotonic() + deployment.SETTLE_TIMEOUT
        while [flow['state'] for flow in cluster.flows(booted)
               if flow['name'] == 'boot'] != ['SUCCESS']:
            self.assertLess(time.monotonic(), deadline,
                            'the boot flow never cast the build')
            time.sleep(0.1)
        api_level = cluster.super_conductor_names + ['scheduler']
        if cluster.with_api:
            api_level.append('api')
        for name in api_level:
            cluster.kill(name)

        deadline = time.monotonic() + deployment.SETTLE_TIMEOUT
        while True:
            cell, instance = cluster.instance(booted)
            if instance.vm_state != 'building':
                break
            self.assertLess(time.monotonic(), deadline,
                            f'still building: {instance.host}')
            time.sleep(0.2)
        self.assertEqual(('cell1', 'cell1-host2', 'active'),
                         (cell, instance.host, instance.vm_state))
        self.assertIn('reschedule', [flow['name'] for flow in
                                     cluster.flows(booted)])
        self.assertEqual([], invariants.check_invariants())


# Seconds each build spawns in the test above: room to stop the API
# level between the cast and host1's failure.
API_LEVEL_GONE_SPAWN = 3


class MariaDBRabbitBootTest(_BootTests, base.MySQLMixin, base.TestCase):
    """MariaDB + RabbitMQ, services in separate processes."""
