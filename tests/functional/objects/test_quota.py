"""Quota rows and usage against a real API database, on every backend."""

from unittest import mock

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot import exception
from cellboot.db.api import connection as api_db
from cellboot.objects import instance_mapping
from cellboot.objects import quota as quota_obj
from cellboot import quota
from tests import base
from tests.functional.objects import spec_base

InstanceMapping = instance_mapping.InstanceMapping


@api_db.writer
def _locked(context, project_id):
    return quota_obj.lock_project(context, project_id)


class _QuotaTests(spec_base.ObjectTests):

    def map(self, project_id='p1', vcpus=2, memory_mb=1024, queued=False,
            cell_uuid=None):
        mapping = InstanceMapping.create(
            self.ctx, uuidutils.generate_uuid(), project_id,
            vcpus=vcpus, memory_mb=memory_mb, cell_uuid=cell_uuid)
        if queued:
            mapping.set_queued_for_delete(self.ctx)
        return mapping

    def test_a_lock_row_insert_that_deadlocks_runs_again(self):
        # MariaDB fails one of two transactions when a request of the
        # project holds a gap lock where the row goes (a 500 in CI).
        real_insert = sa.insert
        with mock.patch.object(quota_obj.sa, 'insert', side_effect=[
                db_exc.DBDeadlock(), real_insert(quota_obj._LOCKS)]) as ins:
            quota.prepare(self.ctx, 'p1')
        self.assertEqual(2, ins.call_count)
        self.assertTrue(_locked(self.ctx, 'p1'))

    def test_a_project_without_limits_of_its_own_has_the_defaults(self):
        self.flags(instances=4, group='quota')
        self.assertEqual(({'instances': 4, 'cores': 20, 'ram': 51200},
                          set()), quota.limits(self.ctx, 'p1'))

    def test_set_limits_override_some_defaults_of_one_project(self):
        quota.update(self.ctx, 'p1', {'cores': 40, 'ram': -1})
        self.assertEqual(({'instances': 10, 'cores': 40, 'ram': -1},
                          {'cores', 'ram'}), quota.limits(self.ctx, 'p1'))
        self.assertEqual(set(), quota.limits(self.ctx, 'p2')[1])

    def test_setting_a_limit_again_replaces_it(self):
        quota.update(self.ctx, 'p1', {'cores': 40})
        quota.update(self.ctx, 'p1', {'cores': 8, 'instances': 2})
        self.assertEqual({'cores': 8, 'instances': 2},
                         quota_obj.get_limits(self.ctx, 'p1'))

    def test_reset_gives_the_defaults_back(self):
        quota.update(self.ctx, 'p1', {'cores': 40, 'instances': 1})
        self.assertEqual(2, quota.reset(self.ctx, 'p1'))
        self.assertEqual({}, quota_obj.get_limits(self.ctx, 'p1'))
        self.assertEqual(0, quota.reset(self.ctx, 'p1'))

    def test_invalid_limits_write_nothing(self):
        self.assertRaises(exception.Invalid, quota.update, self.ctx, 'p1',
                          {'cores': 4, 'instances': -2})
        self.assertRaises(exception.Invalid, quota.update, self.ctx,
                          'p' * 256, {'cores': 4})
        self.assertEqual({}, quota_obj.get_limits(self.ctx, 'p1'))

    def test_usage_sums_the_live_mappings_of_the_project(self):
        self.map(vcpus=2, memory_mb=1024)
        self.map(vcpus=4, memory_mb=4096, cell_uuid=self.make_cell(
            'cell1').uuid)
        self.map(vcpus=8, memory_mb=8192, queued=True)
        self.map(project_id='p2', vcpus=16, memory_mb=1)
        self.assertEqual({'instances': 2, 'cores': 6, 'ram': 5120},
                         quota.usage(self.ctx, 'p1'))

    def test_a_project_with_nothing_uses_nothing(self):
        self.assertEqual({'instances': 0, 'cores': 0, 'ram': 0},
                         quota.usage(self.ctx, 'nobody'))

    def test_a_project_is_locked_only_once_it_has_a_lock_row(self):
        self.assertFalse(_locked(self.ctx, 'p1'))
        quota.prepare(self.ctx, 'p1')
        quota.prepare(self.ctx, 'p1')  # a second time is harmless
        self.assertTrue(_locked(self.ctx, 'p1'))
        self.assertFalse(_locked(self.ctx, 'p2'))

    def test_claim_without_a_lock_row_asks_for_one(self):
        self.assertRaises(quota.ProjectNotLocked, api_db.writer(quota.claim),
                          self.ctx, 'p1', 1, 1, 1, 1)

    def test_claim_counts_under_the_lock(self):
        quota.prepare(self.ctx, 'p1')
        quota.update(self.ctx, 'p1', {'instances': 3})
        self.map()
        claim = api_db.writer(quota.claim)
        self.assertEqual(2, claim(self.ctx, 'p1', 1, 5, 1, 1))
        self.assertRaises(exception.QuotaExceeded, claim, self.ctx, 'p1', 3,
                          5, 1, 1)


class SQLiteQuotaTest(_QuotaTests, base.SQLiteMixin,
                      spec_base.ObjectTestCase):
    pass


class MySQLQuotaTest(_QuotaTests, base.MySQLMixin, spec_base.ObjectTestCase):
    pass


class PostgreSQLQuotaTest(_QuotaTests, base.PostgreSQLMixin,
                          spec_base.ObjectTestCase):
    pass
