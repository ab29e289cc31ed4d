"""``cellboot-manage flows list`` and ``flows show`` on real flows.

Each test boots through an in-process deployment (``cluster.Cluster``:
SQLite files, ``fake://``, the real conductors, scheduler and compute
hosts), so the flow database and the cell database hold flows persisted
by the real engine; then it runs ``cellboot-manage`` as an operator
does, in its own process, against the same databases.
"""

import os
import textwrap

from tests import base
from tests.functional import cluster as cluster_mod
from tests.functional.cmd import base as cmd_base
from cellboot.workflows import lookup

BOOT_ATOMS = ['schedule', 'map-host-to-cell', 'create-in-cell',
              'map-instance', 'delete-build-request', 'cast-to-compute']

# More than any host of the cluster has: the scheduler finds no host.
HUGE_FLAVOR = {'flavorid': 'huge', 'name': 'huge', 'vcpus': 1000,
               'memory_mb': 512, 'root_gb': 1}


def table_rows(text):
    """The cells of each data row of the tables in ``text``."""
    rows = [[cell.strip() for cell in line.strip('|').split('|')]
            for line in text.splitlines() if line.startswith('| ')]
    return [row for row in rows if row[0] not in ('Atom', 'Flow ID')]


class ManageFlowsTest(base.TestCase):
    """One cell of two hosts, booted through, then inspected."""

    def setUp(self):
        super().setUp()
        self.cluster = None

    def start_cluster(self, fail_hosts=()):
        self.flags(fail_hosts=list(fail_hosts), group='fake_driver')
        self.cluster = self.useFixture(cluster_mod.Cluster(
            cells=1, hosts_per_cell=2))
        self.config_file = os.path.join(self.cluster.state_path,
                                        'manage.conf')
        with open(self.config_file, 'w') as conf:
            conf.write(textwrap.dedent(f"""\
                [DEFAULT]
                state_path = {self.cluster.state_path}

                [api_database]
                connection = {self.cluster.api_url}

                [flow_persistence]
                connection = {self.cluster.flow_url}
                """))

    def boot(self, count=1, flavor=None):
        uuids = self.cluster.boot(count=count, flavor=flavor)
        self.cluster.wait_for_quiet()
        return uuids

    def manage(self, *args):
        return cmd_base.run('--config-file', self.config_file, 'flows',
                            *args)

    def flow_of(self, instance_uuid, kind='boot'):
        """The summary of the instance's flow of ``kind`` (in-process)."""
        found = lookup.find_flows_everywhere(self.cluster.ctx,
                                             instance_uuid=instance_uuid)
        return [flow for flow in found if flow['kind'] == kind][0]

    def assertSucceeded(self, result):
        self.assertEqual(0, result.code, result)
        self.assertEqual('', result.stderr, result)

    def assertOneLineError(self, result, *fragments):
        self.assertEqual(1, result.code, result)
        self.assertEqual('', result.stdout, result)
        self.assertEqual(1, len(result.stderr_lines), result)
        self.assertTrue(result.stderr_lines[0].startswith('ERROR: '), result)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr_lines[0], result)

    # -- flows list ------------------------------------------------------

    def test_list_shows_a_flow_with_its_instance_state_and_conductor(self):
        self.start_cluster()
        [instance_uuid] = self.boot()
        flow = self.flow_of(instance_uuid)

        result = self.manage('list')

        self.assertSucceeded(result)
        [row] = table_rows(result.stdout)
        self.assertEqual([flow['uuid'], 'boot', 'SUCCESS', instance_uuid,
                          flow['conductor'], 'flow database'],
                         row[:5] + row[7:])

    def test_list_by_state_shows_only_the_flows_in_that_state(self):
        self.start_cluster()
        [built] = self.boot()
        [refused] = self.boot(flavor=HUGE_FLAVOR)

        result = self.manage('list', '--state', 'reverted')

        self.assertSucceeded(result)
        self.assertEqual([[self.flow_of(refused)['uuid'], 'REVERTED']],
                         [row[:1] + row[2:3]
                          for row in table_rows(result.stdout)])

    def test_list_by_instance_shows_only_that_instances_flows(self):
        self.start_cluster()
        [first] = self.boot()
        [second] = self.boot()

        result = self.manage('list', '--instance', second)

        self.assertSucceeded(result)
        self.assertEqual([self.flow_of(second)['uuid']],
                         [row[0] for row in table_rows(result.stdout)])

    def test_list_shows_how_many_instances_a_multi_create_has(self):
        self.start_cluster()
        uuids = self.boot(count=3)

        result = self.manage('list')

        self.assertSucceeded(result)
        [row] = table_rows(result.stdout)
        self.assertEqual(f'{uuids[0]} (+2 more)', row[3])

    def test_list_of_an_unknown_state_is_one_error_line(self):
        self.start_cluster()

        result = self.manage('list', '--state', 'sleeping')

        self.assertOneLineError(result, '--state sleeping', 'REVERTED')

    # -- flows show ------------------------------------------------------

    def test_show_by_flow_id_gives_each_atom_in_order_with_its_duration(self):
        self.start_cluster()
        [instance_uuid] = self.boot()
        flow = self.flow_of(instance_uuid)

        result = self.manage('show', flow['uuid'])

        self.assertSucceeded(result)
        self.assertTrue(result.stdout.startswith(
            f'Flow {flow["uuid"]} (boot): SUCCESS\n'), result)
        rows = table_rows(result.stdout)
        self.assertEqual([(name, 'task', 'SUCCESS') for name in BOOT_ATOMS],
                         [tuple(row[:3]) for row in rows])
        for row in rows:
            self.assertRegex(row[3], r'^\d+(\.\d)? m?s$')

    def test_show_summarizes_each_atoms_result_per_instance(self):
        self.start_cluster()
        uuids = self.boot(count=3)

        result = self.manage('show', uuids[1])

        self.assertSucceeded(result)
        results = {row[0]: row[4] for row in table_rows(result.stdout)}
        self.assertEqual('3 instances: ok (3)', results['create-in-cell'])

    def test_show_of_a_refused_boot_gives_the_failure_type_and_message(self):
        self.start_cluster()
        [refused] = self.boot(flavor=HUGE_FLAVOR)

        result = self.manage('show', refused)

        self.assertSucceeded(result)
        schedule = table_rows(result.stdout)[0]
        self.assertEqual(['schedule', 'task', 'REVERTED'], schedule[:3])
        self.assertEqual('NoValidHost', schedule[5])
        self.assertIn('Failures:\n  schedule: NoValidHost: No valid host '
                      'was found', result.stdout)

    def test_show_by_instance_gives_its_boot_and_reschedule_flows(self):
        # Both hosts fail every build: the boot casts to one, the cell
        # conductor reschedules to the other, then runs out of hosts.
        self.start_cluster(fail_hosts=['cell1-host1', 'cell1-host2'])
        [instance_uuid] = self.boot()

        result = self.manage('show', instance_uuid)

        self.assertSucceeded(result)
        headers = [line.split(' ', 2)[2] for line in
                   result.stdout.splitlines() if line.startswith('Flow ')]
        self.assertEqual(['(boot): SUCCESS', '(reschedule): SUCCESS',
                          '(reschedule): REVERTED'], headers)
        self.assertIn('  claim-alternate: MaxRetriesExceeded: Exceeded '
                      'maximum number of retries', result.stdout)

    def test_show_of_an_id_that_matches_nothing_is_one_error_line(self):
        self.start_cluster()
        self.boot()
        unknown = '5a2b4d6c-0000-4000-8000-000000000000'

        result = self.manage('show', unknown)

        self.assertOneLineError(result, f'no flow has id {unknown}')
