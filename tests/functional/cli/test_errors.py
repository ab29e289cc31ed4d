"""Errors every command shares: token, URL, reachability, usage."""

import os
import socket
import subprocess
import sys

import fixtures

from cellboot.cli import exit_codes
from tests.functional.cli import base
from tests import base as test_base


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class SharedErrorsTest(base.CLITestCase):

    def test_no_token_is_a_usage_error_not_an_empty_table(self):
        self.useFixture(fixtures.EnvironmentVariable('CELLBOOT_TOKEN'))
        result = self.cli('server', 'list', token=None)
        self.assertOneLineError(result, exit_codes.USAGE, 'no token',
                                '--token')
        self.assertEqual('', result.out)

    def test_a_token_without_a_project_is_a_usage_error(self):
        result = self.cli('server', 'list', token='alice')
        self.assertOneLineError(result, exit_codes.USAGE, 'USER:PROJECT')

    def test_a_url_that_is_not_the_api_is_an_error(self):
        result = self.cli('server', 'list',
                          url=self.deployment.url.replace('/v2.1', ''))
        self.assertNotEqual(0, result.code, result)
        self.assertOneLineError(result, result.code)

    def test_an_unknown_command_is_a_usage_error(self):
        result = self.cli('server', 'reboot')
        self.assertOneLineError(result, exit_codes.USAGE, 'reboot')


class UnreachableAPITest(test_base.TestCase):
    """No deployment: the console script as a user runs it."""

    def _run(self, *args, env=None, token='alice:demo'):
        env = dict(os.environ if env is None else env)
        env.pop('CELLBOOT_TOKEN', None)
        if token is not None:
            env['CELLBOOT_TOKEN'] = token
        return subprocess.run(
            [sys.executable, '-m', 'cellboot.cmd.cellboot', *args],
            capture_output=True, text=True, timeout=60, env=env)

    def test_without_a_token_a_command_is_refused_before_any_request(self):
        url = f'http://127.0.0.1:{_free_port()}/v2.1'
        for command in (('server', 'list'), ('flavor', 'list'),
                        ('flow', 'list')):
            process = self._run('--url', url, *command, token=None)
            self.assertEqual(exit_codes.USAGE, process.returncode)
            self.assertEqual('', process.stdout)
            (line,) = process.stderr.splitlines()
            self.assertIn('no token', line)
            self.assertIn('CELLBOOT_TOKEN', line)
            self.assertNotIn('cannot reach', line)

    def test_the_token_comes_from_the_environment(self):
        url = f'http://127.0.0.1:{_free_port()}/v2.1'
        process = self._run('--url', url, 'server', 'list',
                            token='alice:demo')
        self.assertEqual(exit_codes.UNREACHABLE, process.returncode)

    def test_an_api_that_does_not_answer_exits_unreachable(self):
        url = f'http://127.0.0.1:{_free_port()}/v2.1'
        process = self._run('--url', url, 'server', 'list')
        self.assertEqual(exit_codes.UNREACHABLE, process.returncode)
        self.assertEqual([f'ERROR: cannot reach the cellboot API at {url}: '
                          f'is it running? (set --url or CELLBOOT_URL)'],
                         process.stderr.splitlines())

    def test_the_url_comes_from_the_environment(self):
        url = f'http://127.0.0.1:{_free_port()}/v2.1'
        process = self._run('server', 'list',
                            env=dict(os.environ, CELLBOOT_URL=url))
        self.assertIn(url, process.stderr)

    def test_a_malformed_url_is_a_usage_error(self):
        process = self._run('--url', 'not a url', 'server', 'list')
        self.assertEqual(exit_codes.USAGE, process.returncode,
                         process.stderr)
        self.assertEqual(1, len(process.stderr.splitlines()))

    def test_help_lists_the_exit_codes(self):
        process = self._run('--help')
        self.assertEqual(0, process.returncode)
        self.assertIn('exit codes:', process.stdout)
