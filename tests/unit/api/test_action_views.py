"""What an instance action's events show, to their owner and to admins.

The owner reads a sentence per event that says why it happened, and the
bare event name; administrators also read the host, the services'
details and traceback, and the cell an event was carried from.
"""

import datetime

from cellboot.api import auth
from cellboot.api import views
from cellboot.builds import fates
from cellboot.builds import handback
from cellboot.compute import build_records
from cellboot.conductor import untaken_builds
from cellboot import context as cb_context
from cellboot.objects import fault_messages
from cellboot.objects import instance_action
from tests import base

WHEN = datetime.datetime(2026, 12, 7, 8, 58, 14)
ACTION = instance_action.InstanceAction(
    id=7, action='create', instance_uuid='u-1', request_id='req-1',
    user_id='alice', project_id='project-a', start_time=WHEN,
    message='Error')


def _event(name, result, details=None, host='cell1-host1', traceback=None):
    return instance_action.InstanceActionEvent(
        id=1, action_id=7, event=name, result=result, details=details,
        host=host, traceback=traceback, start_time=WHEN, finish_time=WHEN)


def _context(user, project):
    admin = user == auth.ADMIN_USER
    return cb_context.RequestContext(
        user_id=user, project_id=project,
        roles=([auth.ADMIN_ROLE] if admin else []) + auth.MEMBER_ROLES,
        system_scope=auth.SYSTEM_SCOPE_ALL if admin else None)


class ActionViewTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.owner = _context('alice', 'project-a')
        self.admin = _context(auth.ADMIN_USER, 'admin-project')

    def events(self, context, *events):
        view = views.instance_action_detail(context, ACTION, events)
        self.assertEqual(('create', 'req-1', '2026-12-07T08:58:14Z'),
                         (view['action'], view['request_id'],
                          view['updated_at']))
        return view['events']

    def test_the_owner_reads_a_sentence_per_reason(self):
        cases = [
            (_event(build_records.EVENT_BUILD, 'Error', 'on cell1-host1'),
             fault_messages.HOST_FAILED),
            (_event(fates.RESCHEDULE_EVENT, 'Success', 'to cell1-host2'),
             fault_messages.RESCHEDULED),
            (_event('cell1:' + handback.HANDBACK_EVENT, 'Success', 'x'),
             fault_messages.HANDED_BACK),
            (_event(untaken_builds.EVENT_NOT_TAKEN, 'Success', 'x'),
             fault_messages.NOT_TAKEN),
            (_event(untaken_builds.EVENT_RECAST, 'Success', 'x'),
             fault_messages.RECAST),
            # A failure without a sentence of its own reads as a fault.
            (_event(fates.RESCHEDULE_EVENT, 'Error',
                    'Exceeded maximum number of retries. on cell1-host2'),
             fault_messages.RETRIES_EXCEEDED),
            (_event('some_step', 'Error', 'pymysql.err in cell1'),
             fault_messages.INTERNAL_ERROR),
            (_event(build_records.EVENT_BUILD, 'Success'), None),
        ]
        shown = self.events(self.owner, *[event for event, _ in cases])
        self.assertEqual([message for _, message in cases],
                         [event['message'] for event in shown])
        for event in shown:
            self.assertEqual({'event', 'start_time', 'finish_time',
                              'result', 'message'}, set(event))
        # The cell a carried event comes from is no user's to read.
        self.assertEqual(handback.HANDBACK_EVENT, shown[2]['event'])

    def test_an_admin_reads_host_details_traceback_and_cell(self):
        (shown,) = self.events(self.admin, _event(
            'cell1:' + build_records.EVENT_BUILD, 'Error', 'the reason',
            traceback='Traceback ...'))
        self.assertEqual(
            {'event': 'cell1:' + build_records.EVENT_BUILD,
             'start_time': '2026-12-07T08:58:14Z',
             'finish_time': '2026-12-07T08:58:14Z', 'result': 'Error',
             'message': fault_messages.HOST_FAILED, 'host': 'cell1-host1',
             'details': 'the reason', 'traceback': 'Traceback ...'}, shown)
