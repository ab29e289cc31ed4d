"""``POST /v2.1/os-flows/{flow_id}/action {"abandon": ...}``.

Through the REST API of an in-process deployment (SQLite, no jobboard)
whose conductor was SIGKILLed while it ran a boot flow: the abandon
answers 202, the flow is FAILURE with its note (shown by ``GET
/os-flows/{id}``), the super conductors' next sweep settles the servers
with the abandon's fault. Every hostile body is a 400 that changes
nothing; an unknown flow a 404; an ended, abandoned or live flow a 409.
"""

from cellboot.conductor import orphans
from cellboot.conf import CONF
from cellboot.flowrun import abandons
from cellboot.objects import fault_messages
from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional.api import test_flow_actions
from tests.functional.boot import test_flow_retry
from tests.functional import invariants
from tests.functional.sweepers import test_orphan_build_requests

UNKNOWN = test_flow_actions.UNKNOWN


class FlowAbandonTest(test_flow_retry._Deployment, base.TestCase):

    # The retry's tests' deployment and helpers, not their tests.
    setUp = test_flow_actions.FlowActionTest.setUp
    act = test_flow_actions.FlowActionTest.act
    assertError = test_flow_actions.FlowActionTest.assertError

    def stuck_flow(self):
        return self.boot_and_kill(
            f'{CONF.host}:{test_flow_retry.sigkilled_pid()}')

    def test_abandon_ends_the_flow_and_the_sweep_settles_its_servers(self):
        flow_uuid, uuids = self.stuck_flow()
        response = self.act(flow_uuid,
                            {'abandon': {'reason': 'Ticket #42: give up'}})
        self.assertEqual(202, response.status_code, response.text)
        self.assertEqual(b'', response.content)
        shown = self.admin.get(f'/os-flows/{flow_uuid}').json()['flow']
        self.assertEqual('FAILURE', shown['state'])
        note = shown['abandoned']
        self.assertIn('API user admin', note['by'])
        self.assertEqual(('Ticket #42: give up', 'RUNNING', None),
                         (note['reason'], note['from_state'],
                          note['settled_at']))
        self.assertEqual(note, dict(shown['meta']['abandoned'],
                                    settled_at=None))
        self.assertEqual([], shown['retries'])

        test_orphan_build_requests._age(
            CONF.conductor.unstarted_build_request_timeout + 1)
        done = orphans.OrphanBuildRequests(
            self.cluster.super_conductor).sweep_once(self.cluster.ctx)
        self.assertEqual(2, done['settled'])
        message = abandons.fault_message(flow_uuid, note)
        self.assertEqual(
            [('error', fault_messages.BUILD_ABANDONED, message, {})] * 2,
            [(self.cluster.find(uuid)[1].vm_state,
              self.cluster.fault(uuid).message,
              self.cluster.fault(uuid).details,
              self.cluster.allocations(uuid)) for uuid in uuids])
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))
        # Ended: a second abandon, or a retry, is a 409.
        for body in ({'abandon': None}, {'retry': None}):
            self.assertError(self.act(flow_uuid, body), 409,
                             'it ended: API user admin')

    def test_abandon_without_a_reason(self):
        flow_uuid, _uuids = self.stuck_flow()
        self.assertEqual(202, self.act(flow_uuid,
                                       {'abandon': None}).status_code)
        note = self.flow(flow_uuid)['abandoned']
        self.assertIsNone(note['reason'])
        flow_uuid, _uuids = self.stuck_flow()
        self.assertEqual(202, self.act(flow_uuid,
                                       {'abandon': {}}).status_code)

    def test_hostile_abandon_bodies_are_400_and_change_nothing(self):
        flow_uuid, _uuids = self.stuck_flow()
        before = (self.flow(flow_uuid), self.generation(flow_uuid))
        for body in ({'abandon': 'now'}, {'abandon': 1}, {'abandon': []},
                     {'abandon': {'reason': 42}},
                     {'abandon': {'reason': None}},
                     {'abandon': {'reason': ['a']}},
                     {'abandon': {'reason': 'x' * 256}},
                     {'abandon': {'reason': 'two\nlines'}},
                     {'abandon': {'reason': 'esc\u001b[2J'}},
                     {'abandon': {'reason': 'c1\u0085'}},
                     {'abandon': {'reason': 'sep\u2028'}},
                     {'abandon': {'reason': 'ok', 'force': True}},
                     {'abandon': None, 'retry': None},
                     {'abandon': None, 'reboot': None},
                     {'Abandon': None}, {'abandon ': None}):
            self.assertError(self.act(flow_uuid, body), 400,
                             'Invalid input')
        self.assertError(self.act(flow_uuid, {'abandon': {
            'reason': 'nul\u0000'}}), 400, 'holds a NUL character')
        self.assertEqual(before, (self.flow(flow_uuid),
                                  self.generation(flow_uuid)))

    def test_abandon_of_unknown_or_malformed_flows_is_404(self):
        for flow_id in (UNKNOWN, 'nope', '1%27%20OR%201=1'):
            self.assertError(self.act(flow_id, {'abandon': None}), 404,
                             'could not be found')

    def test_refused_abandons_are_409_and_change_nothing(self):
        (uuid,) = self.cluster.boot(1)
        self.cluster.wait_for_quiet()
        (done,) = self.cluster.flows(uuid)
        self.assertError(self.act(done['uuid'], {'abandon': None}), 409,
                         'cannot be abandoned: it ended SUCCESS')
        owner = f'{CONF.host}:{self.live_pid()}'
        flow_uuid, _uuids = self.boot_and_kill(owner)
        before = self.flow(flow_uuid)
        self.assertError(self.act(flow_uuid, {'abandon': None}), 409,
                         f'its conductor {owner} is alive and runs it')
        self.assertEqual(before, self.flow(flow_uuid))

    def test_only_an_administrator_abandons_a_flow(self):
        flow_uuid, _uuids = self.stuck_flow()
        before = self.flow(flow_uuid)
        for token in (api_fixtures.ALICE_TOKEN, api_fixtures.BOB_TOKEN):
            response = self.act(flow_uuid, {'abandon': None},
                                client=self.api.client(token))
            self.assertEqual(403, response.status_code, response.text)
        self.assertEqual(before, self.flow(flow_uuid))
