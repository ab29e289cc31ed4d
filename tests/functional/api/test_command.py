"""``cellboot-api`` as an operator runs it, and the keystone strategy."""

import os
import signal
import socket
import textwrap
import time

import requests

from cellboot.api import wsgi
from cellboot.db import migration
from cellboot import exception
from tests import base
from tests.functional import commands

# Seconds the command may take to start, or to stop once told.
TIMEOUT = 60


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class APICommandTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api_url = 'sqlite:///' + os.path.join(self.state_path,
                                                   'api.sqlite')
        migration.db_sync('api', self.api_url)
        self.port = free_port()

    def _config(self, auth_strategy='noauth2'):
        path = os.path.join(self.state_path, 'cellboot.conf')
        with open(path, 'w') as conf:
            conf.write(textwrap.dedent(f'''
                [DEFAULT]
                state_path = {self.state_path}
                transport_url = fake://
                [api_database]
                connection = {self.api_url}
                [api]
                listen_port = {self.port}
                auth_strategy = {auth_strategy}
                '''))
        return path

    def _run(self, *args):
        return commands.start_module(self, 'cellboot.cmd.api', *args)

    def _get(self, path, **kwargs):
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                return requests.get(
                    f'http://127.0.0.1:{self.port}/v2.1{path}', timeout=5,
                    **kwargs)
            except requests.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def test_it_serves_the_api_and_stops_on_sigterm(self):
        process = self._run('--config-file', self._config())
        self.assertEqual(200, self._get('/').status_code)
        response = self._get('/servers',
                             headers={'X-Auth-Token': 'alice:project-a'})
        self.assertEqual({'servers': []}, response.json())
        process.send_signal(signal.SIGTERM)
        self.assertEqual(0, process.wait(TIMEOUT))

    def test_the_port_option_overrides_the_configuration(self):
        config = self._config()
        self.port = free_port()
        process = self._run('--config-file', config, '--port', str(self.port))
        self.assertEqual(200, self._get('/').status_code)
        process.send_signal(signal.SIGTERM)
        self.assertEqual(0, process.wait(TIMEOUT))

    def test_keystone_without_keystonemiddleware_is_one_clear_line(self):
        process = self._run('--config-file',
                            self._config(auth_strategy='keystone'))
        _out, err = process.communicate(timeout=TIMEOUT)
        self.assertEqual(1, process.returncode)
        self.assertEqual(1, len(err.strip().splitlines()), err)
        self.assertIn('cellboot[keystone]', err)
        self.assertNotIn('Traceback', err)

    def test_a_port_in_use_is_one_clear_line(self):
        with socket.socket() as taken:
            taken.bind(('127.0.0.1', self.port))
            taken.listen()
            process = self._run('--config-file', self._config())
            _out, err = process.communicate(timeout=TIMEOUT)
        self.assertEqual(1, process.returncode)
        self.assertIn(f'cannot listen on 127.0.0.1:{self.port}', err)
        self.assertNotIn('Traceback', err)


class KeystoneStrategyTest(base.TestCase):

    def test_selecting_keystone_without_the_extra_says_how_to_install(self):
        try:
            import keystonemiddleware  # noqa: F401
            self.skipTest('keystonemiddleware is installed')
        except ImportError:
            pass
        error = self.assertRaises(exception.ConfigurationError,
                                  wsgi.make_app, None, conductor=object(),
                                  strategy='keystone')
        self.assertIn('pip install "cellboot[keystone]"', str(error))
