"""``cellboot flow show ID [--dot FILE]`` against the API."""

import os
import shutil

import networkx as nx

from cellboot.cli import client
from cellboot.cli import exit_codes
from tests.functional.cli import base


class FlowShowTest(base.CLITestCase):
    """One cell whose first host fails every build: a reschedule each."""

    CELLS = 1
    HOSTS_PER_CELL = 2
    FAIL_HOSTS = ('cell1-host1',)

    def setUp(self):
        super().setUp()
        self.server_id = self.create(wait=True)
        admin = client.Client(self.deployment.url, base.ADMIN_TOKEN)
        self.flows = admin.get('/os-flows', instance_uuid=self.server_id)[
            'flows']

    def _flow_id(self, kind='boot'):
        return next(flow['uuid'] for flow in self.flows
                    if flow['kind'] == kind)

    def test_show_lists_the_atoms_of_a_flow_with_their_states(self):
        result = self.cli('flow', 'show', self._flow_id(),
                          token=base.ADMIN_TOKEN)
        self.assertEqual(0, result.code, result)
        for atom in ('schedule', 'claim-pool', 'map-host-to-cell',
                     'create-in-cell',
                     'map-instance', 'delete-build-request',
                     'cast-to-compute'):
            self.assertRegex(result.out, rf'\| {atom} +\| SUCCESS ')

    def test_show_of_a_server_id_lists_its_boot_and_reschedule_flows(self):
        result = self.cli('flow', 'show', self.server_id,
                          token=base.ADMIN_TOKEN)
        self.assertEqual(0, result.code, result)
        self.assertIn('(boot, flow database)', result.out)
        self.assertIn('(reschedule, cell cell1)', result.out)
        self.assertIn('| claim-alternate ', result.out)

    def test_show_to_a_user_is_forbidden(self):
        result = self.cli('flow', 'show', self._flow_id())
        self.assertOneLineError(result, exit_codes.AUTH)

    def test_show_of_an_unknown_id_is_not_found(self):
        result = self.cli('flow', 'show', 'no-such-flow',
                          token=base.ADMIN_TOKEN)
        self.assertOneLineError(result, exit_codes.NOT_FOUND, 'no-such-flow')

    def test_dot_writes_the_atoms_and_states_as_a_graphviz_graph(self):
        path = os.path.join(self.state_path, 'boot.dot')
        result = self.cli('flow', 'show', self._flow_id('reschedule'),
                          '--dot', path, token=base.ADMIN_TOKEN)
        self.assertEqual(0, result.code, result)
        graph = nx.drawing.nx_pydot.read_dot(path)
        labels = [data['label'] for _node, data in graph.nodes(data=True)]
        self.assertEqual(4, len(labels))
        self.assertIn('claim-alternate', labels[2])
        self.assertIn('SUCCESS', labels[2])
        self.assertEqual(3, graph.number_of_edges())

    def test_dot_of_a_server_with_several_flows_is_a_usage_error(self):
        path = os.path.join(self.state_path, 'flows.dot')
        result = self.cli('flow', 'show', self.server_id, '--dot', path,
                          token=base.ADMIN_TOKEN)
        self.assertEqual(exit_codes.USAGE, result.code, result)
        self.assertFalse(os.path.exists(path))

    def test_svg_without_graphviz_writes_dot_and_says_so(self):
        if shutil.which('dot'):
            self.skipTest('Graphviz is installed here')
        path = os.path.join(self.state_path, 'boot.svg')
        result = self.cli('flow', 'show', self._flow_id(), '--dot', path,
                          token=base.ADMIN_TOKEN)
        self.assertOneLineError(result, exit_codes.ERROR, 'boot.dot')
        self.assertTrue(os.path.exists(path[:-4] + '.dot'))

    def test_svg_with_graphviz_is_rendered(self):
        if not shutil.which('dot'):
            self.skipTest('Graphviz is not installed here')
        path = os.path.join(self.state_path, 'boot.svg')
        result = self.cli('flow', 'show', self._flow_id(), '--dot', path,
                          token=base.ADMIN_TOKEN)
        self.assertEqual(0, result.code, result)
        with open(path) as svg:
            self.assertIn('<svg', svg.read())
