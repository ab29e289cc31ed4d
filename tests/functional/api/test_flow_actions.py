"""``POST /v2.1/os-flows/{flow_id}/action``: an administrator's retry.

Through the REST API of an in-process deployment (SQLite, no jobboard),
whose conductor died while it ran a boot flow (a SIGKILLed process's
pid as owner): the retry answers 202 and hands the flow back; a
conductor of the host finishes it. Every hostile request (malformed or
unknown body, unknown flow, ended flow, live owner, non-admin) is a 4xx
in Nova's error shape and changes nothing.
"""

from cellboot.conf import CONF
from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional.boot import test_flow_retry

UNKNOWN = '0b8f4d9e-5c1a-4e43-9d0f-7a2c6e1b3f55'


class FlowActionTest(test_flow_retry._Deployment, base.TestCase):

    def setUp(self):
        # The API's own deployment, not the mixin's.
        base.TestCase.setUp(self)
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=2))
        self.cluster = self.api.cluster
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)

    def act(self, flow_uuid, body, client=None):
        return (client or self.admin).post(
            f'/os-flows/{flow_uuid}/action', json=body)

    def assertError(self, response, code, fragment):
        self.assertEqual(code, response.status_code, response.text)
        (key,) = response.json()
        error = response.json()[key]
        self.assertEqual(code, error['code'])
        self.assertIn(fragment, error['message'])

    def test_retry_hands_a_stuck_flow_back_to_the_conductors(self):
        flow_uuid, uuids = self.boot_and_kill(
            f'{CONF.host}:{test_flow_retry.sigkilled_pid()}')
        self.plant_failure(flow_uuid)
        response = self.act(flow_uuid, {'retry': None})
        self.assertEqual(202, response.status_code, response.text)
        self.assertEqual(b'', response.content)
        (note,) = self.flow(flow_uuid)['meta']['retries']
        self.assertIn('API user admin', note['by'])
        resumed, _ran = self.restart()
        self.assertEqual(1, resumed)
        self.assertFinished(flow_uuid, uuids)

    def test_bad_bodies_are_400_and_change_nothing(self):
        flow_uuid, _uuids = self.boot_and_kill(
            f'{CONF.host}:{test_flow_retry.sigkilled_pid()}')
        before = (self.flow(flow_uuid), self.generation(flow_uuid))
        for body in ({}, {'reboot': None}, {'retry': {}}, {'retry': 1},
                     {'retry': None, 'abandon': None}, [], 'retry'):
            self.assertError(self.act(flow_uuid, body), 400,
                             'Invalid input')
        for data in (b'{"retry":', b''):
            response = self.admin.request(
                'POST', f'/os-flows/{flow_uuid}/action', data=data,
                headers={'Content-Type': 'application/json'})
            self.assertError(response, 400, 'not valid JSON')
        self.assertEqual(before, (self.flow(flow_uuid),
                                  self.generation(flow_uuid)))

    def test_unknown_or_malformed_flows_are_404(self):
        for flow_id in (UNKNOWN, 'nope', '1%27%20OR%201=1'):
            self.assertError(self.act(flow_id, {'retry': None}), 404,
                             'could not be found')

    def test_refused_flows_are_409_and_change_nothing(self):
        (uuid,) = self.cluster.boot(1)
        self.cluster.wait_for_quiet()
        (done,) = self.cluster.flows(uuid)
        self.assertError(self.act(done['uuid'], {'retry': None}), 409,
                         'it ended SUCCESS')
        owner = f'{CONF.host}:{self.live_pid()}'
        flow_uuid, _uuids = self.boot_and_kill(owner)
        before = self.flow(flow_uuid)
        self.assertError(self.act(flow_uuid, {'retry': None}), 409,
                         f'its conductor {owner} is alive and runs it')
        self.assertEqual(before, self.flow(flow_uuid))
        self.assertEqual('SUCCESS', self.flow(done['uuid'])['state'])

    def test_only_an_administrator_acts_on_a_flow(self):
        flow_uuid, _uuids = self.boot_and_kill(
            f'{CONF.host}:{test_flow_retry.sigkilled_pid()}')
        before = self.flow(flow_uuid)
        for token in (api_fixtures.ALICE_TOKEN, api_fixtures.BOB_TOKEN):
            response = self.act(flow_uuid, {'retry': None},
                                client=self.api.client(token))
            self.assertEqual(403, response.status_code, response.text)
        self.assertEqual(before, self.flow(flow_uuid))
