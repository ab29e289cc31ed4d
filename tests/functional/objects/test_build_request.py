"""BuildRequest against a real API database, on every backend."""

import datetime

from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.api import connection as api_connection
from cellboot import exception
from cellboot.objects import build_request
from tests import base
from tests.functional.objects import spec_base

BuildRequest = build_request.BuildRequest
_REQUESTS = build_request._REQUESTS

INSTANCE = {
    'display_name': 'web-1 ✓',
    'flavor': {'name': 'm1.small', 'vcpus': 1, 'memory_mb': 512},
    'image_ref': 'cirros',
    'metadata': {'role': 'web', 'tags': ['a', 'b']},
    'availability_zone': None,
}


class _BuildRequestTests(spec_base.ObjectTests):

    def _create(self, project_id='p1', instance=INSTANCE):
        return BuildRequest.create(self.ctx, uuidutils.generate_uuid(),
                                   project_id, instance, user_id='u1')

    def test_create_returns_the_stored_request(self):
        request = self._create()
        self.assertEqual(('p1', 'u1'), (request.project_id, request.user_id))
        self.assertIsNotNone(request.id)
        self.assertRecent(request.created_at)

    def test_instance_round_trips_through_json(self):
        request = self._create()
        self.assertEqual(INSTANCE, BuildRequest.get_by_instance_uuid(
            self.ctx, request.instance_uuid).instance)

    def test_create_for_an_instance_with_a_request_raises_exists(self):
        request = self._create()
        exc = self.assertRaises(exception.BuildRequestExists,
                                BuildRequest.create, self.ctx,
                                request.instance_uuid, 'p1', INSTANCE)
        self.assertIn(request.instance_uuid, str(exc))

    def test_get_by_instance_uuid_of_unknown_raises_not_found(self):
        self.assertRaises(exception.BuildRequestNotFound,
                          BuildRequest.get_by_instance_uuid, self.ctx,
                          uuidutils.generate_uuid())

    def test_get_by_project_lists_its_requests_oldest_first(self):
        first, second = self._create(), self._create()
        self._create(project_id='p2')
        self.assertEqual(
            [first.instance_uuid, second.instance_uuid],
            [r.instance_uuid
             for r in BuildRequest.get_by_project(self.ctx, 'p1')])

    def test_get_all_lists_every_project(self):
        self._create()
        self._create(project_id='p2')
        self.assertEqual(['p1', 'p2'], [r.project_id for r in
                                        BuildRequest.get_all(self.ctx)])

    def _created(self, request, seconds_ago):
        """Make ``request`` one created ``seconds_ago`` (None: unknown)."""
        when = None if seconds_ago is None else (
            timeutils.utcnow() - datetime.timedelta(seconds=seconds_ago))
        with api_connection.get_engine().begin() as conn:
            conn.execute(sa.update(_REQUESTS).where(
                _REQUESTS.c.id == request.id).values(created_at=when))

    def test_created_before_and_since_split_the_requests_by_age(self):
        old, young, older = self._create(), self._create(), self._create()
        unknown = self._create()
        self._created(old, 60)
        self._created(young, 10)
        self._created(older, 120)
        self._created(unknown, None)
        when = timeutils.utcnow() - datetime.timedelta(seconds=30)
        self.assertEqual(
            ([old.instance_uuid, older.instance_uuid],
             [young.instance_uuid, unknown.instance_uuid]),
            ([r.instance_uuid for r in
              BuildRequest.get_created_before(self.ctx, when)],
             [r.instance_uuid for r in
              BuildRequest.get_created_since(self.ctx, when)]))

    def test_destroy_deletes_the_request(self):
        request = self._create()
        request.destroy(self.ctx)
        self.assertRaises(exception.BuildRequestNotFound,
                          BuildRequest.get_by_instance_uuid, self.ctx,
                          request.instance_uuid)

    def test_destroy_twice_raises_not_found(self):
        request = self._create()
        request.destroy(self.ctx)
        self.assertRaises(exception.BuildRequestNotFound, request.destroy,
                          self.ctx)

    def test_destroy_by_instance_uuid_deletes_it_once(self):
        request = self._create()
        self.assertTrue(BuildRequest.destroy_by_instance_uuid(
            self.ctx, request.instance_uuid))
        self.assertFalse(BuildRequest.destroy_by_instance_uuid(
            self.ctx, request.instance_uuid))
        self.assertRaises(exception.BuildRequestNotFound,
                          BuildRequest.get_by_instance_uuid, self.ctx,
                          request.instance_uuid)

    def test_create_many_stores_each_and_destroy_many_counts_them(self):
        uuids = [uuidutils.generate_uuid() for _ in range(3)]
        BuildRequest.create_many(self.ctx, [
            {'instance_uuid': uuid, 'project_id': 'p1',
             'instance': dict(INSTANCE, uuid=uuid), 'user_id': 'u1'}
            for uuid in uuids])
        found = BuildRequest.get_by_instance_uuids(self.ctx, uuids)
        self.assertEqual(
            [(uuid, 'p1', 'u1', uuid) for uuid in uuids],
            [(found[uuid].instance_uuid, found[uuid].project_id,
              found[uuid].user_id, found[uuid].instance['uuid'])
             for uuid in uuids])
        self.assertEqual(2, BuildRequest.destroy_by_instance_uuids(
            self.ctx, uuids[:2] + [uuidutils.generate_uuid()]))
        self.assertEqual([uuids[2]], list(
            BuildRequest.get_by_instance_uuids(self.ctx, uuids)))

    def test_create_many_with_a_taken_uuid_writes_none_of_them(self):
        taken = self._create()
        new = uuidutils.generate_uuid()
        self.assertRaises(
            exception.BuildRequestExists, BuildRequest.create_many,
            self.ctx, [{'instance_uuid': uuid, 'project_id': 'p1',
                        'instance': INSTANCE}
                       for uuid in (new, taken.instance_uuid)])
        self.assertEqual({}, BuildRequest.get_by_instance_uuids(self.ctx,
                                                                [new]))

    def test_to_dict_copies_the_instance(self):
        request = self._create()
        values = request.to_dict()
        values['instance']['metadata']['role'] = 'changed'
        self.assertEqual('web', request.instance['metadata']['role'])


class SQLiteBuildRequestTest(_BuildRequestTests, base.SQLiteMixin,
                             spec_base.ObjectTestCase):
    pass


class MySQLBuildRequestTest(_BuildRequestTests, base.MySQLMixin,
                            spec_base.ObjectTestCase):
    pass


class PostgreSQLBuildRequestTest(_BuildRequestTests, base.PostgreSQLMixin,
                                 spec_base.ObjectTestCase):
    pass
