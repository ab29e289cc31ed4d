"""A failed server's fault: a sentence for its owner, the rest for admins.

Users never read a host name, a cell name, an exception class or SQL
text in ``fault``, whoever wrote it (this version's services, or an
older one whose rows are still in the cell databases); administrators
read the fault as written and its ``details``.
"""

import json

from cellboot.conf import fake_driver
from cellboot import context as cb_context
from cellboot.objects import fault_messages
from cellboot.objects import instance_fault
from tests import base
from tests.functional.api import fixtures as api_fixtures

HOSTS = ('cell1-host1', 'cell1-host2')
HUGE = {'name': 'huge', 'vcpus': 1024, 'ram': 512, 'disk': 1, 'id': 'huge'}
# What a user must never read: the topology and the internals.
LEAKS = HOSTS + ('cell1', 'cell0', 'Error', 'Exception', 'Failure',
                 'SELECT', 'sqlalchemy', 'pymysql', 'VCPU', 'Filter',
                 'host(s)')
# A fault as an older version wrote it: the operator's text in message.
LEGACY = ("Build of instance {uuid} on host cell1-host1 failed: "
          "(pymysql.err.OperationalError) (2013, 'Lost connection') "
          "[SQL: SELECT instances.uuid FROM instances] in cell cell1")


class FaultRedactionTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(fail_hosts=list(HOSTS), fail_mode=fake_driver.ABORT,
                   group='fake_driver')
        # The huge flavor must reach the scheduler, not the quota check.
        self.flags(cores=-1, ram=-1, group='quota')
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=2))
        self.cluster = self.api.cluster
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)

    def boot_to_error(self, **extra):
        response = self.alice.boot(**extra)
        self.assertEqual(202, response.status_code, response.text)
        self.cluster.wait_for_quiet()
        return response.json()['server']['id']

    def assertNoLeak(self, body):
        text = json.dumps(body)
        for leak in LEAKS:
            self.assertNotIn(leak, text, leak)

    def user_views(self, uuid):
        """The server as its owner sees it: show, and in the listing."""
        shown = self.alice.get(f'/servers/{uuid}').json()['server']
        (listed,) = [server for server in
                     self.alice.get('/servers/detail').json()['servers']
                     if server['id'] == uuid]
        return shown, listed

    def test_a_user_reads_an_aborted_build_without_its_host(self):
        uuid = self.boot_to_error()
        for server in self.user_views(uuid):
            self.assertEqual('ERROR', server['status'])
            self.assertEqual({'code', 'created', 'message'},
                             set(server['fault']))
            self.assertEqual(fault_messages.BUILD_ABORTED,
                             server['fault']['message'])
            self.assertNoLeak(server)

    def test_an_admin_reads_the_host_and_the_reason(self):
        uuid = self.boot_to_error()
        fault = self.admin.get(f'/servers/{uuid}').json()['server']['fault']
        self.assertEqual(fault_messages.BUILD_ABORTED, fault['message'])
        self.assertIn(' on host cell1-host', fault['details'])
        self.assertIn('aborted', fault['details'])

    def test_a_user_reads_no_valid_host_without_the_schedulers_reason(self):
        self.admin.post('/flavors', json={'flavor': HUGE})
        uuid = self.boot_to_error(flavor='huge')
        for server in self.user_views(uuid):
            self.assertEqual(fault_messages.NO_VALID_HOST,
                             server['fault']['message'])
            self.assertNoLeak(server)
        details = self.admin.get(f'/servers/{uuid}').json()[
            'server']['fault']['details']
        self.assertIn('VCPU', details)

    def test_a_fault_an_older_version_wrote_is_safe_for_users(self):
        uuid = self.boot_to_error()
        cell, _instance = self.cluster.find(uuid)
        legacy = LEGACY.format(uuid=uuid)
        with cb_context.target_cell(self.cluster.ctx, cell) as cctxt:
            instance_fault.InstanceFault.create(
                cctxt, uuid, 500, legacy, details='Traceback ...',
                host='cell1-host1')
        for server in self.user_views(uuid):
            self.assertEqual(fault_messages.INTERNAL_ERROR,
                             server['fault']['message'])
            self.assertNoLeak(server)
        fault = self.admin.get(f'/servers/{uuid}').json()['server']['fault']
        self.assertEqual((legacy[:255], 'Traceback ...'),
                         (fault['message'], fault['details']))

    def test_older_reschedule_and_no_host_faults_keep_their_meaning(self):
        uuid = self.boot_to_error()
        cell, _instance = self.cluster.find(uuid)
        older = {
            'Exceeded maximum number of retries. Exhausted the alternate '
            'hosts of its cell; last failure: Build of instance x on host '
            'cell1-host2 failed': fault_messages.RETRIES_EXCEEDED,
            'No valid host was found. 0 of 2 host(s) in 1 cell(s) passed '
            'ComputeFilter': fault_messages.NO_VALID_HOST,
        }
        for message, expected in older.items():
            with cb_context.target_cell(self.cluster.ctx, cell) as cctxt:
                instance_fault.InstanceFault.create(cctxt, uuid, 500,
                                                    message)
            for server in self.user_views(uuid):
                self.assertEqual(expected, server['fault']['message'])
                self.assertNoLeak(server)
