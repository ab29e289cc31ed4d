"""InstanceAction(Event) against a real cell database, on every backend."""

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.objects import instance_action
from tests import base
from tests.functional.objects import spec_base

InstanceAction = instance_action.InstanceAction
InstanceActionEvent = instance_action.InstanceActionEvent


class _InstanceActionTests(spec_base.ObjectTests):

    def setUp(self):
        super().setUp()
        self.uuid = uuidutils.generate_uuid()

    def _start(self, action='create', request_id='req-1'):
        return InstanceAction.start(self.ctx, self.uuid, action, request_id,
                                    user_id='u1', project_id='p1')

    def test_start_records_the_action(self):
        action = self._start()
        stored = InstanceAction.get_by_request_id(self.ctx, self.uuid,
                                                  'req-1')
        self.assertEqual(action.to_dict(), stored.to_dict())
        self.assertEqual(('create', 'u1', 'p1', None, None),
                         (stored.action, stored.user_id, stored.project_id,
                          stored.finish_time, stored.message))
        self.assertRecent(stored.start_time)

    def test_get_by_request_id_of_unknown_raises_not_found(self):
        self._start()
        exc = self.assertRaises(exception.InstanceActionNotFound,
                                InstanceAction.get_by_request_id, self.ctx,
                                self.uuid, 'req-2')
        self.assertIn('req-2', str(exc))

    def test_get_by_instance_uuid_lists_newest_first(self):
        self._start('create', 'req-1')
        self._start('delete', 'req-2')
        InstanceAction.start(self.ctx, uuidutils.generate_uuid(), 'create',
                             'req-3')
        self.assertEqual(
            ['delete', 'create'],
            [a.action for a in InstanceAction.get_by_instance_uuid(
                self.ctx, self.uuid)])

    def test_finish_records_the_end_and_message(self):
        action = self._start()
        action.finish(self.ctx, message='Error')
        stored = InstanceAction.get_by_request_id(self.ctx, self.uuid,
                                                  'req-1')
        self.assertEqual('Error', stored.message)
        self.assertRecent(stored.finish_time)

    def test_event_start_without_the_action_raises_not_found(self):
        self.assertRaises(exception.InstanceActionNotFound,
                          InstanceActionEvent.event_start, self.ctx,
                          self.uuid, 'req-1', 'schedule')

    def test_event_start_records_an_unfinished_event(self):
        action = self._start()
        event = InstanceActionEvent.event_start(self.ctx, self.uuid, 'req-1',
                                                'schedule', host='ctl1')
        self.assertEqual((action.id, 'schedule', 'ctl1', None, None),
                         (event.action_id, event.event, event.host,
                          event.result, event.finish_time))
        self.assertRecent(event.start_time)

    def test_event_finish_records_the_result(self):
        self._start()
        InstanceActionEvent.event_start(self.ctx, self.uuid, 'req-1',
                                        'schedule')
        event = InstanceActionEvent.event_finish(
            self.ctx, self.uuid, 'req-1', 'schedule', 'Error',
            traceback='Traceback ...', details='NoValidHost')
        self.assertEqual(('Error', 'Traceback ...', 'NoValidHost'),
                         (event.result, event.traceback, event.details))
        self.assertRecent(event.finish_time)

    def test_an_error_event_marks_the_action_error(self):
        self._start()
        InstanceActionEvent.event_start(self.ctx, self.uuid, 'req-1', 'spawn')
        InstanceActionEvent.event_finish(self.ctx, self.uuid, 'req-1',
                                         'spawn', 'Error')
        self.assertEqual('Error', InstanceAction.get_by_request_id(
            self.ctx, self.uuid, 'req-1').message)

    def test_a_successful_event_leaves_the_action_message(self):
        self._start()
        InstanceActionEvent.event_start(self.ctx, self.uuid, 'req-1', 'spawn')
        InstanceActionEvent.event_finish(self.ctx, self.uuid, 'req-1',
                                         'spawn', 'Success')
        self.assertIsNone(InstanceAction.get_by_request_id(
            self.ctx, self.uuid, 'req-1').message)

    def test_finish_of_a_held_event_records_it_and_fails_the_action(self):
        self._start()
        event = InstanceActionEvent.event_start(self.ctx, self.uuid, 'req-1',
                                                'spawn', host='cmp1')
        event.finish(self.ctx, 'Error', details='disk full')
        action = InstanceAction.get_by_request_id(self.ctx, self.uuid,
                                                  'req-1')
        stored = InstanceActionEvent.get_by_action(self.ctx, action.id)[0]
        self.assertEqual(('Error', 'disk full', 'cmp1', 'Error'),
                         (stored.result, stored.details, stored.host,
                          action.message))
        self.assertEqual(('Error', 'disk full'), (event.result, event.details))
        self.assertRecent(stored.finish_time)

    def test_finish_of_a_vanished_event_raises_gone(self):
        self._start()
        event = InstanceActionEvent.event_start(self.ctx, self.uuid, 'req-1',
                                                'spawn')
        event.id += 1000
        exc = self.assertRaises(exception.InstanceActionEventGone,
                                event.finish, self.ctx, 'Success')
        self.assertIn(str(event.id), str(exc))

    def test_event_finish_of_an_unstarted_event_raises_not_found(self):
        self._start()
        self.assertRaises(exception.InstanceActionEventNotFound,
                          InstanceActionEvent.event_finish, self.ctx,
                          self.uuid, 'req-1', 'spawn', 'Success')

    def test_get_by_action_lists_events_in_start_order(self):
        action = self._start()
        for name in ('schedule', 'spawn'):
            InstanceActionEvent.event_start(self.ctx, self.uuid, 'req-1',
                                            name)
        self.assertEqual(
            ['schedule', 'spawn'],
            [e.event for e in InstanceActionEvent.get_by_action(self.ctx,
                                                                action.id)])


class SQLiteInstanceActionTest(_InstanceActionTests, base.SQLiteMixin,
                               spec_base.ObjectTestCase):
    CELL_DATABASES = 1


class MySQLInstanceActionTest(_InstanceActionTests, base.MySQLMixin,
                              spec_base.ObjectTestCase):
    CELL_DATABASES = 1


class PostgreSQLInstanceActionTest(_InstanceActionTests, base.PostgreSQLMixin,
                                   spec_base.ObjectTestCase):
    CELL_DATABASES = 1
