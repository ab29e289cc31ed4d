"""The rows the Nova mirror writes, from nova-api's real build requests.

nova-api keeps each server's ``Instance`` primitive in its build
request; the mirror reads it back from nova-api's database, so it is
checked like a cast: the captured ones give the rows Nova's conductor
would have written, and hostile ones are refused without writing.
"""

import copy
import datetime
import json

from cellboot.nova import instance_rows
from cellboot.nova import primitives
from tests import base
from tests.unit.nova import test_casts

NOW = datetime.datetime(2026, 11, 25, 12, 0, 0)
LIVE = instance_rows.state('active', None, 'cell1-host2', 'cell1-host2',
                           NOW, None)


def stored_instances(name):
    """The Instance primitives of capture ``name``, as nova-api stores
    them in ``build_requests.instance``."""
    _record, message = test_casts.captured(name)
    return [request['nova_object.data']['instance']
            for request in message['args']['build_requests']]


def stored(instance):
    return json.dumps(instance)


class CapturedBuildRequestsTest(base.TestCase):

    def test_a_single_boot_gives_nova_s_rows(self):
        (instance,) = stored_instances('single')
        fields = instance['nova_object.data']
        rows = instance_rows.rows(stored(instance), NOW, LIVE)
        (row,) = rows.by_table['instances']
        self.assertEqual(
            (fields['uuid'], 'web-1', 'nova-project', 'nova-user',
             fields['reservation_id'], 512, 1, 1, 0),
            (row['uuid'], row['display_name'], row['project_id'],
             row['user_id'], row['reservation_id'], row['memory_mb'],
             row['vcpus'], row['root_gb'], row['deleted']))
        self.assertEqual(
            ('active', None, instance_rows.RUNNING, 'cell1-host2', NOW),
            (row['vm_state'], row['task_state'], row['power_state'],
             row['host'], row['launched_at']))
        self.assertEqual(datetime.datetime(2026, 11, 25, 1, 19, 41),
                         row['created_at'])
        (extra,) = rows.by_table['instance_extra']
        flavor = json.loads(extra['flavor'])
        self.assertEqual((None, None, 'm1.tiny'), (
            flavor['old'], flavor['new'],
            flavor['cur']['nova_object.data']['flavorid']))
        self.assertEqual(
            [('role', 'web'), ('tier', 'front')],
            [(item['key'], item['value'])
             for item in rows.by_table['instance_metadata']])
        self.assertIn('image_base_image_ref', {
            item['key'] for item in rows.by_table[
                'instance_system_metadata']})
        self.assertEqual([{'instance_uuid': fields['uuid'],
                           'network_info': '[]'}], [
            {key: cache[key] for key in ('instance_uuid', 'network_info')}
            for cache in rows.by_table['instance_info_caches']])

    def test_every_capture_is_read(self):
        for name in test_casts.CAPTURED:
            for instance in stored_instances(name):
                rows = instance_rows.rows(stored(instance), NOW, LIVE)
                self.assertEqual(instance['nova_object.data']['uuid'],
                                 rows.uuid)

    def test_tags_are_written_once_each(self):
        (instance,) = stored_instances('password_hints_tags')
        rows = instance_rows.rows(stored(instance), NOW, LIVE)
        tags = [tag['tag'] for tag in rows.by_table['tags']]
        self.assertTrue(tags)
        self.assertEqual(sorted(set(tags)), tags)

    def test_cellboot_s_zone_wins_only_when_it_has_one(self):
        (instance,) = stored_instances('single')
        instance['nova_object.data']['availability_zone'] = 'asked'
        placed = instance_rows.state('active', None, 'h', 'h', NOW, 'az2')
        unzoned = instance_rows.state('active', None, 'h', 'h', NOW, None)
        self.assertEqual(['az2', 'asked'], [
            instance_rows.rows(stored(instance), NOW, live).by_table[
                'instances'][0]['availability_zone']
            for live in (placed, unzoned)])

    def test_a_fault_shows_its_details_only_where_nova_hides_them(self):
        hidden = instance_rows.fault('u', 500, 'No valid host', 'trace',
                                     'h', NOW)
        shown = instance_rows.fault('u', 400, 'Refused' + 'x' * 300,
                                    'internal', 'h', NOW)
        self.assertEqual(('trace', None, 255),
                         (hidden['details'], shown['details'],
                          len(shown['message'])))


class HostileBuildRequestsTest(base.TestCase):
    """A stored build request that is not nova-api's is not mirrored."""

    def _refused(self, text, where):
        error = self.assertRaises(primitives.Malformed, instance_rows.rows,
                                  text, NOW, LIVE)
        self.assertIn(where, str(error))
        return error

    def _changed(self, **fields):
        (instance,) = stored_instances('single')
        instance = copy.deepcopy(instance)
        instance['nova_object.data'].update(fields)
        return stored(instance)

    def test_not_json_or_too_large(self):
        self._refused('{"nova_object.name": ', 'not JSON')
        self._refused(None, 'at most')
        self._refused(' ' * (instance_rows.MAX_STORED + 1), 'at most')

    def test_another_object_or_major_version(self):
        (instance,) = stored_instances('single')
        for field, value in (('nova_object.name', 'Migration'),
                             ('nova_object.version', '3.0'),
                             ('nova_object.namespace', 'evil')):
            self._refused(stored(dict(instance, **{field: value})),
                          'build request instance')

    def test_fields_of_the_wrong_type_or_size(self):
        for fields, where in (
                ({'memory_mb': 'lots'}, 'memory_mb'),
                ({'display_name': 'x' * 256}, 'display_name'),
                ({'hostname': 'a\u0000b'}, 'hostname'),
                ({'user_data': 'x' * (instance_rows.LONG_TEXT + 1)},
                 'user_data'),
                ({'progress': 101}, 'progress'),
                ({'locked': 'yes'}, 'locked'),
                ({'metadata': {f'k{i}': 'v' for i in range(129)}},
                 'metadata'),
                ({'created_at': '1 January'}, 'created_at'),
                ({'created_at': '2026-13-45T99:99:99Z'}, 'created_at'),
                ({'uuid': 'not-a-uuid'}, 'uuid')):
            error = self._refused(self._changed(**fields), where)
            # The message names the place, never the value.
            self.assertNotIn('lots', str(error))

    def test_what_is_missing(self):
        (instance,) = stored_instances('single')
        del instance['nova_object.data']['flavor']
        self._refused(stored(instance), 'flavor')
