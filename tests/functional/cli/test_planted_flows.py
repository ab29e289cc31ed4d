"""``cellboot flow show`` over flow rows a compromised cell planted.

The rows (``tests.functional.planted``) are in cell1's database and in
the flow database of a running deployment; the CLI shows them as
corrupt, through the API, and nothing they name runs.
"""

from tests.functional.cli import base
from tests.functional import planted


class PlantedFlowShowTest(base.CLITestCase):

    CELLS = 1
    HOSTS_PER_CELL = 1

    def setUp(self):
        super().setUp()
        self.in_cell = planted.Plants(self.state_path, 'reschedule')
        self.in_flows = planted.Plants(self.state_path, 'boot',
                                       self.in_cell.instance_uuid)
        self.in_cell.plant(self.deployment.cells[0].database_connection)
        self.in_flows.plant(self.deployment.flow_url)
        self.addCleanup(self.assertEqual, ([], []),
                        (self.in_cell.ran(), self.in_flows.ran()))

    def test_show_of_a_planted_flow_says_it_is_corrupt_and_why(self):
        flow_uuid = self.in_flows.uuids['os.mkdir']
        result = self.cli('flow', 'show', flow_uuid, token=base.ADMIN_TOKEN)
        self.assertEqual(0, result.code, result)
        self.assertEqual(
            [f'Flow {flow_uuid} boot (boot, flow database): CORRUPT '
             f'(RUNNING)',
             "  Corrupt: it names factory 'os.mkdir', which is none of "
             "cellboot's; it is never run"],
            result.out.splitlines()[:2])

    def test_show_of_the_instance_shows_every_planted_flow_corrupt(self):
        result = self.cli('flow', 'show', self.in_cell.instance_uuid,
                          token=base.ADMIN_TOKEN)
        self.assertEqual(0, result.code, result)
        headers = [line for line in result.out.splitlines()
                   if line.startswith('Flow ')]
        self.assertEqual(6, len(headers), result)
        self.assertTrue(all(line.endswith(': CORRUPT (RUNNING)')
                            for line in headers), headers)
        self.assertEqual(6, result.out.count('  Corrupt: '))
