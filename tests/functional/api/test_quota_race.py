"""Concurrent boots racing one quota never end over it, on every backend.

Many threads POST /servers to the WSGI application at once, each until
the quota refuses it; the API database is MariaDB, PostgreSQL or
SQLite. However the boots interleave, the project ends with exactly its
quota of servers, each accepted server is written, and no refused boot
wrote anything.
"""

import json
import threading

import webob

from cellboot.api import wsgi
from cellboot import context as cb_context
from cellboot.objects import flavor as flavor_obj
from cellboot.objects import instance_mapping
from cellboot import quota
from tests import base

THREADS = 12
INSTANCES = 7


class _NoConductor:
    def schedule_and_build_instances(self, ctxt, build_requests,
                                     request_specs):
        pass


class _QuotaRaceTests:

    CELLS = 0

    def setUp(self):
        super().setUp()
        self.ctx = cb_context.get_admin_context()
        flavor_obj.Flavor.create(self.ctx, 'small', 1, 512,
                                 flavorid='small')
        self.app = wsgi.make_app(None, conductor=_NoConductor(),
                                 strategy='noauth2')
        for project in ('race-a', 'race-b'):
            quota.update(self.ctx, project, {'instances': INSTANCES})

    def post(self, project, min_count, max_count):
        request = webob.Request.blank('/v2.1/servers', method='POST')
        request.headers['X-Auth-Token'] = f'user:{project}'
        request.content_type = 'application/json'
        request.body = json.dumps({'server': {
            'name': 'vm', 'flavorRef': 'small', 'min_count': min_count,
            'max_count': max_count}}).encode()
        return request.get_response(self.app)

    def boot_until_refused(self, project, start, accepted, answers):
        start.wait()
        while True:
            response = self.post(project, 1, 2)
            answers.append(response.status_int)
            if response.status_int != 202:
                return
            body = response.json
            accepted.extend(s['id'] for s in body.get(
                'servers', [body['server']]))

    def test_racing_boots_fill_the_quota_exactly(self):
        start = threading.Barrier(THREADS)
        accepted = {'race-a': [], 'race-b': []}
        answers = []
        threads = [threading.Thread(
            target=self.boot_until_refused,
            args=(project, start, accepted[project], answers))
            for index in range(THREADS)
            for project in (['race-a', 'race-b'][index % 2],)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        self.assertFalse(any(thread.is_alive() for thread in threads))
        self.assertEqual(0, self.app.unexpected)
        self.assertEqual({202, 403}, set(answers))
        self.assertEqual(THREADS, answers.count(403))
        for project, uuids in accepted.items():
            self.assertEqual(INSTANCES, len(uuids), project)
            self.assertEqual(INSTANCES, quota.usage(
                self.ctx, project)['instances'])
            mapped = instance_mapping.InstanceMapping.get_by_project(
                self.ctx, project)
            self.assertEqual(sorted(uuids),
                             sorted(m.instance_uuid for m in mapped))


class SQLiteQuotaRaceTest(_QuotaRaceTests, base.SQLiteMixin,
                          base.DatabaseTestCase):
    pass


class MySQLQuotaRaceTest(_QuotaRaceTests, base.MySQLMixin,
                         base.DatabaseTestCase):
    pass


class PostgreSQLQuotaRaceTest(_QuotaRaceTests, base.PostgreSQLMixin,
                              base.DatabaseTestCase):
    pass
