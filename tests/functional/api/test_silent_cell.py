"""One silent cell: the API answers within its cell timeout, and says so.

The silent cell is a TCP listener that accepts connections and never
says a word (a hung or partitioned MySQL server). A server in it answers
a JSON 503 with Retry-After, listings show it UNKNOWN, flow listings
name the cell, and the threads that were left waiting on it end with the
driver's read timeout instead of piling up.
"""

import threading
import time

from oslo_utils import uuidutils

from cellboot.objects import cell_mapping
from cellboot.objects import instance_mapping
from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional import test_scatter_gather as sg

CELL_TIMEOUT = 1.0
READ_TIMEOUT = 3
# Thread start-up and a loaded machine's scheduling.
MARGIN = 4.0


class SilentCellTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(cell_timeout=CELL_TIMEOUT, list_cell_timeout=CELL_TIMEOUT,
                   cell_read_timeout=READ_TIMEOUT, group='api')
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=1))
        self.cluster = self.api.cluster
        # Only the API's own reads of the silent cell are under test: the
        # API level's scheduler reads the cells' aggregates too.
        self.cluster.scheduler.stop()
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        self.listener = sg.SilentListener()
        self.addCleanup(self.listener.stop)
        ctx = self.cluster.ctx
        self.silent = cell_mapping.CellMapping.create(
            ctx, 'silent', sg.mysql_url(self.listener.port), 'fake://')
        self.uuid = uuidutils.generate_uuid()
        instance_mapping.InstanceMapping.create(
            ctx, self.uuid, 'project-a', user_id='alice',
            cell_uuid=self.silent.uuid)

    def timed(self, call, *args, **kwargs):
        started = time.monotonic()
        response = call(*args, **kwargs)
        return response, time.monotonic() - started

    def assert503(self, response, elapsed, for_users=True):
        self.assertEqual(503, response.status_code, response.text)
        self.assertLess(elapsed, CELL_TIMEOUT + MARGIN)
        self.assertEqual('1', response.headers['Retry-After'])
        message = response.json()['serviceUnavailable']['message']
        self.assertIn('did not answer', message)
        # Users are not told the topology; administrators are.
        (self.assertNotIn if for_users else self.assertIn)('silent',
                                                           message)

    def waiting_threads(self):
        return [thread for thread in threading.enumerate()
                if thread.name == 'scatter-gather-silent']

    def test_showing_a_server_of_the_silent_cell_answers_503(self):
        self.assert503(*self.timed(self.alice.get, f'/servers/{self.uuid}'))

    def test_deleting_a_server_of_the_silent_cell_answers_503(self):
        self.assert503(*self.timed(self.alice.delete,
                                   f'/servers/{self.uuid}'))
        mapping = instance_mapping.InstanceMapping.get_by_instance_uuid(
            self.cluster.ctx, self.uuid)
        self.assertFalse(mapping.queued_for_delete)

    def test_a_listing_shows_the_server_unknown(self):
        response, elapsed = self.timed(self.alice.get, '/servers/detail')
        self.assertEqual(200, response.status_code)
        self.assertLess(elapsed, CELL_TIMEOUT + MARGIN)
        self.assertEqual(
            [(self.uuid, 'UNKNOWN')],
            [(s['id'], s['status']) for s in response.json()['servers']])

    def test_a_sorted_listing_leaves_the_silent_cells_servers_out(self):
        # Their place in the order is unknown; the healthy cell's are
        # listed, within the cell timeout.
        booted = self.alice.boot().json()['server']['id']
        self.cluster.wait_for_quiet()
        response, elapsed = self.timed(self.alice.get,
                                       '/servers?sort_key=display_name')
        self.assertEqual(200, response.status_code, response.text)
        self.assertLess(elapsed, CELL_TIMEOUT + MARGIN)
        self.assertEqual([booted], [s['id'] for s in
                                    response.json()['servers']])

    def test_a_sorted_listing_after_a_silent_cells_marker_answers_503(self):
        self.assert503(*self.timed(
            self.alice.get, f'/servers?sort_key=host&marker={self.uuid}'))

    def test_a_flow_listing_names_the_silent_cell(self):
        response, elapsed = self.timed(self.admin.get, '/os-flows')
        self.assertEqual(200, response.status_code)
        self.assertLess(elapsed, CELL_TIMEOUT + MARGIN)
        self.assertEqual(['cell silent'], response.json()['unreachable'])

    def test_the_provider_listing_names_the_silent_cell(self):
        response, elapsed = self.timed(self.admin.get,
                                       '/os-resource-providers')
        self.assertEqual(200, response.status_code, response.text)
        self.assertLess(elapsed, CELL_TIMEOUT + MARGIN)
        body = response.json()
        self.assertEqual(['silent'], body['unreachable'])
        self.assertEqual({'cell1'}, {item['cell'] for item in
                                     body['resource_providers']})

    def test_a_flow_not_found_elsewhere_answers_503(self):
        self.assert503(*self.timed(
            self.admin.get, f'/os-flows/{uuidutils.generate_uuid()}'),
            for_users=False)

    def test_the_healthy_cell_still_answers_meanwhile(self):
        booted = self.alice.boot().json()['server']['id']
        self.cluster.wait_for_quiet()
        slow = threading.Thread(
            target=self.alice.get, args=(f'/servers/{self.uuid}',))
        slow.start()
        self.addCleanup(slow.join)
        response, elapsed = self.timed(self.alice.get, f'/servers/{booted}')
        self.assertEqual(200, response.status_code)
        self.assertLess(elapsed, CELL_TIMEOUT + MARGIN)

    def test_the_threads_left_waiting_end_with_the_read_timeout(self):
        for _ in range(3):
            self.assertEqual(
                503, self.alice.get(f'/servers/{self.uuid}').status_code)
        deadline = time.monotonic() + READ_TIMEOUT + MARGIN
        while self.waiting_threads() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual([], self.waiting_threads())

    def test_once_found_silent_the_cell_is_not_waited_for_again(self):
        # The first request waits for it; the next ones get its servers
        # UNKNOWN (a show: 503) without waiting, and however many come,
        # one thread at a time reaches for the silent cell.
        first, elapsed = self.timed(self.alice.get, '/servers/detail')
        self.assertEqual(200, first.status_code)
        self.assertGreaterEqual(elapsed, CELL_TIMEOUT)
        for _ in range(5):
            response, elapsed = self.timed(self.alice.get, '/servers/detail')
            self.assertEqual(
                (200, [(self.uuid, 'UNKNOWN')]),
                (response.status_code,
                 [(s['id'], s['status']) for s in response.json()['servers']]))
            self.assertLess(elapsed, CELL_TIMEOUT)
            response, elapsed = self.timed(self.alice.get,
                                           f'/servers/{self.uuid}')
            self.assertEqual(503, response.status_code)
            self.assertLess(elapsed, CELL_TIMEOUT)
        self.assertEqual(1, len(self.waiting_threads()))
