"""InstanceFault against a real cell database, on every backend."""

from oslo_utils import uuidutils

from cellboot.objects import instance_fault
from tests import base
from tests.functional.objects import spec_base

InstanceFault = instance_fault.InstanceFault


class _InstanceFaultTests(spec_base.ObjectTests):

    def test_create_returns_the_stored_fault(self):
        uuid = uuidutils.generate_uuid()
        fault = InstanceFault.create(self.ctx, uuid, 500, 'No valid host',
                                     details='Traceback ...', host='host1')
        self.assertEqual((uuid, 500, 'No valid host', 'Traceback ...',
                          'host1'),
                         (fault.instance_uuid, fault.code, fault.message,
                          fault.details, fault.host))
        self.assertRecent(fault.created_at)

    def test_create_cuts_a_long_message_to_255_characters(self):
        fault = InstanceFault.create(self.ctx, uuidutils.generate_uuid(),
                                     500, 'é' * 300)
        self.assertEqual('é' * 255, fault.message)

    def test_get_latest_for_instances_returns_each_ones_last_fault(self):
        first, second, clean = (uuidutils.generate_uuid() for _ in range(3))
        InstanceFault.create(self.ctx, first, 500, 'old')
        InstanceFault.create(self.ctx, first, 500, 'new')
        InstanceFault.create(self.ctx, second, 404, 'only')
        latest = InstanceFault.get_latest_for_instances(
            self.ctx, [first, second, clean])
        self.assertEqual({first: 'new', second: 'only'},
                         {uuid: f.message for uuid, f in latest.items()})

    def test_get_latest_for_no_instances_is_empty(self):
        InstanceFault.create(self.ctx, uuidutils.generate_uuid(), 500, 'x')
        self.assertEqual({}, InstanceFault.get_latest_for_instances(
            self.ctx, []))


class SQLiteInstanceFaultTest(_InstanceFaultTests, base.SQLiteMixin,
                              spec_base.ObjectTestCase):
    CELL_DATABASES = 1


class MySQLInstanceFaultTest(_InstanceFaultTests, base.MySQLMixin,
                             spec_base.ObjectTestCase):
    CELL_DATABASES = 1


class PostgreSQLInstanceFaultTest(_InstanceFaultTests, base.PostgreSQLMixin,
                                  spec_base.ObjectTestCase):
    CELL_DATABASES = 1
