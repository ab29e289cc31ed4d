"""A real, unmodified nova-api 34, run from its own virtualenv.

cellboot must not import nova, so nova lives in a virtualenv of its own
(``.nova-venv`` at the top of the tree, made by ``make nova-venv``) and
runs as separate processes: ``nova-manage`` to set up its schemas and
cell mappings on MariaDB, and its WSGI application
(``nova.wsgi.osapi_compute``) served by waitress. Keystone is left out:
the paste pipeline is nova's own ``keystone`` one without
``authtoken``, so that nova's ``keystonecontext`` takes the user,
project and roles from the request's headers (``headers()``). Glance,
Neutron and Placement are the stand-ins of ``standins``.

``NovaApi`` is a fixture: given the URLs of three empty MariaDB
databases (API, cell0, cell1) and of a RabbitMQ vhost, it writes
nova.conf, syncs the schemas, maps cell0 and cell1, creates flavor
``FLAVOR`` and serves the API; ``url`` is its ``/v2.1`` endpoint.
"""

import os
import subprocess
import time
import unittest

import fixtures
import requests

from tests import fixtures as cb_fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
VENV = os.path.join(ROOT, '.nova-venv')
PYTHON = os.path.join(VENV, 'bin', 'python')
NOVA_MANAGE = os.path.join(VENV, 'bin', 'nova-manage')

FLAVOR = 'm1.tiny'
PROJECT = 'nova-project'
USER = 'nova-user'
# nova passes the token on to Glance and Neutron (the stand-ins take
# any); without one, a boot fails.
TOKEN = 'stand-in-token'
MICROVERSION = '2.100'

START_TIMEOUT = 60
COMMAND_TIMEOUT = 180

_PASTE = """\
[composite:osapi_compute]
use = call:nova.api.openstack.urlmap:urlmap_factory
/v2.1: oscomputeversion_v2
/v2.1/+: openstack_compute_api_v21

[composite:openstack_compute_api_v21]
use = call:nova.api.auth:pipeline_factory_v21
keystone = compute_req_id faultwrap sizelimit keystonecontext
    osapi_compute_app_v21

[pipeline:oscomputeversion_v2]
pipeline = compute_req_id faultwrap oscomputeversionapp_v2

[filter:compute_req_id]
paste.filter_factory = nova.api.compute_req_id:ComputeReqIdMiddleware.factory

[filter:faultwrap]
paste.filter_factory = nova.api.openstack:FaultWrapper.factory

[filter:sizelimit]
paste.filter_factory = oslo_middleware:RequestBodySizeLimiter.factory

[filter:keystonecontext]
paste.filter_factory = nova.api.auth:NovaKeystoneContext.factory

[app:osapi_compute_app_v21]
paste.app_factory = nova.api.openstack.compute:APIRouterV21.factory

[app:oscomputeversionapp_v2]
paste.app_factory = nova.api.openstack.compute.versions:VersionsV2.factory
"""

_CONF = """\
[DEFAULT]
transport_url = {transport_url}
use_stderr = true
debug = false

[api]
auth_strategy = keystone

[wsgi]
api_paste_config = {paste}

[api_database]
connection = {api_db}

[database]
connection = {cell1_db}

[quota]
driver = nova.quota.NoopQuotaDriver

[glance]
endpoint_override = {standins}

[neutron]
endpoint_override = {standins}
# nova-api's local delete talks to Neutron as itself (admin), not with
# the user's token: keystoneauth's plugin without authentication.
auth_type = none

[placement]
endpoint_override = {standins}/placement
auth_type = none

[oslo_concurrency]
lock_path = {state}

[oslo_messaging_notifications]
driver = noop
"""

# Serves nova's WSGI application; prints the port once it listens.
_SERVE = """\
import sys
import waitress.server
from nova.wsgi.osapi_compute import application
server = waitress.server.create_server(application, host='127.0.0.1',
                                       port=0, threads=8)
print(server.effective_port, flush=True)
server.run()
"""


def unavailable(reason):
    """Skip (fail under ``CI=true``): nova cannot run here."""
    message = f'nova-api cannot be run ({reason})'
    if cb_fixtures.in_ci():
        raise AssertionError(f'CI=true and {message}')
    raise unittest.SkipTest(message)


def check_venv():
    if not os.path.exists(NOVA_MANAGE):
        unavailable(f'{VENV} has no nova: run `make nova-venv`')


def headers(admin=False, project=PROJECT):
    return {
        'X-Auth-Token': TOKEN,
        'X-User-Id': USER,
        'X-Project-Id': project,
        'X-Roles': 'admin,member,reader' if admin else 'member,reader',
        'OpenStack-API-Version': f'compute {MICROVERSION}',
        'Content-Type': 'application/json',
    }


class NovaApi(fixtures.Fixture):
    """nova-api on the given databases and bus (see the module)."""

    def __init__(self, api_db, cell0_db, cell1_db, transport_url,
                 cell1_transport_url, standins_url):
        super().__init__()
        self.api_db = api_db
        self.cell0_db = cell0_db
        self.cell1_db = cell1_db
        self.transport_url = transport_url
        self.cell1_transport_url = cell1_transport_url
        self.standins_url = standins_url

    def _setUp(self):
        check_venv()
        self.state = self.useFixture(fixtures.TempDir()).path
        paste = os.path.join(self.state, 'api-paste.ini')
        with open(paste, 'w') as out:
            out.write(_PASTE)
        self.conf = os.path.join(self.state, 'nova.conf')
        with open(self.conf, 'w') as out:
            out.write(_CONF.format(
                transport_url=self.transport_url, paste=paste,
                api_db=self.api_db, cell1_db=self.cell1_db,
                standins=self.standins_url, state=self.state))
        self.log_path = os.path.join(self.state, 'nova-api.log')
        self._manage('api_db', 'sync')
        self._manage('cell_v2', 'map_cell0',
                     '--database_connection', self.cell0_db)
        self._manage('cell_v2', 'create_cell', '--name', 'cell1',
                     '--transport-url', self.cell1_transport_url,
                     '--database_connection', self.cell1_db)
        self._manage('db', 'sync')
        self._serve()
        self.create_flavor()

    def _manage(self, *args):
        done = subprocess.run(
            [NOVA_MANAGE, '--config-file', self.conf, *args],
            capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
        if done.returncode != 0:
            raise AssertionError(
                f'nova-manage {" ".join(args)} exited {done.returncode}:\n'
                f'{done.stdout}\n{done.stderr}')
        return done.stdout

    def _serve(self):
        env = dict(os.environ, OS_NOVA_CONFIG_DIR=self.state,
                   OS_NOVA_CONFIG_FILES='api-paste.ini;nova.conf')
        env.pop('PYTHONPATH', None)
        self._log = open(self.log_path, 'w')
        self.addCleanup(self._log.close)
        self.process = subprocess.Popen(
            [PYTHON, '-c', _SERVE], stdout=subprocess.PIPE,
            stderr=self._log, stdin=subprocess.DEVNULL, text=True, env=env,
            cwd=self.state, start_new_session=True)
        self.addCleanup(self._stop)
        port = self.process.stdout.readline().strip()
        if not port.isdigit():
            raise AssertionError(f'nova-api did not start:\n{self.log()}')
        self.url = f'http://127.0.0.1:{port}/v2.1'
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                if requests.get(self.url, timeout=5).status_code == 200:
                    return
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f'nova-api does not answer at '
                                     f'{self.url}:\n{self.log()}')
            time.sleep(0.2)

    def _stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def log(self):
        with open(self.log_path, errors='replace') as log:
            return log.read()

    def create_flavor(self, name=FLAVOR, vcpus=1, ram=512, disk=1):
        answer = requests.post(
            f'{self.url}/flavors', headers=headers(admin=True),
            json={'flavor': {'name': name, 'id': name, 'vcpus': vcpus,
                             'ram': ram, 'disk': disk}}, timeout=30)
        if answer.status_code != 200:
            raise AssertionError(f'flavor {name}: {answer.status_code} '
                                 f'{answer.text}')

    def create_server_group(self, body, project=PROJECT):
        """POST /os-server-groups; the new group's uuid."""
        answer = requests.post(f'{self.url}/os-server-groups', json=body,
                               headers=headers(project=project), timeout=30)
        if answer.status_code != 200:
            raise AssertionError(f'server group: {answer.status_code} '
                                 f'{answer.text}')
        return answer.json()['server_group']['id']

    def boot(self, server, hints=None, project=PROJECT):
        """POST /servers; the answer (any status)."""
        body = {'server': server}
        if hints:
            body['os:scheduler_hints'] = hints
        return requests.post(f'{self.url}/servers', json=body,
                             headers=headers(project=project), timeout=60)
