"""``cellboot-manage flows list`` and ``flows show`` on real flows.

Each test boots through an in-process deployment (``cluster.Cluster``:
SQLite files, ``fake://``, the real conductors, scheduler and compute
hosts), so the flow database and the cell database hold flows persisted
by the real engine; then it runs ``cellboot-manage`` as an operator
does, in its own process, against the same databases.
"""

import datetime
import json
import os
import textwrap

from oslo_utils import timeutils
from oslo_utils import uuidutils
from taskflow.persistence import models
from taskflow import states

from cellboot.flowrun import backend as flow_db
from tests import base
from tests.functional import cluster as cluster_mod
from tests.functional.cmd import base as cmd_base
from cellboot.flowrun import lookup
from cellboot.flowrun import schema as flow_schema

BOOT_ATOMS = ['schedule', 'claim-pool', 'map-host-to-cell',
              'create-in-cell',
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
                          flow['owner'], '0', 'flow database'],
                         row[:5] + row[6:7] + row[8:])
        self.assertRegex(row[5], r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ '
                                 r'\(\d+s ago\)$')

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


def _iso(moment):
    return moment.strftime('%Y-%m-%dT%H:%M:%SZ')


class ManageFlowOwnersTest(cmd_base.ManageTestCase):
    """Who owns each flow, since when, and its resumptions.

    The flows are written through TaskFlow's persistence API with the
    meta a conductor writes (``engine.flow_meta``, ``engine.take_over``):
    no conductor needs to run, let alone die, for the command to read
    them. Three flows, oldest first:

    * ``taken``: a boot RUNNING in the flow database, created by ctl1 15
      minutes ago, taken over by ctl2:4242 10 minutes ago (one
      resumption, from RUNNING): stuck for 10 minutes.
    * ``fresh``: a boot RUNNING, written before flows had owners (only
      ``conductor`` and ``started_at``), started 30 s ago.
    * ``twice``: a reschedule in cell1's database, SUCCESS, resumed
      twice; its times carry their zone (``Z``, ``+00:00``).
    """

    def setUp(self):
        super().setUp()
        flow_schema.sync_tables(self.flow_url)
        flow_schema.sync_tables(self.cell1_url)
        self.map_cell1()
        self.addCleanup(flow_db.reset)
        now = timeutils.utcnow()
        self.created = now - datetime.timedelta(minutes=15)
        self.taken_at = now - datetime.timedelta(minutes=10)
        self.fresh_at = now - datetime.timedelta(seconds=30)
        self.instances = [uuidutils.generate_uuid() for _ in range(3)]
        self.taken = self.write_flow(
            self.flow_url, 'boot', states.RUNNING, self.instances[0],
            conductor='ctl1', started_at=self.created.isoformat(),
            owner='ctl2:4242', owned_since=self.taken_at.isoformat(),
            resumptions=[{'by': 'ctl2:4242',
                          'at': self.taken_at.isoformat(),
                          'from_state': states.RUNNING}])
        self.fresh = self.write_flow(
            self.flow_url, 'boot', states.RUNNING, self.instances[1],
            conductor='ctl1', started_at=self.fresh_at.isoformat())
        self.twice = self.write_flow(
            self.cell1_url, 'reschedule', states.SUCCESS, self.instances[2],
            conductor='cell1-cond', started_at=_iso(self.created),
            owner='cell1-cond-b:77', owned_since=_iso(self.taken_at),
            resumptions=[
                {'by': 'cell1-cond-a:5', 'at': _iso(self.created),
                 'from_state': states.RUNNING},
                {'by': 'cell1-cond-b:77',
                 'at': self.taken_at.isoformat() + '+00:00',
                 'from_state': states.REVERTING}])

    def write_flow(self, url, kind, state, instance_uuid, **meta):
        """Save a logbook with one flow detail, as a conductor would."""
        book = models.LogBook(kind)
        flow_detail = models.FlowDetail(kind, uuidutils.generate_uuid())
        flow_detail.state = state
        flow_detail.meta = dict(meta, kind=kind,
                                instance_uuids=[instance_uuid],
                                request_id='req-' + kind)
        book.add(flow_detail)
        flow_db.get_connection(url).save_logbook(book)
        return flow_detail.uuid

    def manage_flows(self, *args):
        return self.manage('flows', *args)

    def rows_by_flow(self, result):
        self.assertSucceeded(result)
        self.assertEqual('', result.stderr, result)
        headers = [cell.strip() for cell in
                   result.stdout.splitlines()[1].strip('|').split('|')]
        return {row[0]: dict(zip(headers, row))
                for row in table_rows(result.stdout)}

    # -- flows list ------------------------------------------------------

    def test_list_gives_owner_since_and_resumed_count_with_fallbacks(self):
        rows = self.rows_by_flow(self.manage_flows('list'))

        self.assertEqual(
            [(self.taken, 'ctl2:4242', '1', 'flow database'),
             (self.fresh, 'ctl1', '0', 'flow database'),
             (self.twice, 'cell1-cond-b:77', '2', 'cell cell1')],
            [(uuid, row['Owner'], row['Resumed'], row['Where'])
             for uuid, row in rows.items()])
        self.assertRegex(rows[self.taken]['Since'],
                         rf'^{_iso(self.taken_at)} \(10m[0-5]\ds ago\)$')
        self.assertRegex(rows[self.fresh]['Since'],
                         rf'^{_iso(self.fresh_at)} \([3-8]\ds ago\)$')
        self.assertRegex(rows[self.twice]['Since'],
                         rf'^{_iso(self.taken_at)} \(10m[0-5]\ds ago\)$')

    def test_list_running_older_than_finds_only_the_stuck_flow(self):
        rows = self.rows_by_flow(self.manage_flows(
            'list', '--state', 'Running', '--older-than', '300'))

        self.assertEqual([self.taken], list(rows))

    def test_list_json_gives_every_flow_with_plain_values(self):
        result = self.manage_flows('list', '--json')

        self.assertSucceeded(result)
        flows = {flow['uuid']: flow
                 for flow in json.loads(result.stdout)['flows']}
        self.assertEqual([self.taken, self.fresh, self.twice], list(flows))
        fresh = flows[self.fresh]
        self.assertEqual(
            ('boot', 'RUNNING', [self.instances[1]], 'ctl1',
             _iso(self.fresh_at), 0, [], 'flow database'),
            (fresh['kind'], fresh['state'], fresh['instance_uuids'],
             fresh['owner'], fresh['since'], fresh['resumed'],
             fresh['resumptions'], fresh['location']))
        self.assertTrue(30 <= fresh['age_seconds'] < 90, fresh)
        self.assertEqual(
            ('cell1-cond-b:77', 2, states.REVERTING),
            (flows[self.twice]['owner'], flows[self.twice]['resumed'],
             flows[self.twice]['resumptions'][1]['from_state']))

    def test_list_of_an_unknown_state_is_a_usage_error_naming_the_states(
            self):
        result = self.manage_flows('list', '--state', 'sleeping')

        self.assertOneLineError(result, 2, "--state: 'sleeping' is no flow "
                                           "state", 'RUNNING', 'REVERTED')

    def test_list_older_than_a_non_number_is_a_usage_error(self):
        result = self.manage_flows('list', '--older-than', 'an hour')

        self.assertOneLineError(result, 2, '--older-than', "'an hour'")

    # -- flows show ------------------------------------------------------

    def test_show_gives_owner_since_and_each_resumption(self):
        result = self.manage_flows('show', self.instances[2])

        self.assertSucceeded(result)
        self.assertIn('  Conductor: cell1-cond\n'
                      '  Owner:     cell1-cond-b:77\n'
                      f'  Since:     {_iso(self.taken_at)} (10m',
                      result.stdout)
        self.assertIn(
            '  Resumptions (2):\n'
            f'    {_iso(self.created)}  by cell1-cond-a:5   from RUNNING\n'
            f'    {_iso(self.taken_at)}  by cell1-cond-b:77  from '
            f'REVERTING\n', result.stdout)

    def test_show_of_a_flow_never_resumed_has_no_resumptions(self):
        result = self.manage_flows('show', self.fresh)

        self.assertSucceeded(result)
        self.assertIn('  Conductor: ctl1\n'
                      '  Owner:     ctl1\n'
                      f'  Since:     {_iso(self.fresh_at)} (',
                      result.stdout)
        self.assertNotIn('Resumptions', result.stdout)
