"""A boot whose cast to the super conductor cannot be sent stays accepted.

The rows the API committed are the source of truth: a broker that is
away (a RabbitMQ restart) costs the boot its cast, which the super
conductors' sweep makes up for, never an error to the client. Such an
outage is expected, so the API says so in one WARNING line, without a
traceback; anything else that goes wrong with the cast still gets one.
"""

import oslo_messaging

from cellboot.objects import build_request as build_request_obj
from tests import base
from tests.functional.api import fixtures as api_fixtures

LOGGER = 'cellboot.api.handlers.servers'


class LostCastTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(
            cells=1, hosts_per_cell=1))
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.conductor = self.api.app.api.conductor
        self.addCleanup(setattr, self.conductor,
                        'schedule_and_build_instances',
                        self.conductor.schedule_and_build_instances)

    def _cast_raises(self, error):
        def cast(ctxt, build_requests, request_specs):
            raise error
        self.conductor.schedule_and_build_instances = cast

    def _build_request_kept(self, response):
        self.assertEqual(202, response.status_code, response.text)
        uuid = response.json()['server']['id']
        self.assertEqual(uuid, build_request_obj.BuildRequest.
                         get_by_instance_uuid(self.api.cluster.ctx,
                                              uuid).instance_uuid)
        self.assertEqual(0, self.api.app.unexpected)
        return uuid

    def test_a_broker_that_is_away_costs_one_warning_line(self):
        self._cast_raises(oslo_messaging.MessageDeliveryFailure(
            'Unable to connect to AMQP server'))
        with self.assertLogs(LOGGER, 'WARNING') as log:
            uuid = self._build_request_kept(self.alice.boot())
        (line,) = log.records
        self.assertEqual('WARNING', line.levelname)
        self.assertIsNone(line.exc_info)
        self.assertIn(f"Could not cast the boot of ['{uuid}']",
                      line.getMessage())
        self.assertIn('Unable to connect to AMQP server', line.getMessage())

    def test_any_other_failure_of_the_cast_is_logged_with_its_traceback(self):
        self._cast_raises(RuntimeError('a bug'))
        with self.assertLogs(LOGGER, 'ERROR') as log:
            self._build_request_kept(self.alice.boot())
        (line,) = log.records
        self.assertIsNotNone(line.exc_info)
