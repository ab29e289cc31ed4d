"""``cellboot-manage flows abandon``, run as an operator runs it.

The deployment of ``test_manage_flow_retry`` (in-process, SQLite, no
jobboard; the command in a process of its own on the conductors' host)
whose conductor was SIGKILLed. The abandon prints what will happen to
the servers, ``flows show`` prints the note, the sweep settles the
servers. Hostile command lines change nothing and print one ERROR line.
"""

from cellboot.conf import CONF
from tests import base
from tests.functional.boot import test_flow_abandon
from tests.functional.boot import test_flow_retry
from tests.functional.cmd import base as cmd_base
from tests.functional.cmd import test_manage_flow_retry as retry_cmd

UNKNOWN = retry_cmd.UNKNOWN


class ManageFlowAbandonTest(test_flow_retry._Deployment, base.TestCase):

    # The retry command's helper, not its tests.
    assertError = retry_cmd.ManageFlowRetryTest.assertError

    def setUp(self):
        super().setUp()
        self.config_file = retry_cmd.write_config(self.cluster)

    def manage(self, *args):
        return cmd_base.run('--config-file', self.config_file, 'flows',
                            *args)

    def test_a_stuck_flow_is_abandoned_shown_and_settled(self):
        flow_uuid, uuids = self.boot_and_kill(
            f'{CONF.host}:{test_flow_retry.sigkilled_pid()}')
        result = self.manage('abandon', flow_uuid, '--reason',
                             'ticket 42: the tenant gave up')
        self.assertEqual(0, result.code, result)
        self.assertIn(f'Flow {flow_uuid} (boot, flow database) was RUNNING; '
                      f'it is abandoned (FAILURE, never resumed).',
                      result.stdout)
        self.assertIn("settled by the super conductors' next sweep",
                      result.stdout)
        note = self.flow(flow_uuid)['abandoned']
        self.assertTrue(note['by'].startswith('cellboot-manage '), note)
        self.assertEqual('ticket 42: the tenant gave up', note['reason'])

        shown = self.manage('show', flow_uuid)
        self.assertEqual(0, shown.code, shown)
        self.assertIn('  Abandoned: ', shown.stdout)
        self.assertIn('from RUNNING', shown.stdout)
        self.assertIn('    Reason: ticket 42: the tenant gave up; instances '
                      'settled: by the sweeps', shown.stdout)

        test_flow_abandon.assert_settled_by_sweep(self, uuids)
        # Ended now: both actions are refused (exit 3).
        self.assertError(self.manage('abandon', flow_uuid), 3,
                         'cannot be abandoned: it ended: cellboot-manage')
        self.assertError(self.manage('retry', flow_uuid), 3,
                         'cannot be retried: it ended: cellboot-manage')

    def test_a_flow_a_live_conductor_owns_is_refused(self):
        owner = f'{CONF.host}:{self.live_pid()}'
        flow_uuid, _uuids = self.boot_and_kill(owner)
        before = self.flow(flow_uuid)
        self.assertError(self.manage('abandon', flow_uuid), 3,
                         f'its conductor {owner} is alive and runs it')
        self.assertEqual(before, self.flow(flow_uuid))

    def test_hostile_command_lines_are_refused(self):
        flow_uuid, _uuids = self.boot_and_kill(
            f'{CONF.host}:{test_flow_retry.sigkilled_pid()}')
        before = self.flow(flow_uuid)
        self.assertError(self.manage('abandon', UNKNOWN), 1,
                         f'no flow has id {UNKNOWN}')
        for bad in ('not-a-uuid', "1' OR '1'='1", ''):
            self.assertError(self.manage('abandon', bad), 2,
                             'is not a flow id')
        self.assertError(self.manage('abandon'), 2, 'FLOW_ID')
        for reason, why in (('x' * 256, 'longer than 255'),
                            ('two\nlines', 'control characters'),
                            ('esc\x1b[2J', 'control characters')):
            self.assertError(self.manage('abandon', flow_uuid, '--reason',
                                         reason), 2, why)
        self.assertEqual(before, self.flow(flow_uuid))

    def test_the_help_says_what_happens_and_when_it_is_refused(self):
        result = self.manage('abandon', '--help')
        self.assertEqual(0, result.code, result)
        text = ' '.join(result.stdout.split())
        for fragment in ('FAILURE', 'buried in cell0', 'ERROR',
                         'claims', 'Refused', 'another host', '--reason',
                         '3'):
            self.assertIn(fragment, text)
