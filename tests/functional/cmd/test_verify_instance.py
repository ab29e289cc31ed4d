"""``cell_v2 verify_instance``: exit codes as nova-manage's."""

from cellboot import context as cb_context
from cellboot.objects import build_request
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_mapping
from tests import base as test_base
from tests.functional.cmd import base

UUID = '5b0e3a0c-8f2d-4a57-9d2e-7c1f3b9e6a21'
PROJECT = 'project-a'


class _VerifyInstanceTests:

    def setUp(self):
        super().setUp()
        self.cell = self.map_cell1()

    def map_instance(self, cell_uuid=None):
        return instance_mapping.InstanceMapping.create(
            self.context, UUID, PROJECT, cell_uuid=cell_uuid)

    def create_instance(self):
        with cb_context.target_cell(self.context, self.cell) as cctxt:
            return instance_obj.Instance.create(
                cctxt, UUID, PROJECT, instance_obj.vm_states.ACTIVE)

    def verify(self, *extra):
        return self.manage('cell_v2', 'verify_instance', '--uuid', UUID,
                           *extra)

    def test_an_instance_in_its_cell_exits_0_naming_the_cell(self):
        self.map_instance(self.cell.uuid)
        self.create_instance()
        result = self.verify()
        self.assertSucceeded(result)
        self.assertIn(self.cell.uuid, result.stdout)

    def test_an_instance_without_mapping_exits_1(self):
        result = self.verify()
        self.assertEqual(1, result.code, result)
        self.assertIn('not mapped', result.stdout)

    def test_a_build_request_mapped_without_cell_exits_2(self):
        build_request.BuildRequest.create(self.context, UUID, PROJECT,
                                          {'display_name': 'vm'})
        self.map_instance()
        result = self.verify()
        self.assertEqual(2, result.code, result)
        self.assertIn('without a cell', result.stdout)

    def test_an_instance_deleted_in_its_cell_exits_3(self):
        self.map_instance(self.cell.uuid)
        instance = self.create_instance()
        with cb_context.target_cell(self.context, self.cell) as cctxt:
            instance.destroy(cctxt)
        result = self.verify()
        self.assertEqual(3, result.code, result)
        self.assertIn('deleted', result.stdout)

    def test_a_mapping_whose_cell_lost_the_instance_exits_4(self):
        self.map_instance(self.cell.uuid)
        result = self.verify()
        self.assertEqual(4, result.code, result)
        self.assertIn('archived', result.stdout)

    def test_quiet_prints_nothing_and_keeps_the_exit_code(self):
        self.map_instance()
        result = self.verify('--quiet')
        self.assertEqual(2, result.code, result)
        self.assertEqual('', result.stdout + result.stderr)


class SQLiteVerifyInstanceTest(_VerifyInstanceTests, test_base.SQLiteMixin,
                               base.ManageTestCase):
    pass


class MySQLVerifyInstanceTest(_VerifyInstanceTests, test_base.MySQLMixin,
                              base.ManageTestCase):
    pass
