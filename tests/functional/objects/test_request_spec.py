"""RequestSpec against a real API database, on every backend."""

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.objects import request_spec
from tests import base
from tests.functional.objects import spec_base

RequestSpec = request_spec.RequestSpec

SPEC = {
    'flavor': {'name': 'm1.small', 'vcpus': 1, 'memory_mb': 512,
               'root_gb': 1},
    'availability_zone': 'nova',
    'scheduler_hints': {'group': uuidutils.generate_uuid()},
    'num_instances': 2,
    'ignore_hosts': [],
}


class _RequestSpecTests(spec_base.ObjectTests):

    def _create(self, spec=SPEC):
        return RequestSpec.create(self.ctx, uuidutils.generate_uuid(), spec)

    def test_spec_round_trips_through_json(self):
        spec = self._create()
        self.assertEqual(SPEC, RequestSpec.get_by_instance_uuid(
            self.ctx, spec.instance_uuid).spec)

    def test_create_for_an_instance_with_a_spec_raises_exists(self):
        spec = self._create()
        exc = self.assertRaises(exception.RequestSpecExists,
                                RequestSpec.create, self.ctx,
                                spec.instance_uuid, SPEC)
        self.assertIn(spec.instance_uuid, str(exc))

    def test_create_many_stores_the_spec_for_each(self):
        uuids = [uuidutils.generate_uuid() for _ in range(3)]
        RequestSpec.create_many(self.ctx, uuids, SPEC)
        self.assertEqual([SPEC] * 3, [
            RequestSpec.get_by_instance_uuid(self.ctx, uuid).spec
            for uuid in uuids])

    def test_create_many_with_a_taken_uuid_writes_none_of_them(self):
        taken, new = self._create(), uuidutils.generate_uuid()
        self.assertRaises(exception.RequestSpecExists,
                          RequestSpec.create_many, self.ctx,
                          [new, taken.instance_uuid], SPEC)
        self.assertRaises(exception.RequestSpecNotFound,
                          RequestSpec.get_by_instance_uuid, self.ctx, new)

    def test_get_by_instance_uuid_of_unknown_raises_not_found(self):
        self.assertRaises(exception.RequestSpecNotFound,
                          RequestSpec.get_by_instance_uuid, self.ctx,
                          uuidutils.generate_uuid())

    def test_save_writes_the_changed_spec(self):
        spec = self._create()
        spec.spec['ignore_hosts'].append('host1')
        spec.save(self.ctx)
        self.assertEqual(['host1'], RequestSpec.get_by_instance_uuid(
            self.ctx, spec.instance_uuid).spec['ignore_hosts'])

    def test_save_of_a_deleted_spec_raises_not_found(self):
        spec = self._create()
        spec.destroy(self.ctx)
        self.assertRaises(exception.RequestSpecNotFound, spec.save,
                          self.ctx)

    def test_destroy_twice_raises_not_found(self):
        spec = self._create()
        spec.destroy(self.ctx)
        self.assertRaises(exception.RequestSpecNotFound, spec.destroy,
                          self.ctx)


class SQLiteRequestSpecTest(_RequestSpecTests, base.SQLiteMixin,
                            spec_base.ObjectTestCase):
    pass


class MySQLRequestSpecTest(_RequestSpecTests, base.MySQLMixin,
                           spec_base.ObjectTestCase):
    pass


class PostgreSQLRequestSpecTest(_RequestSpecTests, base.PostgreSQLMixin,
                                spec_base.ObjectTestCase):
    pass
