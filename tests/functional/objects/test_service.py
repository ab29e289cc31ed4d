"""Service against a real cell database, on every backend."""

import datetime

from oslo_utils import timeutils

from cellboot import context
from cellboot import exception
from cellboot.objects import service
from tests import base
from tests.functional.objects import spec_base

Service = service.Service


class _ServiceTests(spec_base.ObjectTests):

    def _create(self, host='host1', binary='cellboot-compute'):
        return Service.create(self.ctx, host, binary)

    def test_create_returns_an_enabled_service_never_seen_up(self):
        svc = self._create()
        self.assertEqual(('host1', 'cellboot-compute', False, None, None, 0),
                         (svc.host, svc.binary, svc.disabled,
                          svc.disabled_reason, svc.last_seen_up,
                          svc.report_count))

    def test_create_of_an_existing_service_raises_exists(self):
        self._create()
        exc = self.assertRaises(exception.ServiceExists, self._create)
        self.assertIn('host1', str(exc))

    def test_same_binary_on_another_host_is_another_service(self):
        self._create()
        self.assertEqual('host2', self._create(host='host2').host)

    def test_get_by_host_and_binary_returns_the_service(self):
        svc = self._create()
        self.assertEqual(svc.to_dict(), Service.get_by_host_and_binary(
            self.ctx, 'host1', 'cellboot-compute').to_dict())

    def test_get_by_host_and_binary_of_unknown_raises_not_found(self):
        self.assertRaises(exception.ServiceNotFound,
                          Service.get_by_host_and_binary, self.ctx, 'host1',
                          'cellboot-compute')

    def test_get_all_filters_by_binary(self):
        self._create(host='b')
        self._create(host='a')
        self._create(host='a', binary='cellboot-conductor')
        self.assertEqual(
            [('a', 'cellboot-compute'), ('b', 'cellboot-compute')],
            [(s.host, s.binary)
             for s in Service.get_all(self.ctx, 'cellboot-compute')])
        self.assertEqual(3, len(Service.get_all(self.ctx)))

    def test_report_up_records_the_heartbeat(self):
        svc = self._create()
        svc.report_up(self.ctx)
        svc.report_up(self.ctx)
        stored = Service.get_by_host_and_binary(self.ctx, 'host1',
                                                'cellboot-compute')
        self.assertEqual(2, stored.report_count)
        self.assertRecent(stored.last_seen_up)
        self.assertEqual(stored.to_dict(), svc.to_dict())

    def test_report_up_of_a_deleted_service_raises_not_found(self):
        svc = self._create()
        svc.destroy(self.ctx)
        self.assertRaises(exception.ServiceNotFound, svc.report_up, self.ctx)

    def test_update_disables_with_a_reason(self):
        svc = self._create()
        svc.update(self.ctx, disabled=True, disabled_reason='maintenance')
        stored = Service.get_by_host_and_binary(self.ctx, 'host1',
                                                'cellboot-compute')
        self.assertEqual((True, 'maintenance'),
                         (stored.disabled, stored.disabled_reason))

    def test_update_of_an_unknown_field_raises_invalid(self):
        svc = self._create()
        self.assertRaises(exception.Invalid, svc.update, self.ctx,
                          host='other')

    def test_destroy_twice_raises_not_found(self):
        svc = self._create()
        svc.destroy(self.ctx)
        self.assertRaises(exception.ServiceNotFound, svc.destroy, self.ctx)

    def test_is_up_after_a_recent_heartbeat(self):
        svc = self._create()
        svc.report_up(self.ctx)
        self.assertTrue(svc.is_up(60))

    def test_is_not_up_after_an_old_heartbeat(self):
        svc = Service(last_seen_up=timeutils.utcnow()
                      - datetime.timedelta(seconds=61))
        self.assertFalse(svc.is_up(60))

    def test_is_not_up_before_the_first_heartbeat(self):
        self.assertFalse(self._create().is_up(60))

    def test_targeted_cell_holds_its_own_services_only(self):
        cell = self.make_remote_cell('cell2')
        with context.target_cell(self.ctx, cell) as cctxt:
            Service.create(cctxt, 'remote', 'cellboot-compute')
            self.assertEqual(['remote'],
                             [s.host for s in Service.get_all(cctxt)])
        self.assertEqual([], Service.get_all(self.ctx))


class SQLiteServiceTest(_ServiceTests, base.SQLiteMixin,
                        spec_base.ObjectTestCase):
    CELL_DATABASES = 2


class MySQLServiceTest(_ServiceTests, base.MySQLMixin,
                       spec_base.ObjectTestCase):
    CELL_DATABASES = 2


class PostgreSQLServiceTest(_ServiceTests, base.PostgreSQLMixin,
                            spec_base.ObjectTestCase):
    CELL_DATABASES = 2
