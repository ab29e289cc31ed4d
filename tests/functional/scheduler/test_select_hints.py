"""Scheduler hints and server groups, resolved by the API level, placed by
the cells: same_host, different_host, target_cell, affinity and
anti-affinity, within one cell and across two.

The API level reads which cell holds each hinted instance and group
member (their instance mappings) and tells each cell only of its own
(``routing.CellsRequest.spec_for``); the cell finds their hosts from its
allocations.
"""

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.objects import server_group
from tests import base
from tests.functional.scheduler import placement_base
from tests.functional.scheduler.placement_base import spec

SMALL = {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}


def _group(policy, members=()):
    return {'uuid': uuidutils.generate_uuid(), 'policy': policy,
            'members': list(members), 'hosts': []}


class _HintTests(placement_base.RamWeighedSelection):

    # NoValidHost tests start the cells' schedulers: they publish their
    # aggregates, which the API level reads again before it says no.

    def _server_on(self, provider, cell=0, project_id='project-a'):
        """A server of ``project_id`` holding SMALL on ``provider``."""
        uuid = self.map_server(cell, project_id)
        self.claim(uuid, provider, SMALL)
        return uuid

    # -- server groups in one cell -------------------------------------

    def test_anti_affinity_spreads_the_instances_of_one_request(self):
        for i in range(3):
            self.add_host(f'h{i}')
        _instances, selections = self._select(
            spec(instance_group=_group('anti-affinity')), count=3)
        self.assertEqual(3, len(set(self._hosts_of(selections))))

    def test_affinity_keeps_the_instances_of_one_request_together(self):
        for i in range(3):
            self.add_host(f'h{i}')
        _instances, selections = self._select(
            spec(instance_group=_group('affinity')), count=3)
        self.assertEqual(1, len(set(self._hosts_of(selections))))

    def test_anti_affinity_avoids_hosts_of_existing_members(self):
        a = self.add_host('a', memory_mb=65536)
        self.add_host('b')
        member = self._server_on(a)
        group = _group('anti-affinity', [member])
        for _ in range(3):
            _instances, selections = self._select(spec(instance_group=group))
            self.assertEqual(['b'], self._hosts_of(selections))

    def test_group_hint_loads_the_server_group(self):
        self.add_host('a')
        b = self.add_host('b', memory_mb=65536)
        group = server_group.ServerGroup.create(
            self.ctx, 'web', 'project-a', 'anti-affinity')
        group.add_members(self.ctx, [self._server_on(b)])
        _instances, selections = self._select(
            spec(scheduler_hints={'group': group.uuid}))
        self.assertEqual(['a'], self._hosts_of(selections))

    def test_group_hint_naming_no_group_is_no_valid_host(self):
        self.add_host('a')
        error = self.assertRaises(
            exception.NoValidHost, self._select,
            spec(scheduler_hints={'group': uuidutils.generate_uuid()}))
        self.assertIn('does not exist', str(error))

    # -- server groups across cells ------------------------------------

    def test_affinity_with_a_member_in_cell2_lands_in_cell2(self):
        self.add_host('roomy', cell=0, memory_mb=65536)
        b = self.add_host('b', cell=1)
        group = _group('affinity', [self._server_on(b, cell=1)])
        _instances, selections = self._select(spec(instance_group=group))
        self.assertEqual(['b'], self._hosts_of(selections))

    def test_anti_affinity_member_in_cell1_does_not_stop_cell2s_host(self):
        x = self.add_host('x', cell=0, memory_mb=65536)
        self.add_host('y', cell=1)
        group = _group('anti-affinity', [self._server_on(x)])
        # cell1 weighs best and refuses (x is the member's); cell2, told
        # of no member of its own, takes it.
        _instances, selections = self._select(spec(instance_group=group))
        self.assertEqual(['y'], self._hosts_of(selections))

    def test_anti_affinity_is_split_over_the_hosts_of_both_cells(self):
        self.add_host('a1', cell=0, memory_mb=65536)
        self.add_host('a2', cell=0, memory_mb=65536)
        self.add_host('b1', cell=1)
        instances, selections = self._select(
            spec(instance_group=_group('anti-affinity')), count=3)
        self.assertEqual(['a1', 'a2', 'b1'],
                         sorted(self._hosts_of(selections)))

    def test_an_affinity_group_is_never_split_over_cells(self):
        # Each cell's one host has room for 2 of the 3.
        self.add_host('a', cell=0, vcpus=4)
        self.add_host('b', cell=1, vcpus=4)
        instances = placement_base.uuids(3)
        self.assertRaises(exception.NoValidHost,
                          self.scheduler.select_destinations, self.ctx,
                          spec(instance_group=_group('affinity')), instances)
        self.assertEqual([{}, {}, {}], [self.held(i) for i in instances])

    def test_an_affinity_group_goes_whole_to_the_cell_that_holds_it(self):
        # cell1 weighs best but its host holds 2 of the 3: cell2 gets all.
        self.add_host('a', cell=0, vcpus=4, memory_mb=65536)
        self.add_host('b', cell=1, vcpus=6)
        _instances, selections = self._select(
            spec(instance_group=_group('affinity')), count=3)
        self.assertEqual(['b', 'b', 'b'], self._hosts_of(selections))

    # -- same_host, different_host -------------------------------------

    def test_same_host_hint_follows_the_named_instance(self):
        self.add_host('a', memory_mb=65536)
        b = self.add_host('b')
        vm = self._server_on(b)
        _instances, selections = self._select(
            spec(scheduler_hints={'same_host': [vm]},
                 project_id='project-a'))
        self.assertEqual(['b'], self._hosts_of(selections))

    def test_same_host_follows_the_named_instance_into_its_cell(self):
        self.add_host('a', cell=0, memory_mb=65536)
        b = self.add_host('b', cell=1)
        vm = self._server_on(b, cell=1)
        _instances, selections = self._select(
            spec(scheduler_hints={'same_host': [vm]},
                 project_id='project-a'))
        self.assertEqual(['b'], self._hosts_of(selections))

    def test_same_host_with_another_projects_server_is_as_unknown(self):
        self.add_host('a')
        b = self.add_host('b')
        theirs = self._server_on(b, project_id='project-b')
        unknown = uuidutils.generate_uuid()
        self.start()
        errors = [str(self.assertRaises(
            exception.NoValidHost, self._select,
            spec(scheduler_hints={'same_host': [uuid]},
                 project_id='project-a'))).replace(uuid, 'UUID')
            for uuid in (theirs, unknown)]
        self.assertEqual(errors[1], errors[0])

    def test_different_host_avoids_the_projects_own_server(self):
        self.add_host('a')
        b = self.add_host('b', memory_mb=65536)
        vm = self._server_on(b)
        for _ in range(3):
            _instances, selections = self._select(
                spec(scheduler_hints={'different_host': [vm]},
                     project_id='project-a'))
            self.assertEqual(['a'], self._hosts_of(selections))

    def test_different_host_ignores_another_projects_server(self):
        self.add_host('a', vcpus=64)
        b = self.add_host('b', vcpus=64, memory_mb=65536)
        theirs = self._server_on(b, project_id='project-b')
        _instances, selections = self._select(
            spec(scheduler_hints={'different_host': [theirs]},
                 project_id='project-a'))
        # b stays a candidate, and weighs best: as if the uuid were
        # unknown.
        self.assertEqual(['b'], self._hosts_of(selections))

    def test_hints_without_a_project_resolve_no_server(self):
        self.add_host('a')
        b = self.add_host('b')
        vm = self._server_on(b)
        self.assertRaises(exception.NoValidHost, self._select,
                          spec(scheduler_hints={'same_host': [vm]}))

    # -- target_cell ---------------------------------------------------

    def test_target_cell_by_name(self):
        self.add_host('a', cell=0, memory_mb=65536)
        self.add_host('b', cell=1)
        _instances, selections = self._select(
            spec(scheduler_hints={'target_cell': 'cell2'}))
        self.assertEqual(['b'], self._hosts_of(selections))

    def test_target_cell_by_uuid(self):
        self.add_host('a', cell=0)
        self.add_host('b', cell=1, memory_mb=65536)
        _instances, selections = self._select(
            spec(scheduler_hints={'target_cell': self.cells[0].uuid}))
        self.assertEqual(['a'], self._hosts_of(selections))

    def test_target_cell_naming_no_cell_is_no_valid_host(self):
        self.add_host('a')
        self.start()
        error = self.assertRaises(
            exception.NoValidHost, self._select,
            spec(scheduler_hints={'target_cell': 'nowhere'}))
        self.assertIn('CellFilter removed the last', str(error))


class SQLiteHintTest(_HintTests, base.SQLiteMixin,
                     placement_base.FleetTestCase):
    pass


class MySQLHintTest(_HintTests, base.MySQLMixin,
                    placement_base.FleetTestCase):
    pass


class PostgreSQLHintTest(_HintTests, base.PostgreSQLMixin,
                         placement_base.FleetTestCase):
    pass
