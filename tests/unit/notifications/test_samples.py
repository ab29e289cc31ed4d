"""Every notification cellboot sends matches its committed sample.

``docs/notification_samples/*.json`` are what docs/operations.md shows
operators, one file per event. Each test here builds its event through
the same function the code calls (``cellboot.notifications``), catches
what would be queued for the bus, and compares it with its sample: the
event type, priority and every payload envelope (name, namespace,
version) exactly; the payload's keys at every depth, and the type of
every value (uuids, names and timestamps vary, their types do not). A
value may be null where the sample has a value (or the reverse) only
when its payload class declares the field optional.

A payload that gains or loses a field fails here until its version is
bumped and its sample updated (``payloads``' module docstring).
"""

import datetime
import json
import pathlib
import types
import typing
from unittest import mock

from cellboot import exception
from cellboot import notifications
from cellboot.notifications import payloads
from cellboot.notifications import sender
from tests import base

SAMPLES = pathlib.Path(__file__).resolve().parents[3] / 'docs' / \
    'notification_samples'

ENVELOPE_KEYS = ('nova_object.name', 'nova_object.namespace',
                 'nova_object.version')
PAYLOAD_CLASSES = {cls.NAME: cls for cls in (
    payloads.ExceptionPayload, payloads.FlavorPayload,
    payloads.InstanceActionPayload, payloads.ComputeTaskPayload,
    payloads.FlowPayload)}


def _instance(**changes):
    values = dict(
        uuid='5b7b5bb2-5c54-4d43-a3de-0d8c9bc9b0a3', display_name='web-1',
        project_id='6f70656e737461636b20342065766572', user_id='fake',
        reservation_id='r-abcdef12', host='cell1-host1', node='cell1-host1',
        vm_state='building', task_state='spawning',
        availability_zone='nova',
        image_ref='155d900f-4e14-4e4c-a73d-069cbf4541e6',
        created_at=datetime.datetime(2026, 12, 7, 8, 0, 0),
        launched_at=None, deleted_at=None,
        flavor={'flavorid': '1', 'name': 'm1.tiny', 'vcpus': 1,
                'memory_mb': 512, 'root_gb': 1})
    values.update(changes)
    return types.SimpleNamespace(**values)


def _raised(error):
    try:
        raise error
    except Exception as exc:
        return exc


FAILURE = exception.RescheduledBuildFailure(
    uuid='5b7b5bb2-5c54-4d43-a3de-0d8c9bc9b0a3', host='cell1-host1',
    reason='the fake driver fails every build of cell1-host1')
FLOW = types.SimpleNamespace(
    uuid='0a0e8c35-6a5a-5a4f-9e43-7f6c3d0f0a11', name='boot',
    state='SUCCESS', meta={'owner': 'conductor-1:1234'})

# sample file -> how the code sends that event
EVENTS = {
    'instance-create-start': lambda ctx: notifications.instance_create(
        ctx, _instance(), 'start', publisher='cellboot-compute:cell1-host1'),
    'instance-create-end': lambda ctx: notifications.instance_create(
        ctx, _instance(vm_state='active', task_state=None,
                       launched_at=datetime.datetime(2026, 12, 7, 8, 0, 5)),
        'end', publisher='cellboot-compute:cell1-host1'),
    'instance-create-error': lambda ctx: notifications.instance_create(
        ctx, _instance(vm_state='error', task_state=None), 'error',
        error=_raised(exception.NoValidHost(
            reason='There are not enough hosts available.')),
        publisher='cellboot-conductor:conductor-1'),
    'instance-delete-start': lambda ctx: notifications.instance_delete(
        ctx, _instance(vm_state='active', task_state=None), 'start',
        publisher='cellboot-api:api-1'),
    'instance-delete-end': lambda ctx: notifications.instance_delete(
        ctx, _instance(vm_state='deleted', task_state=None,
                       deleted_at=datetime.datetime(2026, 12, 7, 9, 0, 0)),
        'end', publisher='cellboot-api:api-1'),
    'compute_task-build_instances-error':
        lambda ctx: notifications.build_rescheduled(
            ctx, _instance().uuid, 'cell1-host1', FAILURE,
            publisher='cellboot-compute:cell1-host1'),
    'compute-exception': lambda ctx: notifications.compute_exception(
        ctx, _raised(RuntimeError('the hypervisor went away')),
        publisher='cellboot-compute:cell1-host1'),
    'flow-end': lambda ctx: notifications.flow_event(
        ctx, FLOW, 'succeeded', publisher='cellboot-conductor:conductor-1'),
    'flow-error': lambda ctx: notifications.flow_event(
        ctx, types.SimpleNamespace(**dict(vars(FLOW), state='FAILURE')),
        'failed', reason=_raised(exception.NoValidHost(reason='none')),
        publisher='cellboot-conductor:conductor-1'),
    'flow-revert': lambda ctx: notifications.flow_event(
        ctx, types.SimpleNamespace(**dict(vars(FLOW), state='REVERTED')),
        'reverted', reason='NoValidHost: No valid host was found.',
        publisher='cellboot-conductor:conductor-1'),
    'flow-resume': lambda ctx: notifications.flow_event(
        ctx, types.SimpleNamespace(**dict(vars(FLOW), state='RUNNING')),
        'resumed', publisher='cellboot-conductor:conductor-2'),
    'flow-hand_over': lambda ctx: notifications.flow_event(
        ctx, FLOW.uuid, 'handed_over',
        publisher='cellboot-conductor:conductor-2'),
    'flow-abandon': lambda ctx: notifications.flow_event(
        ctx, types.SimpleNamespace(**dict(vars(FLOW), state='FAILURE')),
        'abandoned', reason='abandoned by an operator',
        publisher='cellboot-manage:admin-host'),
}


def build(name):
    """The notification ``EVENTS[name]`` sends, as it would be queued."""
    sent = []
    with mock.patch.object(sender, 'send',
                           lambda *args: sent.append(args)):
        EVENTS[name]({'request_id': 'req-1'})
    if len(sent) != 1:
        raise AssertionError(f'{name}: {len(sent)} notifications sent')
    _ctxt, publisher_id, event_type, priority, payload = sent[0]
    return {'event_type': event_type, 'priority': priority,
            'publisher_id': publisher_id, 'payload': payload}


def _optional(cls, field):
    hint = typing.get_type_hints(cls).get(field)
    return type(None) in typing.get_args(hint)


class NotificationSamplesTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(enabled=True, group='notifications')

    def assertMatches(self, sample, built, where):
        self.assertEqual(set(sample), set(built), f'{where}: keys')
        if 'nova_object.name' in sample:
            for key in ENVELOPE_KEYS:
                self.assertEqual(sample[key], built[key], f'{where}.{key}')
            cls = PAYLOAD_CLASSES[sample['nova_object.name']]
            data = 'nova_object.data'
            self.assertEqual(set(sample[data]), set(built[data]),
                             f'{where}: fields of {cls.NAME}')
            for field, value in sample[data].items():
                got = built[data][field]
                if value is None or got is None:
                    if value is not got:
                        self.assertTrue(_optional(cls, field),
                                        f'{where}.{field} may not be null')
                    continue
                self.assertValue(value, got, f'{where}.{field}')
            return
        for key, value in sample.items():
            self.assertValue(value, built[key], f'{where}.{key}')

    def assertValue(self, sample, built, where):
        if isinstance(sample, dict):
            self.assertIsInstance(built, dict, where)
            self.assertMatches(sample, built, where)
        else:
            self.assertIs(type(sample), type(built), where)

    def test_every_sample_has_its_event(self):
        self.assertEqual(sorted(EVENTS),
                         sorted(p.stem for p in SAMPLES.glob('*.json')))

    def test_each_notification_matches_its_sample(self):
        for name in EVENTS:
            sample = json.loads((SAMPLES / f'{name}.json').read_text())
            built = build(name)
            self.assertEqual(sample['event_type'], built['event_type'], name)
            self.assertEqual(sample['priority'], built['priority'], name)
            self.assertEqual(name.replace('-', '.'), built['event_type'])
            self.assertMatches(sample['payload'], built['payload'], name)

    def test_a_sample_mismatch_is_caught(self):
        # The comparison itself: a renamed field, a changed version and
        # a wrong type are each refused.
        sample = json.loads((SAMPLES / 'flow-end.json').read_text())
        built = build('flow-end')
        for change in (
                lambda p: p['nova_object.data'].update(
                    flow_uuid=p['nova_object.data'].pop('uuid')),
                lambda p: p.update({'nova_object.version': '1.1'}),
                lambda p: p['nova_object.data'].update(name=7)):
            wrong = json.loads(json.dumps(built['payload']))
            change(wrong)
            self.assertRaises(AssertionError, self.assertMatches,
                              sample['payload'], wrong, 'flow-end')

    def test_nothing_is_built_when_disabled(self):
        self.flags(enabled=False, group='notifications')
        with mock.patch.object(sender, 'send') as send:
            for name in EVENTS:
                EVENTS[name](None)
        send.assert_not_called()
