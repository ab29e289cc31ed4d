"""Instance against a real cell database, on every backend."""

import datetime

from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot import context
from cellboot.db import ordering
from cellboot import exception
from cellboot.objects import instance
from cellboot.objects import instance_table
from tests import base
from tests.functional.objects import spec_base

Instance = instance.Instance
vm_states = instance.vm_states

FLAVOR = {'name': 'm1.small', 'vcpus': 1, 'memory_mb': 512, 'root_gb': 1,
          'extra_specs': {'hw:cpu_policy': 'dedicated'}}


class _InstanceTests(spec_base.ObjectTests):

    def _create(self, project_id='p1', vm_state=vm_states.BUILDING,
                **fields):
        return Instance.create(self.ctx, uuidutils.generate_uuid(),
                               project_id, vm_state, user_id='u1', **fields)

    def test_create_returns_the_stored_instance(self):
        inst = self._create(display_name='web-1', host='host1',
                            node='node1', image_ref='cirros',
                            availability_zone='nova', reservation_id='r-1')
        stored = Instance.get_by_uuid(self.ctx, inst.uuid)
        self.assertEqual(inst.to_dict(), stored.to_dict())
        self.assertEqual(
            ('p1', 'u1', 'web-1', vm_states.BUILDING, 'host1', 'node1',
             'cirros', 'nova', 'r-1', False, None),
            (stored.project_id, stored.user_id, stored.display_name,
             stored.vm_state, stored.host, stored.node, stored.image_ref,
             stored.availability_zone, stored.reservation_id,
             stored.deleted, stored.deleted_at))
        self.assertRecent(stored.created_at)

    def test_flavor_and_metadata_round_trip_through_json(self):
        inst = self._create(flavor=FLAVOR, metadata={'role': 'db', 'n': '1'})
        stored = Instance.get_by_uuid(self.ctx, inst.uuid)
        self.assertEqual((FLAVOR, {'role': 'db', 'n': '1'}),
                         (stored.flavor, stored.metadata))

    def test_metadata_defaults_to_an_empty_dict(self):
        self.assertEqual({}, Instance.get_by_uuid(
            self.ctx, self._create().uuid).metadata)

    def test_create_with_a_taken_uuid_raises_exists(self):
        inst = self._create()
        exc = self.assertRaises(exception.InstanceExists, Instance.create,
                                self.ctx, inst.uuid, 'p2', vm_states.ERROR)
        self.assertIn(inst.uuid, str(exc))

    def test_create_with_an_unknown_field_raises_invalid(self):
        self.assertRaises(exception.Invalid, self._create, colour='blue')

    def test_get_by_uuid_of_unknown_raises_not_found(self):
        self.assertRaises(exception.InstanceNotFound, Instance.get_by_uuid,
                          self.ctx, uuidutils.generate_uuid())

    def test_get_by_uuid_of_deleted_raises_not_found(self):
        inst = self._create()
        inst.destroy(self.ctx)
        self.assertRaises(exception.InstanceNotFound, Instance.get_by_uuid,
                          self.ctx, inst.uuid)

    def test_get_by_uuid_with_read_deleted_returns_deleted(self):
        inst = self._create()
        inst.destroy(self.ctx)
        self.assertTrue(Instance.get_by_uuid(self.ctx, inst.uuid,
                                             read_deleted=True).deleted)

    def test_get_all_by_project_lists_its_live_instances(self):
        first, second = self._create(), self._create()
        self._create().destroy(self.ctx)
        self._create(project_id='p2')
        self.assertEqual(
            [first.uuid, second.uuid],
            [i.uuid for i in Instance.get_all_by_project(self.ctx, 'p1')])

    def test_count_leaves_out_deleted_unless_asked(self):
        self._create()
        self._create().destroy(self.ctx)
        self.assertEqual(
            [1, 2], [Instance.count(self.ctx),
                     Instance.count(self.ctx, include_deleted=True)])

    def test_update_writes_the_values(self):
        inst = self._create()
        launched = datetime.datetime(2024, 5, 1, 12, 30, 0)
        inst.update(self.ctx, vm_state=vm_states.ACTIVE, host='host1',
                    launched_at=launched, metadata={'k': 'v'})
        stored = Instance.get_by_uuid(self.ctx, inst.uuid)
        self.assertEqual((vm_states.ACTIVE, 'host1', launched, {'k': 'v'}),
                         (stored.vm_state, stored.host, stored.launched_at,
                          stored.metadata))
        self.assertEqual(stored.to_dict(), inst.to_dict())

    def test_update_from_the_expected_vm_state_writes(self):
        inst = self._create()
        inst.update(self.ctx, expected_vm_state=vm_states.BUILDING,
                    vm_state=vm_states.ACTIVE)
        self.assertEqual(vm_states.ACTIVE, Instance.get_by_uuid(
            self.ctx, inst.uuid).vm_state)

    def test_update_from_another_vm_state_raises_and_writes_nothing(self):
        inst = self._create(vm_state=vm_states.ERROR)
        exc = self.assertRaises(
            exception.UnexpectedVMState, inst.update, self.ctx,
            expected_vm_state=vm_states.BUILDING, vm_state=vm_states.ACTIVE,
            host='host1')
        self.assertIn(vm_states.ERROR, str(exc))
        stored = Instance.get_by_uuid(self.ctx, inst.uuid)
        self.assertEqual((vm_states.ERROR, None),
                         (stored.vm_state, stored.host))

    def test_update_accepts_a_list_of_expected_vm_states(self):
        inst = self._create(vm_state=vm_states.ERROR)
        inst.update(self.ctx,
                    expected_vm_state=[vm_states.BUILDING, vm_states.ERROR],
                    task_state='deleting')
        self.assertEqual('deleting', inst.task_state)

    def test_only_the_first_of_two_racing_updates_wins(self):
        # Two actors (a compute host finishing the build, a reschedule
        # giving up) both saw BUILDING; only one may move the instance on.
        compute = Instance.get_by_uuid(self.ctx, self._create().uuid)
        conductor = Instance.get_by_uuid(self.ctx, compute.uuid)
        compute.update(self.ctx, expected_vm_state=vm_states.BUILDING,
                       vm_state=vm_states.ACTIVE)
        self.assertRaises(exception.UnexpectedVMState, conductor.update,
                          self.ctx, expected_vm_state=vm_states.BUILDING,
                          vm_state=vm_states.ERROR)
        self.assertEqual(vm_states.ACTIVE, Instance.get_by_uuid(
            self.ctx, compute.uuid).vm_state)

    def test_update_of_a_deleted_instance_raises_not_found(self):
        inst = self._create()
        inst.destroy(self.ctx)
        self.assertRaises(exception.InstanceNotFound, inst.update, self.ctx,
                          expected_vm_state=vm_states.BUILDING,
                          vm_state=vm_states.ACTIVE)

    def test_update_of_an_unknown_field_raises_invalid(self):
        inst = self._create()
        self.assertRaises(exception.Invalid, inst.update, self.ctx,
                          uuid=uuidutils.generate_uuid())

    def test_destroy_soft_deletes(self):
        inst = self._create(task_state='spawning')
        inst.destroy(self.ctx)
        stored = Instance.get_by_uuid(self.ctx, inst.uuid, read_deleted=True)
        self.assertEqual((True, vm_states.DELETED, None),
                         (stored.deleted, stored.vm_state,
                          stored.task_state))
        self.assertRecent(stored.deleted_at)
        self.assertEqual(stored.to_dict(), inst.to_dict())

    def test_destroy_twice_raises_not_found(self):
        inst = self._create()
        inst.destroy(self.ctx)
        self.assertRaises(exception.InstanceNotFound, inst.destroy, self.ctx)

    def test_targeted_cell_holds_its_own_instances_only(self):
        remote = self.make_remote_cell('cell2')
        local = self._create()
        with context.target_cell(self.ctx, remote) as cctxt:
            there = Instance.create(cctxt, uuidutils.generate_uuid(), 'p1',
                                    vm_states.BUILDING)
            self.assertEqual(
                [there.uuid],
                [i.uuid for i in Instance.get_all_by_project(cctxt, 'p1')])
            self.assertRaises(exception.InstanceNotFound,
                              Instance.get_by_uuid, cctxt, local.uuid)
        self.assertEqual(
            [local.uuid],
            [i.uuid for i in Instance.get_all_by_project(self.ctx, 'p1')])

    def test_a_sorted_page_orders_text_by_code_point_on_every_backend(self):
        # What the server lists merge across cells in Python: case,
        # hyphens and accents sorted as Python compares them, never by
        # the database's locale or collation; ties broken by uuid.
        names = ['web', 'Web', 'a-b', 'ab', '\u00e9t\u00e9', None, 'web']
        made = [self._create(display_name=name) for name in names]
        expected = sorted((inst.display_name or '', inst.uuid)
                          for inst in made)
        name = ordering.binary(sa.func.coalesce(
            instance_table.INSTANCES.c.display_name, ''))
        for descending in (False, True):
            order = expected[::-1] if descending else expected
            pages, after = [], None
            while True:
                page = Instance.get_sorted_page(self.ctx, sa.true(), name,
                                                descending, after, 3)
                pages += [(i.display_name or '', i.uuid) for i in page]
                if len(page) < 3:
                    break
                after = pages[-1]
            self.assertEqual(order, pages)


class SQLiteInstanceTest(_InstanceTests, base.SQLiteMixin,
                         spec_base.ObjectTestCase):
    CELL_DATABASES = 2


class MySQLInstanceTest(_InstanceTests, base.MySQLMixin,
                        spec_base.ObjectTestCase):
    CELL_DATABASES = 2


class PostgreSQLInstanceTest(_InstanceTests, base.PostgreSQLMixin,
                             spec_base.ObjectTestCase):
    CELL_DATABASES = 2
