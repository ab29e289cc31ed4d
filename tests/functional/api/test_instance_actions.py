"""``/servers/{id}/os-instance-actions`` over HTTP, on real builds.

A rescheduled server's history names the host's failure: its owner
reads a sentence, an administrator the host and the driver's words. A
server moved to another cell shows the events of both cells. A server
still a build request, or buried in cell0, answers too; another
project's server, an unknown one and bad paths answer 404 and never a
5xx.
"""

import json
import uuid as uuid_mod

from cellboot.builds import fates
from cellboot.builds import handback
from cellboot.compute import build_records
from cellboot.objects import fault_messages
from cellboot.objects import instance_action
from tests import base
from tests.functional.api import fixtures as api_fixtures

# The bigger host is the scheduler's first choice, so a build goes
# there first and its alternate is host2 (as tests/functional/boot/
# test_reschedule.py).
BIG_HOST1 = {'cell1-host1': {'memory_mb': 16384}}
# cell2's hosts are smaller: a build goes to cell1 first (as
# tests/functional/boot/test_cross_cell.py).
SMALL_CELL2 = {'cell2-host1': {'memory_mb': 4096},
               'cell2-host2': {'memory_mb': 4096}}
HUGE = {'name': 'huge', 'vcpus': 1024, 'ram': 512, 'disk': 1, 'id': 'huge'}
# What an event shows only to administrators.
ADMIN_KEYS = {'host', 'details', 'traceback'}
# What a user must never read: the topology and the services' words.
LEAKS = ('cell1', 'cell2', 'cell0', 'host1', 'host2', 'fake driver',
         'fail_hosts', 'Exception', 'Traceback')


class _ActionsTest(base.TestCase):

    CELLS = 1
    HOST_CAPACITY = BIG_HOST1

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(
            cells=self.CELLS, hosts_per_cell=2,
            host_capacity=self.HOST_CAPACITY))
        self.cluster = self.api.cluster
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.bob = self.api.client(api_fixtures.BOB_TOKEN)
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)

    def boot(self, **extra):
        response = self.alice.boot(**extra)
        self.assertEqual(202, response.status_code, response.text)
        self.cluster.wait_for_quiet()
        return response.json()['server']['id']

    def actions(self, client, uuid):
        response = client.get(f'/servers/{uuid}/os-instance-actions')
        self.assertEqual(200, response.status_code, response.text)
        return response.json()['instanceActions']

    def action(self, client, uuid, request_id):
        response = client.get(
            f'/servers/{uuid}/os-instance-actions/{request_id}')
        self.assertEqual(200, response.status_code, response.text)
        return response.json()['instanceAction']

    def create_action(self, client, uuid):
        (listed,) = self.actions(client, uuid)
        self.assertEqual(('create', uuid),
                         (listed['action'], listed['instance_uuid']))
        return self.action(client, uuid, listed['request_id'])

    def assertNoLeak(self, body):
        text = json.dumps(body)
        for leak in LEAKS:
            self.assertNotIn(leak, text, leak)
        for event in body.get('events', ()):
            self.assertEqual(set(), ADMIN_KEYS & set(event), event)


class RescheduledServerTest(_ActionsTest):

    def setUp(self):
        super().setUp()
        self.flags(fail_hosts=['cell1-host1'], group='fake_driver')
        self.uuid = self.boot()

    def test_the_owner_reads_why_without_host_or_details(self):
        (listed,) = self.actions(self.alice, self.uuid)
        self.assertEqual(
            {'action', 'instance_uuid', 'request_id', 'user_id',
             'project_id', 'start_time', 'message', 'updated_at'},
            set(listed))
        self.assertEqual(('alice', 'project-a'),
                         (listed['user_id'], listed['project_id']))
        # One of its steps failed, so the action says Error (as Nova).
        self.assertEqual(instance_action.RESULT_ERROR, listed['message'])
        action = self.action(self.alice, self.uuid, listed['request_id'])
        events = [(event['event'], event['result'], event['message'])
                  for event in action['events']]
        self.assertEqual(
            [(build_records.EVENT_BUILD, 'Error',
              fault_messages.HOST_FAILED),
             (fates.RESCHEDULE_EVENT, 'Success',
              fault_messages.RESCHEDULED),
             (build_records.EVENT_BUILD, 'Success', None)], events)
        self.assertNoLeak(action)

    def test_an_admin_reads_the_host_and_the_drivers_words(self):
        action = self.create_action(self.admin, self.uuid)
        failed, rescheduled, built = action['events']
        self.assertEqual('cell1-host1', failed['host'])
        self.assertIn('fails every build on cell1-host1', failed['details'])
        self.assertEqual('cell1-host2', rescheduled['host'])
        self.assertIn('Rescheduled to host cell1-host2 after the build '
                      'failed on host cell1-host1', rescheduled['details'])
        self.assertIn('fail_hosts', rescheduled['details'])
        self.assertEqual(('cell1-host2', None),
                         (built['host'], built['details']))
        for event in action['events']:
            self.assertIsNotNone(event['start_time'])
            self.assertIsNotNone(event['finish_time'])

    def test_another_project_reads_nothing(self):
        request_id = self.actions(self.alice, self.uuid)[0]['request_id']
        for path in (f'/servers/{self.uuid}/os-instance-actions',
                     f'/servers/{self.uuid}/os-instance-actions/'
                     f'{request_id}'):
            response = self.bob.get(path)
            self.assertEqual(404, response.status_code, path)
            self.assertEqual(
                f'Server {self.uuid} could not be found.',
                response.json()['itemNotFound']['message'])

    def test_hostile_paths_answer_404_or_405(self):
        request_id = self.actions(self.alice, self.uuid)[0]['request_id']
        base_path = f'/servers/{self.uuid}/os-instance-actions'
        for path in (f'/servers/{uuid_mod.uuid4()}/os-instance-actions',
                     '/servers/not-a-uuid/os-instance-actions',
                     f'{base_path}/req-{uuid_mod.uuid4()}',
                     f'{base_path}/{"x" * 300}',
                     f'{base_path}/%ff%fe',
                     f'{base_path}/{request_id}/extra',
                     f'{base_path}/{request_id}/events/1'):
            response = self.alice.get(path)
            self.assertEqual(404, response.status_code, path)
            self.assertIn('itemNotFound', response.json(), path)
        response = self.alice.post(base_path, json={})
        self.assertEqual(405, response.status_code)
        self.assertEqual(0, self.api.app.unexpected)

    def test_bad_pages_answer_400(self):
        base_path = f'/servers/{self.uuid}/os-instance-actions'
        for query in ('?limit=0', '?limit=x', '?marker=req-unknown'):
            response = self.alice.get(base_path + query)
            self.assertEqual(400, response.status_code, query)
            self.assertIn('badRequest', response.json(), query)
        response = self.alice.get(base_path + '?limit=1')
        self.assertEqual(1, len(response.json()['instanceActions']))


class MovedServerTest(_ActionsTest):

    CELLS = 2
    HOST_CAPACITY = SMALL_CELL2

    def setUp(self):
        super().setUp()
        self.flags(fail_hosts=['cell1-host1', 'cell1-host2'],
                   group='fake_driver')
        self.uuid = self.boot()

    def test_an_admin_reads_the_events_of_both_cells(self):
        shown = self.admin.get(f'/servers/{self.uuid}').json()['server']
        self.assertEqual(('ACTIVE', 'cell2'),
                         (shown['status'], shown['cellboot:cell']))
        action = self.create_action(self.admin, self.uuid)
        events = {event['event']: event for event in action['events']}
        handed_back = events['cell1:' + handback.HANDBACK_EVENT]
        self.assertIn('cell1-host', handed_back['details'])
        self.assertIn('fail_hosts', handed_back['details'])
        self.assertIn('cell1:' + fates.RESCHEDULE_EVENT, events)
        self.assertIn('cell1:' + build_records.EVENT_BUILD, events)
        self.assertEqual('Success',
                         events[build_records.EVENT_BUILD]['result'])
        self.assertTrue(events[build_records.EVENT_BUILD][
            'host'].startswith('cell2-host'))

    def test_the_owner_reads_why_it_moved_without_cell_names(self):
        action = self.create_action(self.alice, self.uuid)
        events = [(event['event'], event['message'])
                  for event in action['events']]
        self.assertIn((handback.HANDBACK_EVENT, fault_messages.HANDED_BACK),
                      events)
        self.assertIn((build_records.EVENT_BUILD, fault_messages.HOST_FAILED),
                      events)
        self.assertIn((build_records.EVENT_BUILD, None), events)
        self.assertNoLeak(action)


class UnplacedServerTest(_ActionsTest):
    """A server with no cell yet, and one buried in cell0."""

    def test_a_build_request_has_no_action_yet(self):
        # Persisted as the API does, never cast: it stays a build request.
        (build_request,), _specs = self.cluster.build_request()
        uuid = build_request['instance_uuid']
        self.assertEqual('BUILD', self.admin.get(
            f'/servers/{uuid}').json()['server']['status'])
        self.assertEqual([], self.actions(self.admin, uuid))
        response = self.admin.get(
            f'/servers/{uuid}/os-instance-actions/req-{uuid_mod.uuid4()}')
        self.assertEqual(404, response.status_code)

    def test_a_server_in_cell0_shows_why_no_host_took_it(self):
        self.flags(cores=-1, ram=-1, group='quota')
        self.admin.post('/flavors', json={'flavor': HUGE})
        uuid = self.boot(flavor='huge')
        self.assertEqual(('cell0', 'ERROR'), (
            self.admin.get(f'/servers/{uuid}').json()['server'][
                'cellboot:cell'],
            self.alice.get(f'/servers/{uuid}').json()['server']['status']))
        action = self.create_action(self.alice, uuid)
        self.assertEqual(instance_action.RESULT_ERROR, action['message'])
        (event,) = action['events']
        self.assertEqual((fates.SCHEDULE_EVENT, 'Error',
                          fault_messages.NO_VALID_HOST),
                         (event['event'], event['result'], event['message']))
        self.assertNoLeak(action)
        (event,) = self.create_action(self.admin, uuid)['events']
        self.assertIn('No valid host', event['details'])
