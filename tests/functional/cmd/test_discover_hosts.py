"""``cell_v2 discover_hosts``: every unmapped compute host gets mapped."""

from cellboot import context as cb_context
from cellboot.objects import compute_node
from cellboot.objects import host_mapping
from tests import base as test_base
from tests.functional.cmd import base

HostMapping = host_mapping.HostMapping

# Enough hosts that two concurrent runs overlap in time.
CONCURRENT_HOSTS = 150


class _DiscoverHostsTests:

    def setUp(self):
        super().setUp()
        self.cell1 = self.map_cell1()

    def add_nodes(self, cell, *hosts, nodes_per_host=1):
        with cb_context.target_cell(self.context, cell) as cctxt:
            for host in hosts:
                for index in range(nodes_per_host):
                    compute_node.ComputeNode.create(
                        cctxt, host, f'{host}-node{index}', vcpus=8,
                        memory_mb=16384, local_gb=100)

    def unmapped_nodes(self, cell):
        with cb_context.target_cell(self.context, cell) as cctxt:
            return [node.hypervisor_hostname for node in
                    compute_node.ComputeNode.get_unmapped(cctxt)]

    def mappings(self):
        return {mapping.host: mapping.cell_mapping.name
                for mapping in HostMapping.get_all(self.context)}

    def discover(self, *extra):
        return self.manage('cell_v2', 'discover_hosts', *extra)

    def test_every_unmapped_host_of_every_cell_is_mapped(self):
        cell2 = self.map_cell1(name='cell2', url=self._database('cell'))
        self.add_nodes(self.cell1, 'compute1', 'compute2')
        self.add_nodes(cell2, 'compute3')
        result = self.discover()
        self.assertSucceeded(result)
        self.assertEqual({'compute1': 'cell1', 'compute2': 'cell1',
                          'compute3': 'cell2'}, self.mappings())
        self.assertEqual([], self.unmapped_nodes(self.cell1))
        self.assertEqual([], self.unmapped_nodes(cell2))

    def test_each_mapped_host_is_printed(self):
        self.add_nodes(self.cell1, 'compute1', 'compute2')
        result = self.discover()
        self.assertIn(
            f'Mapped host compute1 to cell cell1 ({self.cell1.uuid})',
            result.stdout)
        self.assertIn('Discovered 2 new host(s) in 1 cell(s)', result.stdout)

    def test_a_host_with_several_nodes_gets_one_mapping(self):
        self.add_nodes(self.cell1, 'compute1', nodes_per_host=3)
        self.assertSucceeded(self.discover())
        self.assertEqual({'compute1': 'cell1'}, self.mappings())
        self.assertEqual([], self.unmapped_nodes(self.cell1))

    def test_a_second_run_maps_nothing_and_changes_nothing(self):
        self.add_nodes(self.cell1, 'compute1')
        self.discover()
        before = self.api_snapshot()
        result = self.discover()
        self.assertSucceeded(result)
        self.assertIn('Discovered 0 new host(s)', result.stdout)
        self.assertEqual(before, self.api_snapshot())

    def test_a_new_node_of_a_mapped_host_is_marked_mapped(self):
        self.add_nodes(self.cell1, 'compute1')
        self.discover()
        with cb_context.target_cell(self.context, self.cell1) as cctxt:
            compute_node.ComputeNode.create(cctxt, 'compute1', 'extra-node',
                                            vcpus=8, memory_mb=16384,
                                            local_gb=100)
        self.assertSucceeded(self.discover())
        self.assertEqual([], self.unmapped_nodes(self.cell1))

    def test_cell0_and_disabled_cells_are_not_discovered(self):
        cell0 = self.map_cell0()
        disabled = self.map_cell1(name='off', url=self._database('cell'),
                                  disabled=True)
        self.add_nodes(cell0, 'stray')
        self.add_nodes(disabled, 'compute9')
        self.assertSucceeded(self.discover())
        self.assertEqual({}, self.mappings())
        self.assertEqual(['compute9-node0'], self.unmapped_nodes(disabled))

    def test_cell_uuid_discovers_only_that_cell(self):
        cell2 = self.map_cell1(name='cell2', url=self._database('cell'))
        self.add_nodes(self.cell1, 'compute1')
        self.add_nodes(cell2, 'compute2')
        result = self.discover('--cell_uuid', cell2.uuid)
        self.assertSucceeded(result)
        self.assertEqual({'compute2': 'cell2'}, self.mappings())

    def test_a_cell_that_is_down_is_reported_and_the_others_discovered(self):
        self.map_cell1(name='dead', url=base.DEAD_DATABASE_URL)
        self.add_nodes(self.cell1, 'compute1')
        result = self.discover()
        self.assertOneLineError(result, 1, 'cell dead', 'skipped')
        self.assertNotIn(base.DEAD_PASSWORD, result.stderr)
        self.assertEqual({'compute1': 'cell1'}, self.mappings())

    def test_a_host_mapped_to_another_cell_is_reported_not_moved(self):
        cell2 = self.map_cell1(name='cell2', url=self._database('cell'))
        HostMapping.create(self.context, 'compute1', cell2.uuid)
        self.add_nodes(self.cell1, 'compute1', 'compute2')
        result = self.discover()
        self.assertOneLineError(result, 1, 'compute1', 'cell2')
        self.assertEqual({'compute1': 'cell2', 'compute2': 'cell1'},
                         self.mappings())
        self.assertEqual(['compute1-node0'], self.unmapped_nodes(self.cell1))

    def test_two_concurrent_runs_map_every_host_exactly_once(self):
        hosts = [f'compute{index:03d}' for index in range(CONCURRENT_HOSTS)]
        self.add_nodes(self.cell1, *hosts)
        args = ('--config-file', self.config_file, 'cell_v2',
                'discover_hosts')
        processes = [base.start(*args) for _ in range(2)]
        results = [base.finish(process, args) for process in processes]
        for result in results:
            self.assertSucceeded(result)
            self.assertEqual('', result.stderr, result)
        reported = [line.split()[2] for result in results
                    for line in result.stdout.splitlines()
                    if line.startswith('Mapped host ')]
        self.assertEqual(sorted(hosts), sorted(reported))
        self.assertEqual(dict.fromkeys(hosts, 'cell1'), self.mappings())
        self.assertEqual([], self.unmapped_nodes(self.cell1))


class SQLiteDiscoverHostsTest(_DiscoverHostsTests, test_base.SQLiteMixin,
                              base.ManageTestCase):
    pass


class MySQLDiscoverHostsTest(_DiscoverHostsTests, test_base.MySQLMixin,
                             base.ManageTestCase):
    pass


class PostgreSQLDiscoverHostsTest(_DiscoverHostsTests,
                                  test_base.PostgreSQLMixin,
                                  base.ManageTestCase):
    pass
