"""The pages of every listed object, on every backend.

Walking the pages of a list (each marker the last item of the page
before) gives every item once, in the list's order; an unknown marker,
or another project's, raises MarkerNotFound.
"""

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import flavor as flavor_obj
from cellboot.objects import instance_mapping
from cellboot.objects import server_group
from tests import base
from tests.functional.objects import spec_base

InstanceMapping = instance_mapping.InstanceMapping


def walk(get_page, ident, limit):
    """Every item, page after page of ``limit``; and the page sizes."""
    items, sizes, marker = [], [], None
    while True:
        page = get_page(limit, marker)
        sizes.append(len(page))
        items += page
        if len(page) < limit:
            return items, sizes
        marker = ident(page[-1])


class _PageTests(spec_base.ObjectTests):

    def map(self, project_id='p1'):
        return InstanceMapping.create(self.ctx, uuidutils.generate_uuid(),
                                      project_id)

    def mapping_page(self, project_id='p1'):
        return lambda limit, marker: InstanceMapping.get_page(
            self.ctx, project_id, limit, marker)

    def test_mapping_pages_hold_the_live_mappings_in_id_order(self):
        mine = [self.map() for _ in range(5)]
        self.map(project_id='p2')
        mine[2].set_queued_for_delete(self.ctx)
        items, sizes = walk(self.mapping_page(),
                            lambda m: m.instance_uuid, 2)
        self.assertEqual([m.instance_uuid for m in mine[:2] + mine[3:]],
                         [m.instance_uuid for m in items])
        self.assertEqual([2, 2, 0], sizes)

    def test_a_marker_deleted_since_its_page_still_leads_on(self):
        self.map()
        second, third = self.map(), self.map()
        second.set_queued_for_delete(self.ctx)
        self.assertEqual([third.instance_uuid], [
            m.instance_uuid for m in InstanceMapping.get_page(
                self.ctx, 'p1', 5, second.instance_uuid)])

    def test_another_projects_mapping_is_no_marker(self):
        self.map()
        theirs = self.map(project_id='p2')
        for marker in (theirs.instance_uuid, uuidutils.generate_uuid()):
            self.assertRaises(exception.MarkerNotFound,
                              InstanceMapping.get_page, self.ctx, 'p1', 5,
                              marker)

    def test_flavor_pages_follow_the_names(self):
        for name in ('m1.c', 'm1.a', 'm1.d', 'm1.b'):
            flavor_obj.Flavor.create(self.ctx, name, 1, 64, flavorid=name[3])
        items, _sizes = walk(
            lambda limit, marker: flavor_obj.Flavor.get_page(
                self.ctx, limit, marker), lambda f: f.flavorid, 3)
        self.assertEqual(['m1.a', 'm1.b', 'm1.c', 'm1.d'],
                         [f.name for f in items])
        self.assertRaises(exception.MarkerNotFound,
                          flavor_obj.Flavor.get_page, self.ctx, 2, 'zz')

    def test_server_group_pages_hold_only_the_projects_groups(self):
        mine = [server_group.ServerGroup.create(self.ctx, f'g{i}', 'p1',
                                                'affinity')
                for i in range(3)]
        theirs = server_group.ServerGroup.create(self.ctx, 'x', 'p2',
                                                 'affinity')
        items, _sizes = walk(
            lambda limit, marker: server_group.ServerGroup.get_page(
                self.ctx, 'p1', limit, marker), lambda g: g.uuid, 2)
        self.assertEqual([g.uuid for g in mine], [g.uuid for g in items])
        self.assertRaises(exception.MarkerNotFound,
                          server_group.ServerGroup.get_page, self.ctx, 'p1',
                          2, theirs.uuid)

    def test_cell_pages_put_cell0_first_then_names(self):
        for name in ('cell2', 'cell10', 'cell1'):
            self.make_cell(name)
        self.make_cell('cell0', uuid=cell_mapping.CELL0_UUID)
        items, _sizes = walk(
            lambda limit, marker: cell_mapping.CellMapping.get_page(
                self.ctx, limit, marker), lambda c: c.uuid, 1)
        self.assertEqual(['cell0', 'cell1', 'cell10', 'cell2'],
                         [c.name for c in items])
        self.assertRaises(exception.MarkerNotFound,
                          cell_mapping.CellMapping.get_page, self.ctx, 1,
                          uuidutils.generate_uuid())


class SQLitePageTest(_PageTests, base.SQLiteMixin, spec_base.ObjectTestCase):
    pass


class MySQLPageTest(_PageTests, base.MySQLMixin, spec_base.ObjectTestCase):
    pass


class PostgreSQLPageTest(_PageTests, base.PostgreSQLMixin,
                         spec_base.ObjectTestCase):
    pass
