"""What the RPC serializer puts on the wire: plain JSON values."""

import datetime

import testtools

from cellboot.rpc import serializer


class EntitySerializerTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.serializer = serializer.RequestContextSerializer()

    def test_json_values_pass_unchanged(self):
        payload = {'uuid': 'u', 'vcpus': 1, 'ratio': 1.5, 'ok': True,
                   'host': None, 'hosts': [['h1', 'n1']], 'meta': {}}
        self.assertEqual(payload,
                         self.serializer.serialize_entity(None, payload))

    def test_datetimes_sets_and_tuples_become_json(self):
        when = datetime.datetime(2026, 11, 22, 10, 30, 0, 123456)
        self.assertEqual(
            {'launched_at': '2026-11-22T10:30:00.123456', 'ids': [1],
             'pair': ['h1', 'n1']},
            self.serializer.serialize_entity(
                None, {'launched_at': when, 'ids': {1},
                       'pair': ('h1', 'n1')}))

    def test_keys_become_strings_as_on_a_broker(self):
        self.assertEqual({'1': 'a'},
                         self.serializer.serialize_entity(None, {1: 'a'}))

    def test_the_payload_is_a_copy(self):
        payload = {'flavor': {'vcpus': 1}}
        sent = self.serializer.serialize_entity(None, payload)
        sent['flavor']['vcpus'] = 2
        self.assertEqual(1, payload['flavor']['vcpus'])
