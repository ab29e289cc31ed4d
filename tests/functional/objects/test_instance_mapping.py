"""InstanceMapping against a real API database, on every backend."""

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.objects import instance_mapping
from tests import base
from tests.functional.objects import spec_base

InstanceMapping = instance_mapping.InstanceMapping


class _InstanceMappingTests(spec_base.ObjectTests):

    def setUp(self):
        super().setUp()
        self.cell1 = self.make_cell('cell1')
        self.cell2 = self.make_cell('cell2')

    def _create(self, project_id='p1', **kwargs):
        return InstanceMapping.create(self.ctx, uuidutils.generate_uuid(),
                                      project_id, **kwargs)

    def test_create_without_a_cell_leaves_the_cell_empty(self):
        mapping = InstanceMapping.create(self.ctx, 'a' * 36, 'p1', 'u1')
        self.assertEqual(('a' * 36, 'p1', 'u1', None, False),
                         (mapping.instance_uuid, mapping.project_id,
                          mapping.user_id, mapping.cell_mapping,
                          mapping.queued_for_delete))
        self.assertRecent(mapping.created_at)

    def test_create_in_a_cell_carries_the_cell(self):
        mapping = self._create(cell_uuid=self.cell1.uuid)
        self.assertEqual(self.cell1.to_dict(), mapping.cell_mapping.to_dict())

    def test_create_in_an_unknown_cell_raises_cell_not_found(self):
        self.assertRaises(exception.CellMappingNotFound, self._create,
                          cell_uuid=uuidutils.generate_uuid())

    def test_create_many_maps_each_in_no_cell_and_set_cell_of_many(self):
        uuids = [uuidutils.generate_uuid() for _ in range(3)]
        InstanceMapping.create_many(self.ctx, uuids, 'p1', user_id='u1',
                                    vcpus=2, memory_mb=512)
        found = [InstanceMapping.get_by_instance_uuid(self.ctx, uuid)
                 for uuid in uuids]
        self.assertEqual([('p1', 'u1', None, False, 2, 512)] * 3, [
            (m.project_id, m.user_id, m.cell_mapping, m.queued_for_delete,
             m.vcpus, m.memory_mb) for m in found])
        # Mapped ones count, pointed at the cell already or not; an
        # instance without a mapping does not.
        self.assertEqual(2, InstanceMapping.set_cell_of_many(
            self.ctx, uuids[:2] + [uuidutils.generate_uuid()], self.cell1))
        self.assertEqual(2, InstanceMapping.set_cell_of_many(
            self.ctx, uuids[:2], self.cell1))
        self.assertEqual(
            [self.cell1.uuid, self.cell1.uuid, None],
            [getattr(InstanceMapping.get_by_instance_uuid(
                self.ctx, uuid).cell_mapping, 'uuid', None)
             for uuid in uuids])

    def test_create_many_with_a_taken_uuid_writes_none_of_them(self):
        taken, new = self._create(), uuidutils.generate_uuid()
        self.assertRaises(exception.InstanceMappingExists,
                          InstanceMapping.create_many, self.ctx,
                          [new, taken.instance_uuid], 'p1')
        self.assertRaises(exception.InstanceMappingNotFound,
                          InstanceMapping.get_by_instance_uuid, self.ctx, new)

    def test_create_of_a_mapped_instance_raises_exists(self):
        mapping = self._create()
        exc = self.assertRaises(exception.InstanceMappingExists,
                                InstanceMapping.create, self.ctx,
                                mapping.instance_uuid, 'p2')
        self.assertIn(mapping.instance_uuid, str(exc))

    def test_get_by_instance_uuid_returns_the_mapping(self):
        mapping = self._create(cell_uuid=self.cell2.uuid)
        self.assertEqual(mapping.to_dict(),
                         InstanceMapping.get_by_instance_uuid(
                             self.ctx, mapping.instance_uuid).to_dict())

    def test_get_by_instance_uuid_of_unknown_raises_not_found(self):
        self.assertRaises(exception.InstanceMappingNotFound,
                          InstanceMapping.get_by_instance_uuid, self.ctx,
                          uuidutils.generate_uuid())

    def test_get_by_project_lists_its_mappings_oldest_first(self):
        first, second = self._create(), self._create()
        self._create(project_id='p2')
        self.assertEqual(
            [first.instance_uuid, second.instance_uuid],
            [m.instance_uuid
             for m in InstanceMapping.get_by_project(self.ctx, 'p1')])

    def test_set_cell_of_points_the_mapping_at_the_cell(self):
        mapping = self._create()
        self.assertTrue(InstanceMapping.set_cell_of(
            self.ctx, mapping.instance_uuid, self.cell2))
        self.assertEqual(self.cell2.uuid, InstanceMapping.get_by_instance_uuid(
            self.ctx, mapping.instance_uuid).cell_mapping.uuid)

    def test_set_cell_of_an_unmapped_instance_is_false(self):
        self.assertFalse(InstanceMapping.set_cell_of(
            self.ctx, uuidutils.generate_uuid(), self.cell1))

    def test_set_cell_points_the_mapping_at_the_cell(self):
        mapping = self._create()
        mapping.set_cell(self.ctx, self.cell2.uuid)
        self.assertEqual(self.cell2.uuid, mapping.cell_mapping.uuid)
        self.assertEqual(self.cell2.uuid, InstanceMapping.get_by_instance_uuid(
            self.ctx, mapping.instance_uuid).cell_mapping.uuid)

    def test_set_cell_to_an_unknown_cell_raises_and_keeps_it(self):
        mapping = self._create(cell_uuid=self.cell1.uuid)
        self.assertRaises(exception.CellMappingNotFound, mapping.set_cell,
                          self.ctx, uuidutils.generate_uuid())
        self.assertEqual(self.cell1.uuid, InstanceMapping.get_by_instance_uuid(
            self.ctx, mapping.instance_uuid).cell_mapping.uuid)

    def test_set_cell_of_a_deleted_mapping_raises_not_found(self):
        mapping = self._create()
        mapping.destroy(self.ctx)
        self.assertRaises(exception.InstanceMappingNotFound,
                          mapping.set_cell, self.ctx, self.cell1.uuid)

    def test_set_queued_for_delete_is_stored(self):
        mapping = self._create()
        mapping.set_queued_for_delete(self.ctx)
        self.assertTrue(InstanceMapping.get_by_instance_uuid(
            self.ctx, mapping.instance_uuid).queued_for_delete)

    def test_set_queued_for_delete_false_clears_it(self):
        mapping = self._create()
        mapping.set_queued_for_delete(self.ctx)
        mapping.set_queued_for_delete(self.ctx, False)
        self.assertFalse(mapping.queued_for_delete)

    def test_count_by_cell_counts_only_that_cells_instances(self):
        self._create(cell_uuid=self.cell1.uuid)
        self._create(cell_uuid=self.cell1.uuid)
        self._create(cell_uuid=self.cell2.uuid)
        self._create()
        self.assertEqual(
            [2, 1], [InstanceMapping.count_by_cell(self.ctx, cell.uuid)
                     for cell in (self.cell1, self.cell2)])

    def test_destroy_by_cell_deletes_that_cells_mappings_only(self):
        self._create(cell_uuid=self.cell1.uuid)
        kept = self._create(cell_uuid=self.cell2.uuid)
        self.assertEqual(1, InstanceMapping.destroy_by_cell(self.ctx,
                                                            self.cell1.uuid))
        self.assertEqual(
            [kept.instance_uuid],
            [m.instance_uuid
             for m in InstanceMapping.get_by_project(self.ctx, 'p1')])

    def test_destroy_twice_raises_not_found(self):
        mapping = self._create()
        mapping.destroy(self.ctx)
        self.assertRaises(exception.InstanceMappingNotFound, mapping.destroy,
                          self.ctx)


class SQLiteInstanceMappingTest(_InstanceMappingTests, base.SQLiteMixin,
                                spec_base.ObjectTestCase):
    pass


class MySQLInstanceMappingTest(_InstanceMappingTests, base.MySQLMixin,
                               spec_base.ObjectTestCase):
    pass


class PostgreSQLInstanceMappingTest(_InstanceMappingTests,
                                    base.PostgreSQLMixin,
                                    spec_base.ObjectTestCase):
    pass
