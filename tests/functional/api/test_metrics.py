"""cellboot-api's /metrics counts what the deployment did, for admins only.

Servers are booted through the REST API of an in-process cluster whose
bigger host fails every build, so that the builds sent there are
rescheduled in their cell; the metrics scraped before and after must
differ by exactly what happened. Then the path's hostile side: other
users, other methods, neighbouring paths, all answered in the API's JSON
error shape.
"""

from prometheus_client import parser

from tests import base
from tests.functional.api import fixtures as api_fixtures

FAILING_HOST = 'cell1-host1'
# The bigger host is the scheduler's first choice: every build fails
# there first and is rescheduled to cell1-host2.
BIG_FAILING_HOST = {FAILING_HOST: {'memory_mb': 16384}}
SERVERS = 3
QUIET_TIMEOUT = 30


def scrape(client):
    """``{(sample name, sorted labels): value}`` of a GET /metrics."""
    response = client.get('/metrics', prefix='')
    assert response.status_code == 200, response.text
    samples = {}
    for family in parser.text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = \
                sample.value
    return samples


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


class MetricsCountTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(fail_hosts=[FAILING_HOST], group='fake_driver')
        self.api = self.useFixture(api_fixtures.APIServer(
            cells=1, hosts_per_cell=2, host_capacity=BIG_FAILING_HOST))
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)

    def delta(self, before, after, name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    def test_boots_reschedules_and_atoms_are_counted(self):
        before = scrape(self.admin)
        response = self.alice.boot(count=SERVERS)
        self.assertEqual(202, response.status_code, response.text)
        self.api.cluster.wait_for_quiet(timeout=QUIET_TIMEOUT)
        servers = self.alice.get('/servers/detail').json()['servers']
        self.assertEqual(['ACTIVE'] * SERVERS,
                         [server['status'] for server in servers])
        after = scrape(self.admin)

        def delta(name, **labels):
            return self.delta(before, after, name, **labels)

        self.assertEqual(SERVERS, delta('cellboot_boots_started_total'))
        self.assertEqual(SERVERS, delta('cellboot_boots_ended_total',
                                        result='active'))
        self.assertEqual(0, delta('cellboot_boots_ended_total',
                                  result='error'))
        # One boot flow for the request, one reschedule per build the
        # failing host was sent (the scheduler spreads its choices: not
        # necessarily every one).
        failed = self.api.cluster.handled(FAILING_HOST).count(
            'build_and_run_instance')
        self.assertGreater(failed, 0)
        self.assertEqual(1, delta('cellboot_flows_ended_total',
                                  kind='boot', state='success'))
        self.assertEqual(failed, delta('cellboot_flows_ended_total',
                                       kind='reschedule', state='success'))
        self.assertEqual(1, delta(
            'cellboot_flow_atom_duration_seconds_count', kind='boot',
            atom='schedule', state='success'))
        self.assertEqual(failed, delta(
            'cellboot_flow_atom_duration_seconds_count', kind='reschedule',
            atom='claim-alternate', state='success'))
        self.assertGreater(delta(
            'cellboot_flow_atom_duration_seconds_sum', kind='boot',
            atom='schedule', state='success'), 0)
        # The schedulers' own counters, read at the scrape.
        self.assertEqual(1, delta('cellboot_scheduler_requests_placed_total'))
        self.assertEqual(1, value(after, 'cellboot_cell_usable',
                                  cell='cell1'))
        self.assertEqual(0, value(after, 'cellboot_flows_running',
                                  kind='boot'))
        self.assertEqual(0, delta('cellboot_rpc_cast_failures_total',
                                  method='build_and_run_instance'))

    def test_no_valid_host_is_counted_by_the_step_that_said_no(self):
        before = scrape(self.admin)
        response = self.alice.boot(server={'availability_zone': 'nowhere'})
        self.assertEqual(202, response.status_code, response.text)
        self.api.cluster.wait_for_quiet(timeout=QUIET_TIMEOUT)
        after = scrape(self.admin)
        self.assertEqual(1, self.delta(before, after,
                                       'cellboot_boots_ended_total',
                                       result='error'))
        counted = {key: after[key] - before.get(key, 0) for key in after
                   if key[0] == 'cellboot_scheduler_no_valid_host_total'
                   and after[key] != before.get(key, 0)}
        self.assertEqual(1, sum(counted.values()), counted)
        (_name, labels), = counted
        # No cell is in that zone: the API level's zone filter said no.
        self.assertEqual({'level': 'api', 'reason': 'AvailabilityZoneFilter'},
                         dict(labels))


class MetricsPathTest(api_fixtures.OneHostAPITest):
    """Who may read /metrics, and what else the path answers."""

    def setUp(self):
        super().setUp()
        self.nobody = self.api.client(None)

    def tearDown(self):
        # Nothing of this test may reach the catch-all 500.
        self.assertEqual(0, self.api.app.unexpected)
        super().tearDown()

    def assertError(self, response, code, key):
        self.assertEqual(code, response.status_code, response.text)
        self.assertEqual('application/json',
                         response.headers['Content-Type'].split(';')[0])
        self.assertIn('message', response.json()[key])
        self.assertNotIn('Traceback', response.text)

    def test_an_admin_reads_the_text_format(self):
        response = self.admin.get('/metrics', prefix='')
        self.assertEqual(200, response.status_code)
        self.assertTrue(response.headers['Content-Type'].startswith(
            'text/plain'))
        self.assertIn('# TYPE cellboot_boots_started_total counter',
                      response.text)
        head = self.admin.request('HEAD', '/metrics', prefix='')
        self.assertEqual(200, head.status_code)
        self.assertEqual(b'', head.content)

    def test_any_accept_header_gets_an_answer(self):
        for accept, media_type in (
                ('application/openmetrics-text; version=1.0.0',
                 'application/openmetrics-text'),
                ('application/openmetrics-text; version=abc', 'text/plain'),
                ('text/plain; version=x.y', 'text/plain'),
                ('*/*;q=zz', 'text/plain')):
            response = self.admin.get('/metrics', prefix='',
                                      headers={'Accept': accept})
            self.assertEqual(200, response.status_code, accept)
            self.assertEqual(media_type, response.headers[
                'Content-Type'].split(';')[0], accept)
            self.assertIn('cellboot_boots_started', response.text)

    def test_a_user_or_nobody_may_not(self):
        self.assertError(self.alice.get('/metrics', prefix=''), 403,
                         'forbidden')
        self.assertError(self.nobody.get('/metrics', prefix=''), 401,
                         'unauthorized')

    def test_other_methods_are_refused(self):
        for method in ('POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'FOO'):
            response = self.admin.request(method, '/metrics', prefix='',
                                          data=b'{}')
            self.assertError(response, 405, 'badMethod')
            self.assertEqual('GET, HEAD, OPTIONS', response.headers['Allow'])
        response = self.admin.request('OPTIONS', '/metrics', prefix='')
        self.assertEqual(204, response.status_code)
        self.assertEqual('GET, HEAD, OPTIONS', response.headers['Allow'])

    def test_neighbouring_paths_are_not_found(self):
        for path in ('/metrics/x', '/metricsx', '/v2.1/metrics',
                     '/metrics/%ff', '/metrics;x'):
            self.assertError(self.admin.get(path, prefix=''), 404,
                             'itemNotFound')

    def test_it_can_be_switched_off(self):
        self.flags(api_endpoint=False, group='metrics')
        self.assertError(self.admin.get('/metrics', prefix=''), 404,
                         'itemNotFound')


class HealthcheckPathTest(base.TestCase):
    """/healthcheck on the API's own server: no token needed."""

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=1))
        self.nobody = self.api.client(None)

    def test_healthy_and_unauthenticated(self):
        response = self.nobody.get('/healthcheck', prefix='',
                                   headers={'Accept': 'application/json'})
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual(['API database: OK',
                          'message broker: OK (the in-process bus)'],
                         response.json()['reasons'])
        response = self.nobody.request('DELETE', '/healthcheck', prefix='')
        self.assertEqual(405, response.status_code)
        self.assertIn('badMethod', response.json())
        self.assertEqual(404, self.nobody.get('/v2.1/healthcheck',
                                              prefix='').status_code)
        self.assertEqual(0, self.api.app.unexpected)
