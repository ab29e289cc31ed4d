"""The API level's ``cell_restriction``: the cells an allocation request
(``scheduler.allocations``) may or may not go to, judged per cell and per
zone like the other cell filters, and never sent on to a cell."""

from cellboot import exception
from cellboot.scheduler import cell_filters
from cellboot.scheduler import routing
from tests import base as test_base
from tests.unit.scheduler import test_zones

SPEC = test_zones.SPEC


def _kept(spec, views):
    request = routing.CellsRequest(dict(SPEC, **spec))
    ranked, _elimination = cell_filters.candidates(views, request, {}, 1)
    return sorted(view.cell.name for view in ranked)


class CellRestrictionTest(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.views = {f'cell-{name}': test_zones._view(name)
                      for name in ('a', 'b', 'c')}

    def test_keep_and_avoid(self):
        self.assertEqual(['a', 'b', 'c'], _kept({}, self.views))
        self.assertEqual(['b'], _kept({'cell_restriction': {
            'keep': ['cell-a', 'cell-b'], 'avoid': ['cell-a']}}, self.views))
        self.assertEqual(['a', 'c'], _kept({'cell_restriction': {
            'keep': None, 'avoid': ['cell-b']}}, self.views))
        self.assertEqual([], _kept({'cell_restriction': {'keep': []}},
                                   self.views))

    def test_a_zone_is_kept_when_a_cell_below_it_passes(self):
        request = routing.CellsRequest(dict(
            SPEC, cell_restriction={'keep': ['cell-b']}))
        steps = dict((name, keep) for name, keep, _detail
                     in cell_filters.steps(request, {}))
        zone = type('Zone', (), {'cell_uuids': ('cell-a', 'cell-b')})()
        other = type('Zone', (), {'cell_uuids': ('cell-c',)})()
        self.assertEqual((True, False), (steps['CellRestriction'](zone),
                                         steps['CellRestriction'](other)))

    def test_not_sent_to_a_cell(self):
        request = routing.CellsRequest(dict(
            SPEC, one_provider=True, cell_restriction={'avoid': ['x']}))
        self.assertNotIn('cell_restriction', request.spec_for('cell-a'))
        self.assertTrue(request.one_provider)

    def test_malformed_is_invalid(self):
        for restriction in ('cell-a', ['cell-a'], {'keep': 'cell-a'},
                            {'avoid': 7}):
            self.assertRaises(exception.Invalid, routing.CellsRequest,
                              dict(SPEC, cell_restriction=restriction))
