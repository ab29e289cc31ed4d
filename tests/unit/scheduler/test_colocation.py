"""``near``/``far``: the hints parsed, and the cell steps they make."""

import types

from cellboot import exception
from cellboot.scheduler import cell_filters
from cellboot.scheduler import colocation
from cellboot.scheduler import request as request_mod
from cellboot.scheduler import routing
from tests import base as test_base

_FLAVOR = {'vcpus': 1, 'memory_mb': 512, 'root_gb': 10}
A = '11111111-1111-1111-1111-111111111111'


def _spec(**hints):
    return {'flavor': dict(_FLAVOR), 'scheduler_hints': hints,
            'project_id': 'p'}


def _node(*cells):
    return types.SimpleNamespace(cell_uuids=frozenset(cells))


class HintsTest(test_base.TestCase):

    def test_one_uuid_or_a_list(self):
        request = request_mod.ScheduleRequest(_spec(near=A, far=[A, A]))
        self.assertEqual(([A], [A, A]), (request.near, request.far))

    def test_hostile_values_are_invalid(self):
        for bad in (7, [7], [{'a': 1}], ['x' * 256], [A] * 65):
            for name in ('near', 'far'):
                self.assertRaises(exception.Invalid,
                                  request_mod.ScheduleRequest,
                                  _spec(**{name: bad}))

    def test_preferred_providers_keep_strings_only(self):
        spec = dict(_spec(), preferred_providers=[A, 7, None])
        self.assertEqual(frozenset([A]), request_mod.ScheduleRequest(
            spec).preferred_providers)


class StepsTest(test_base.TestCase):

    def _kept(self, found, nodes, **hints):
        request = routing.CellsRequest(_spec(**hints))
        request.colocation = found
        steps = [step for step in cell_filters.steps(request, {}, False)
                 if step[0] in ('NearFilter', 'FarFilter')]
        return steps, cell_filters.sift(nodes, steps,
                                        lambda *args: None)

    def test_nothing_asked_adds_no_step(self):
        steps, _kept = self._kept(colocation.NOTHING, [])
        self.assertEqual([], steps)

    def test_near_keeps_the_cells_and_the_zones_above_them(self):
        cell1, cell2, zone = _node('c1'), _node('c2'), _node('c1', 'c2')
        _steps, kept = self._kept(
            colocation.Constraints(cells_in=frozenset({'c2'})),
            [cell1, cell2, zone], near=A)
        self.assertEqual([cell2, zone], kept)

    def test_near_nothing_found_keeps_nothing(self):
        _steps, kept = self._kept(
            colocation.Constraints(cells_in=frozenset()), [_node('c1')],
            near=A)
        self.assertEqual([], kept)

    def test_far_drops_a_zone_only_when_every_cell_below_is_far(self):
        cell1, zone = _node('c1'), _node('c1', 'c2')
        _steps, kept = self._kept(
            colocation.Constraints(cells_out=frozenset({'c1'})),
            [cell1, zone], far=A)
        self.assertEqual([zone], kept)

    def test_the_cell_spec_carries_no_hint_but_the_hosts(self):
        request = routing.CellsRequest(_spec(near=A, far=A))
        request.colocation = colocation.Constraints(
            cells_in=frozenset({'c1'}), hosts_in=frozenset({'h1'}))
        spec = request.spec_for('c1')
        self.assertEqual(({}, ['h1']), (spec['scheduler_hints'],
                                        spec['preferred_providers']))


class ConstraintsTest(test_base.TestCase):

    def test_without_a_project_near_is_nowhere(self):
        found = colocation.constraints(None, None, near=[A], far=[A])
        self.assertEqual((False, False, True),
                         (found.allows_cell('c1'), found.allows_pool(A),
                          found.cells_out == frozenset()))

    def test_nothing_asked_allows_anything(self):
        found = colocation.constraints(None, 'p')
        self.assertTrue(found.allows_cell('c1') and found.allows_pool(A))
