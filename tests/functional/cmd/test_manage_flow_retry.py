"""``cellboot-manage flows retry``, run as an operator runs it.

An in-process deployment (``cluster``, SQLite, no jobboard) whose
conductor died; the command runs in a process of its own, on the same
host (``[DEFAULT] host``) as the deployment's conductors, and a
conductor of the host started afterwards finishes the flow. The
hostile cases change nothing and print one ERROR line.
"""

import os
import textwrap

from cellboot.conf import CONF
from tests import base
from tests.functional.boot import test_flow_retry
from tests.functional.cmd import base as cmd_base

UNKNOWN = '0b8f4d9e-5c1a-4e43-9d0f-7a2c6e1b3f55'


def write_config(cluster):
    """The command's config file for ``cluster``, on the same host."""
    path = os.path.join(cluster.state_path, 'manage.conf')
    with open(path, 'w') as conf:
        conf.write(textwrap.dedent(f"""\
            [DEFAULT]
            host = {CONF.host}
            state_path = {cluster.state_path}

            [api_database]
            connection = {cluster.api_url}

            [flow_persistence]
            connection = {cluster.flow_url}
            """))
    return path


class ManageFlowRetryTest(test_flow_retry._Deployment, base.TestCase):

    def setUp(self):
        super().setUp()
        self.config_file = write_config(self.cluster)

    def retry(self, *args):
        return cmd_base.run('--config-file', self.config_file, 'flows',
                            'retry', *args)

    def assertError(self, result, code, *fragments):
        self.assertEqual(code, result.code, result)
        self.assertEqual('', result.stdout, result)
        self.assertEqual(1, len(result.stderr_lines), result)
        self.assertTrue(result.stderr_lines[0].startswith('ERROR: '), result)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr_lines[0], result)

    def test_a_failure_flow_is_retried_and_finished_by_a_conductor(self):
        flow_uuid, uuids = self.boot_and_kill(
            f'{CONF.host}:{test_flow_retry.sigkilled_pid()}')
        self.plant_failure(flow_uuid)
        result = self.retry(flow_uuid)
        self.assertEqual(0, result.code, result)
        self.assertIn(f'Flow {flow_uuid} (boot, flow database) was FAILURE; '
                      f'handed to the conductors of host {CONF.host}',
                      result.stdout)
        self.assertIn('Atoms to run again: claim-pool.', result.stdout)
        (note,) = self.flow(flow_uuid)['meta']['retries']
        self.assertTrue(note['by'].startswith('cellboot-manage '), note)
        resumed, ran = self.restart()
        self.assertEqual(1, resumed)
        self.assertFinished(flow_uuid, uuids)

    def test_a_flow_a_live_conductor_owns_is_refused(self):
        owner = f'{CONF.host}:{self.live_pid()}'
        flow_uuid, _uuids = self.boot_and_kill(owner)
        before = self.flow(flow_uuid)
        self.assertError(self.retry(flow_uuid), 3,
                         f'its conductor {owner} is alive and runs it')
        self.assertEqual(before, self.flow(flow_uuid))

    def test_a_flow_that_succeeded_is_refused(self):
        (uuid,) = self.cluster.boot(1)
        self.cluster.wait_for_quiet()
        (flow,) = self.cluster.flows(uuid)
        self.assertError(self.retry(flow['uuid']), 3,
                         'cannot be retried: it ended SUCCESS')

    def test_an_unknown_or_malformed_id_is_refused(self):
        self.assertError(self.retry(UNKNOWN), 1, f'no flow has id {UNKNOWN}')
        # Read as stored: lower case, dashed.
        self.assertError(self.retry(UNKNOWN.upper().replace('-', '')), 1,
                         f'no flow has id {UNKNOWN}')
        for bad in ('not-a-uuid', "1' OR '1'='1", ''):
            self.assertError(self.retry(bad), 2, 'is not a flow id')
        self.assertError(self.retry(), 2, 'FLOW_ID')
