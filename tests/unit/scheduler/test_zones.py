"""The API level's tree of zones: figures kept current, and the descent.

A zone is judged from the combined aggregate of what is below it. The
figures must follow every change of a cell's (incrementally, as a full
rebuild would have them), and the descent must never say "no" to a
request that one cell, however deep, could take.
"""

import datetime
import random
import types

from oslo_utils import timeutils

from cellboot import exception
from cellboot.scheduler import cell_aggregates
from cellboot.scheduler import cell_filters
from cellboot.scheduler import routing
from cellboot.scheduler import zone_aggregate
from cellboot.scheduler import zones
from tests import base as test_base

SPEC = {'flavor': {'vcpus': 2, 'memory_mb': 2048, 'root_gb': 20}}


def _aggregate(vcpus=16.0, memory=32768.0, disk=400.0, up_hosts=2,
               host_zones=('nova',), computed_at=1764620000.0):
    def figures(room):
        return {'capacity': room * 2, 'free': room * 1.5, 'max_free': room}
    return {'hosts': up_hosts, 'up_hosts': up_hosts,
            'resources': {'VCPU': figures(vcpus),
                          'MEMORY_MB': figures(memory),
                          'DISK_GB': figures(disk)},
            'zones': list(host_zones), 'computed_at': computed_at}


def _zone(uuid, parent=None, name=None):
    return types.SimpleNamespace(uuid=uuid, name=name or uuid,
                                 parent_uuid=parent)


def _view(name, zone=None, **figures):
    cell = types.SimpleNamespace(uuid='cell-' + name, name=name,
                                 zone_uuid=zone)
    return cell_aggregates.CellView(cell, _aggregate(**figures),
                                    timeutils.utcnow())


def _request(spec=None, refused=None):
    request = routing.CellsRequest(dict(SPEC, **(spec or {})))
    return request, cell_filters.steps(request, refused or {})


def _three_levels(fan_out=3, vcpus=4.0):
    """Regions r0.., zones r0-z0.., cells r0-z0-c0..: every cell with
    ``vcpus`` free on its roomiest host."""
    zone_rows, views = [], {}
    for r in range(fan_out):
        zone_rows.append(_zone(f'r{r}'))
        for z in range(fan_out):
            zone_rows.append(_zone(f'r{r}-z{z}', f'r{r}'))
            for c in range(fan_out):
                view = _view(f'r{r}-z{z}-c{c}', f'r{r}-z{z}', vcpus=vcpus)
                views[view.cell.uuid] = view
    return zone_rows, views


class CombineTest(test_base.TestCase):

    def test_figures_add_up_largest_room_is_the_largest(self):
        combined = zone_aggregate.combine([
            _aggregate(vcpus=4.0, host_zones=('b',), computed_at=5.0),
            None,
            _aggregate(vcpus=8.0, host_zones=('a', 'b'), computed_at=3.0)])
        self.assertEqual(
            (4, {'capacity': 24.0, 'free': 18.0, 'max_free': 8.0},
             ['a', 'b'], 3.0),
            (combined['up_hosts'], combined['resources']['VCPU'],
             combined['zones'], combined['computed_at']))

    def test_nothing_but_none_is_none(self):
        self.assertIsNone(zone_aggregate.combine([None, None]))
        self.assertIsNone(zone_aggregate.combine([]))


class TreeShapeTest(test_base.TestCase):

    def test_without_zones_every_cell_is_at_the_top(self):
        views = {v.cell.uuid: v for v in (_view('a'), _view('b'))}
        tree = zones.ZoneTree([], views)
        self.assertEqual(set(views.values()), set(tree.top))

    def test_a_cell_naming_an_unknown_zone_is_at_the_top(self):
        view = _view('a', zone='gone')
        tree = zones.ZoneTree([_zone('z')], {view.cell.uuid: view})
        self.assertEqual([view], tree.top)

    def test_a_zone_with_no_cell_is_never_seen(self):
        view = _view('a', zone='full')
        tree = zones.ZoneTree([_zone('empty'), _zone('full')],
                              {view.cell.uuid: view})
        self.assertEqual(['full'], [node.name for node in tree.top])
        self.assertEqual([], tree.zones_named('empty'))
        self.assertTrue(tree.is_zone('empty'))

    def test_a_zone_whose_parent_is_no_zone_is_at_the_top(self):
        view = _view('a', zone='z')
        tree = zones.ZoneTree([_zone('z', 'gone')], {view.cell.uuid: view})
        self.assertEqual(['z'], [node.name for node in tree.top])

    def test_zones_of_one_name_are_all_roots_of_its_descent(self):
        views = {v.cell.uuid: v for v in (_view('a', 'z1'), _view('b', 'z2'))}
        tree = zones.ZoneTree([_zone('z1', name='eu'), _zone('z2', name='eu')],
                              views)
        self.assertEqual(set(views), set(tree.cells_below(tree.roots('eu'))))

    def test_a_loop_of_parents_hangs_at_the_top_and_ends(self):
        view = _view('a', zone='x')
        tree = zones.ZoneTree([_zone('x', 'y'), _zone('y', 'x')],
                              {view.cell.uuid: view})
        best, _pruned = tree.descend(tree.top, _request()[1])
        self.assertIs(view, best)

    def test_a_cell_taken_before_a_refresh_joins_the_tree(self):
        tree = zones.ZoneTree([_zone('z')], {})
        view = _view('late', zone='z')
        tree.changed(view)
        self.assertEqual({'cell-late'}, tree.top[0].cell_uuids)
        self.assertEqual(view.max_free, tree.top[0].max_free)


class IncrementalTest(test_base.TestCase):

    def test_after_random_changes_figures_equal_a_rebuild(self):
        rows, views = _three_levels()
        tree = zones.ZoneTree(rows, views)
        rng = random.Random(7)
        cells = sorted(views)
        for _ in range(200):
            view = views[rng.choice(cells)]
            what = rng.random()
            if what < 0.2:
                view.silent = 'no answer'
            elif what < 0.3:
                view.aggregate = None
            else:
                view.silent = None
                view.aggregate = _aggregate(
                    vcpus=float(rng.randint(0, 64)),
                    memory=float(rng.randint(0, 65536)),
                    up_hosts=rng.randint(0, 3),
                    host_zones=rng.sample(['a', 'b', 'c'], 2),
                    computed_at=float(rng.randint(1, 100)))
            tree.changed(view)
        rebuilt = zones.ZoneTree(rows, views)
        for row in rows:
            kept = tree.zones_named(row.name)[0]
            fresh = rebuilt.zones_named(row.name)[0]
            self.assertEqual((fresh.aggregate, fresh.max_free),
                             (kept.aggregate, kept.max_free), row.name)

    def test_a_change_recombines_only_the_cells_ancestors(self):
        rows, views = _three_levels()
        tree = zones.ZoneTree(rows, views)
        other = tree.zones_named('r1')[0]
        before = other.aggregate
        view = views['cell-r0-z0-c0']
        view.aggregate = _aggregate(vcpus=60.0)
        tree.changed(view)
        self.assertIs(before, other.aggregate)
        self.assertEqual(60.0, tree.zones_named('r0')[0].max_free['VCPU'])


class DescentTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        # One weigher: the roomiest cell by VCPU is the best.
        self.flags(enabled_weighers=['CPUWeigher'], group='filter_scheduler')

    def test_the_best_zone_then_its_best_cell(self):
        rows, views = _three_levels()
        views['cell-r2-z1-c2'].aggregate = _aggregate(vcpus=32.0)
        views['cell-r0-z0-c0'].aggregate = _aggregate(vcpus=16.0)
        tree = zones.ZoneTree(rows, views)
        best, _pruned = tree.descend(tree.top, _request()[1])
        self.assertEqual('r2-z1-c2', best.cell.name)

    def test_a_request_that_fits_one_deep_cell_is_placed_there(self):
        rows, views = _three_levels(fan_out=4, vcpus=1.0)
        views['cell-r3-z2-c1'].aggregate = _aggregate(vcpus=2.0)
        tree = zones.ZoneTree(rows, views)
        best, pruned = tree.descend(tree.top, _request()[1])
        self.assertEqual('r3-z2-c1', best.cell.name)
        self.assertIn(('r0', 'ResourceFilter'), pruned)

    def test_a_zone_that_passes_summed_but_no_cell_does_is_left(self):
        # Zone a: one cell with CPUs, another with memory, none both.
        views = {v.cell.uuid: v for v in (
            _view('a1', 'a', vcpus=64.0, memory=1.0),
            _view('a2', 'a', vcpus=1.0, memory=65536.0),
            _view('b1', 'b', vcpus=4.0, memory=4096.0))}
        tree = zones.ZoneTree([_zone('a'), _zone('b')], views)
        best, pruned = tree.descend(tree.top, _request()[1])
        self.assertEqual('b1', best.cell.name)
        self.assertEqual([('a', 'no cell below it passes')], pruned)

    def test_a_full_zone_is_skipped(self):
        views = {v.cell.uuid: v for v in (
            _view('a1', 'a', vcpus=1.0), _view('a2', 'a', vcpus=0.0),
            _view('b1', 'b', vcpus=2.0))}
        tree = zones.ZoneTree([_zone('a'), _zone('b')], views)
        best, pruned = tree.descend(tree.top, _request()[1])
        self.assertEqual(('b1', [('a', 'ResourceFilter')]),
                         (best.cell.name, pruned))

    def test_a_zone_of_silent_cells_loses_to_a_usable_sibling(self):
        views = {v.cell.uuid: v for v in (
            _view('a1', 'a', vcpus=64.0), _view('b1', 'b', vcpus=4.0))}
        views['cell-a1'].silent = 'no answer'
        tree = zones.ZoneTree([_zone('a'), _zone('b')], views)
        best, pruned = tree.descend(tree.top, _request()[1])
        self.assertEqual(('b1', [('a', 'usable')]), (best.cell.name, pruned))

    def test_a_zone_of_stale_cells_loses_to_a_usable_sibling(self):
        views = {v.cell.uuid: v for v in (
            _view('a1', 'a', vcpus=64.0), _view('b1', 'b', vcpus=4.0))}
        views['cell-a1'].published_at = timeutils.utcnow() - \
            datetime.timedelta(days=1)
        tree = zones.ZoneTree([_zone('a'), _zone('b')], views)
        best, _pruned = tree.descend(tree.top, _request()[1])
        self.assertEqual('b1', best.cell.name)

    def test_cells_that_refused_leave_their_zone_to_the_next(self):
        views = {v.cell.uuid: v for v in (
            _view('a1', 'a', vcpus=64.0), _view('b1', 'b', vcpus=4.0))}
        tree = zones.ZoneTree([_zone('a'), _zone('b')], views)
        _request_, steps = _request(refused={'cell-a1': ('a1', 'full')})
        best, pruned = tree.descend(tree.top, steps)
        self.assertEqual(('b1', [('a', 'cells tried')]),
                         (best.cell.name, pruned))

    def test_a_target_cell_is_found_below_its_zones(self):
        rows, views = _three_levels()
        request, _steps = _request()
        request.target_cell = 'cell-r1-z2-c0'
        tree = zones.ZoneTree(rows, views)
        best, _pruned = tree.descend(tree.top, cell_filters.steps(request,
                                                                  {}))
        self.assertEqual('r1-z2-c0', best.cell.name)

    def test_a_named_zone_confines_the_descent(self):
        rows, views = _three_levels()
        views['cell-r0-z0-c0'].aggregate = _aggregate(vcpus=32.0)
        tree = zones.ZoneTree(rows, views)
        best, _pruned = tree.descend(tree.zones_named('r1-z1'),
                                     _request()[1])
        self.assertTrue(best.cell.name.startswith('r1-z1-'))

    def test_without_zones_the_choice_is_the_flat_passs(self):
        views = {v.cell.uuid: v for v in (
            _view(str(i), vcpus=float(i + 2)) for i in range(20))}
        request, steps = _request()
        tree = zones.ZoneTree([], views)
        best, pruned = tree.descend(tree.top, steps)
        ranked, _elimination = cell_filters.candidates(views, request, {},
                                                       1)
        self.assertEqual((ranked[0], []), (best, pruned))


class ZoneHintTest(test_base.TestCase):

    def test_a_hint_that_is_no_zone_name_is_invalid(self):
        for hint in ({'a': 1}, 5, ['a', 'b'], 'x' * 256):
            error = self.assertRaises(
                exception.Invalid, routing.CellsRequest,
                dict(SPEC, scheduler_hints={'zone': hint}))
            self.assertIn('scheduler hint zone takes', str(error))

    def test_the_hint_names_the_tree_zone_the_az_stays_a_host_zone(self):
        request = routing.CellsRequest(dict(
            SPEC, availability_zone='nova', scheduler_hints={'zone': 'eu'}))
        request.name_zones(lambda name: True)
        spec = request.spec_for('cell-x')
        self.assertEqual(('eu', 'nova', 'nova', {}),
                         (request.tree_zone, request.host_zone,
                          spec['availability_zone'], spec['scheduler_hints']))

    def test_an_az_that_is_a_tree_zone_confines_and_is_not_sent(self):
        request = routing.CellsRequest(dict(SPEC, availability_zone='eu'))
        request.name_zones({'eu'}.__contains__)
        self.assertEqual(('eu', None, None),
                         (request.tree_zone, request.host_zone,
                          request.spec_for('cell-x')['availability_zone']))

    def test_an_az_that_is_no_tree_zone_is_a_host_zone_as_before(self):
        request = routing.CellsRequest(dict(SPEC, availability_zone='nova'))
        request.name_zones({'eu'}.__contains__)
        self.assertEqual((None, 'nova', 'nova'),
                         (request.tree_zone, request.host_zone,
                          request.spec_for('cell-x')['availability_zone']))

    def test_the_reason_names_pruned_zones_and_counts_the_rest(self):
        pruned = [(f'z{i}', 'ResourceFilter') for i in range(12)]
        reason = zones.pruned_reason(pruned)
        self.assertIn('z9 (ResourceFilter) and 2 more.', reason)
        self.assertEqual('', zones.pruned_reason([]))
