"""The API under other WSGI servers: ``cellboot.wsgi.api:application``.

Loaded as a WSGI server loads it (in a process of its own, configured
from the environment), and served by real uWSGI over HTTP, with the
guards (411, nothing written for a rejected request) and a clean stop.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import requests
import sqlalchemy as sa

from cellboot.api import wsgi_app
from cellboot import context as cb_context
from cellboot.db.api import connection as api_connection
from cellboot.db import migration
from cellboot import exception
from cellboot.objects import flavor as flavor_obj
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional.api import test_command
from tests.functional import cluster
from tests.functional.api import raw_http
from tests.functional.api import test_hostile_http as hostile

# Seconds a process may take to start serving, or to exit once told.
START_WITHIN = 120
EXIT_WITHIN = 30

# What a WSGI server does with the module: import it, call
# ``application`` with an environ; here twice, printing both answers.
_LOAD_AND_CALL = '''
import io, json, sys, wsgiref.util
from cellboot.wsgi import api

def call(method, body=None):
    environ = {'REQUEST_METHOD': method, 'PATH_INFO': '/v2.1/servers',
               'HTTP_X_AUTH_TOKEN': 'alice:project-a',
               'SERVER_PROTOCOL': 'HTTP/1.1',
               'wsgi.input': io.BytesIO(body or b'')}
    wsgiref.util.setup_testing_defaults(environ)
    if body is not None:
        environ['CONTENT_LENGTH'] = str(len(body))
        environ['CONTENT_TYPE'] = 'application/json'
    answer = {}
    def start_response(status, headers, exc_info=None):
        answer.update(status=status, headers=dict(headers))
    answer['body'] = json.loads(b''.join(api.application(environ,
                                                         start_response)))
    return answer

print(json.dumps([call('GET'), call('POST'), call('POST', b'{"server": {}}')]))
'''


def _rows(api_url):
    engine = sa.create_engine(api_url)
    try:
        with engine.connect() as conn:
            return [conn.execute(sa.text(f'SELECT COUNT(*) FROM {table}'))
                    .scalar() for table in hostile.TABLES]
    finally:
        engine.dispose()


class ConfigFilesTest(base.TestCase):

    def test_the_default_is_cellboot_conf_in_etc_cellboot(self):
        error = self.assertRaises(exception.ConfigurationError,
                                  wsgi_app.config_files, {})
        self.assertIn('/etc/cellboot/cellboot.conf', str(error))
        self.assertIn(wsgi_app.CONFIG_FILES_ENV, str(error))

    def test_files_are_relative_to_the_directory_or_absolute(self):
        for name in ('a.conf', 'b.conf'):
            open(os.path.join(self.state_path, name), 'w').close()
        self.assertEqual(
            [os.path.join(self.state_path, 'a.conf'),
             os.path.join(self.state_path, 'b.conf')],
            wsgi_app.config_files({
                wsgi_app.CONFIG_DIR_ENV: self.state_path,
                wsgi_app.CONFIG_FILES_ENV:
                    f'a.conf; {self.state_path}/b.conf;'}))

    def test_a_missing_file_is_named(self):
        error = self.assertRaises(
            exception.ConfigurationError, wsgi_app.config_files,
            {wsgi_app.CONFIG_FILES_ENV: '/nowhere/x.conf'})
        self.assertIn('/nowhere/x.conf', str(error))


class WSGIServerBase(base.TestCase):
    """An API database with the flavor ``small``, and a configuration
    naming it in the environment."""

    def setUp(self):
        super().setUp()
        self.api_url = 'sqlite:///' + os.path.join(self.state_path,
                                                   'api.sqlite')
        migration.db_sync('api', self.api_url)
        self.flags(connection=self.api_url, group='api_database')
        api_connection.reset()
        flavor = cluster.FLAVOR
        flavor_obj.Flavor.create(
            cb_context.get_admin_context(), flavor['name'], flavor['vcpus'],
            flavor['memory_mb'], root_gb=flavor['root_gb'],
            flavorid=flavor['flavorid'])
        with open(os.path.join(self.state_path, 'api.conf'), 'w') as conf:
            conf.write(textwrap.dedent(f'''
                [DEFAULT]
                state_path = {self.state_path}
                transport_url = fake://
                [api_database]
                connection = {self.api_url}
                '''))
        self.env = dict(os.environ, **{
            wsgi_app.CONFIG_DIR_ENV: self.state_path,
            wsgi_app.CONFIG_FILES_ENV: 'api.conf'})


class LoadedAsAWSGIServerLoadsItTest(WSGIServerBase):

    def test_the_module_serves_the_api_and_guards_it(self):
        process = subprocess.run(
            [sys.executable, '-c', _LOAD_AND_CALL], env=self.env,
            capture_output=True, text=True, timeout=START_WITHIN)
        self.assertEqual(0, process.returncode, process.stderr)
        listing, no_length, invalid = json.loads(
            process.stdout.splitlines()[-1])
        self.assertTrue(listing['status'].startswith('200'))
        self.assertEqual({'servers': []}, listing['body'])
        self.assertTrue(no_length['status'].startswith('411'))
        self.assertEqual(411, no_length['body']['lengthRequired']['code'])
        self.assertTrue(invalid['status'].startswith('400'))
        self.assertEqual([0, 0, 0], _rows(self.api_url))

    def test_without_its_configuration_it_says_which_variable(self):
        env = dict(self.env, **{wsgi_app.CONFIG_FILES_ENV: 'missing.conf'})
        process = subprocess.run(
            [sys.executable, '-c', 'import cellboot.wsgi.api'], env=env,
            capture_output=True, text=True, timeout=START_WITHIN)
        self.assertNotEqual(0, process.returncode)
        self.assertIn('missing.conf', process.stderr)
        self.assertIn(wsgi_app.CONFIG_FILES_ENV, process.stderr)


class UWSGITest(WSGIServerBase):

    def setUp(self):
        super().setUp()
        self.uwsgi = os.path.join(os.path.dirname(sys.executable), 'uwsgi')
        if not os.path.exists(self.uwsgi):
            cb_fixtures.service_unavailable(
                f'uWSGI is not installed at {self.uwsgi} (it is in the '
                f'test extra: make venv)')

    def start(self, port):
        log = open(os.path.join(self.state_path, 'uwsgi.log'), 'w')
        self.addCleanup(log.close)
        process = subprocess.Popen(
            [self.uwsgi, '--http-socket', f'127.0.0.1:{port}',
             '--module', 'cellboot.wsgi.api:application',
             '--master', '--processes', '1', '--threads', '4',
             '--enable-threads', '--lazy-apps', '--die-on-term',
             '--need-app', '--virtualenv', sys.prefix],
            env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.addCleanup(process.kill)
        return process

    def test_uwsgi_serves_the_api_guarded_and_stops_on_sigterm(self):
        port = test_command.free_port()
        process = self.start(port)
        url = f'http://127.0.0.1:{port}/v2.1/servers'
        auth = {'X-Auth-Token': 'alice:project-a'}
        deadline = time.monotonic() + START_WITHIN
        while True:
            try:
                listing = requests.get(url, headers=auth, timeout=5)
                break
            except requests.ConnectionError:
                self.assertIsNone(process.poll(), 'uWSGI exited')
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.2)
        self.assertEqual({'servers': []}, listing.json())
        refused = requests.post(url, headers=dict(auth, **{
            'Content-Type': 'application/json'}), data=b'{"server": {}}',
            timeout=30)
        self.assertEqual(400, refused.status_code)
        self.assertEqual(400, refused.json()['badRequest']['code'])
        connection = raw_http.Connection(port)
        self.addCleanup(connection.close)
        connection.send(raw_http.request('POST', '/v2.1/servers',
                                         hostile.AUTH, body=hostile.BOOT,
                                         length=False))
        self.assertEqual(411, connection.answer(hostile.QUICK).json()[
            'lengthRequired']['code'])
        self.assertEqual([0, 0, 0], _rows(self.api_url))
        booted = requests.post(url, headers=dict(hostile.AUTH),
                               data=hostile.BOOT, timeout=30)
        self.assertEqual(202, booted.status_code, booted.text)
        self.assertEqual([1, 1, 1], _rows(self.api_url))
        process.send_signal(signal.SIGTERM)
        self.assertEqual(0, process.wait(EXIT_WITHIN))
