"""``cellboot-manage flows`` over flow rows a compromised cell planted.

The rows (``tests.functional.planted``) name code; ``flows list`` and
``flows show`` show them as corrupt, say why, and run nothing of them,
in a ``cellboot-manage`` process of their own as an operator runs it.
"""

import json

from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import schema as flow_schema
from tests.functional.cmd import base as cmd_base
from tests.functional.cmd import test_manage_flows
from tests.functional import planted


class ManagePlantedFlowsTest(cmd_base.ManageTestCase):

    def setUp(self):
        super().setUp()
        flow_schema.sync_tables(self.flow_url)
        flow_schema.sync_tables(self.cell1_url)
        self.map_cell1()
        self.addCleanup(flow_db.reset)
        self.in_cell = planted.Plants(self.state_path, 'reschedule')
        self.in_flows = planted.Plants(self.state_path, 'boot',
                                       self.in_cell.instance_uuid)
        self.in_cell.plant(self.cell1_url)
        self.in_flows.plant(self.flow_url)
        self.addCleanup(self.assertEqual, ([], []),
                        (self.in_cell.ran(), self.in_flows.ran()))

    def all_uuids(self):
        return (set(self.in_cell.uuids.values()) |
                set(self.in_flows.uuids.values()))

    def test_list_shows_every_planted_flow_corrupt(self):
        result = self.manage('flows', 'list')

        self.assertSucceeded(result)
        rows = test_manage_flows.table_rows(result.stdout)
        self.assertEqual({(flow_uuid, 'CORRUPT (RUNNING)')
                          for flow_uuid in self.all_uuids()},
                         {(row[0], row[2]) for row in rows})
        self.assertIn('is corrupt and is never run', result.stderr)

    def test_list_json_gives_each_reason(self):
        result = self.manage('flows', 'list', '--instance',
                             self.in_cell.instance_uuid, '--json')

        self.assertSucceeded(result)
        flows = {flow['uuid']: flow
                 for flow in json.loads(result.stdout)['flows']}
        self.assertEqual(self.all_uuids(), set(flows))
        reasons = {label: flows[flow_uuid]['corrupt']
                   for label, flow_uuid in self.in_flows.uuids.items()}
        self.assertIn("names factory 'os.system', which is none of "
                      "cellboot's", reasons['os.system'])
        self.assertIn("names factory 'os.mkdir'", reasons['os.mkdir'])
        self.assertIn("its kind 'exfiltrate' is none that cellboot runs",
                      reasons['unknown kind'])

    def test_show_of_a_planted_flow_says_it_is_corrupt_and_why(self):
        flow_uuid = self.in_cell.uuids['os.system']

        result = self.manage('flows', 'show', flow_uuid)

        self.assertSucceeded(result)
        self.assertTrue(result.stdout.startswith(
            f'Flow {flow_uuid} (reschedule): CORRUPT (RUNNING)\n'
            f"  Corrupt:   it names factory 'os.system', which is none of "
            f"cellboot's; it is never run\n"), result)

    def test_show_by_instance_shows_all_six_corrupt(self):
        result = self.manage('flows', 'show', self.in_cell.instance_uuid)

        self.assertSucceeded(result)
        headers = [line for line in result.stdout.splitlines()
                   if line.startswith('Flow ')]
        self.assertEqual(6, len(headers), result)
        self.assertTrue(all(line.endswith(': CORRUPT (RUNNING)')
                            for line in headers), headers)
