"""The API served over HTTP in front of the in-process cluster.

``APIServer`` starts a ``tests.functional.cluster.Cluster`` that serves
``cellboot.api`` on a random loopback port with the built-in server, as
``cellboot all-in-one`` does (the flavor ``small`` in its API database,
the application sharing the deployment's scheduler and conductor
client). ``client(token)`` returns a small HTTP client for one user.
``OneHostAPITest`` is the set-up most API tests start from.
"""

import fixtures
import requests

from tests import base
from tests.functional import cluster as cluster_mod

ADMIN_TOKEN = 'admin:admin-project'
ALICE_TOKEN = 'alice:project-a'
BOB_TOKEN = 'bob:project-b'


class Client:
    """HTTP calls under /v2.1 with one X-Auth-Token (None: no header)."""

    def __init__(self, base_url, token):
        self.base_url = base_url
        self.session = requests.Session()
        if token is not None:
            self.session.headers['X-Auth-Token'] = token

    def request(self, method, path, json=None, data=None, headers=None,
                prefix='/v2.1'):
        return self.session.request(method, self.base_url + prefix + path,
                                    json=json, data=data, headers=headers,
                                    timeout=30)

    def get(self, path, **kwargs):
        return self.request('GET', path, **kwargs)

    def post(self, path, json=None, **kwargs):
        return self.request('POST', path, json=json, **kwargs)

    def delete(self, path, **kwargs):
        return self.request('DELETE', path, **kwargs)

    def boot(self, name='vm', count=None, flavor='small', **extra):
        """POST /servers; the response."""
        server = dict({'name': name, 'flavorRef': flavor,
                       'imageRef': 'cirros'}, **extra.pop('server', {}))
        if count is not None:
            server.update(min_count=count, max_count=count)
        return self.post('/servers', json=dict({'server': server}, **extra))


class APIServer(fixtures.Fixture):
    """A cluster plus its REST API on a random port."""

    def __init__(self, cells=2, hosts_per_cell=2, **cluster_kwargs):
        super().__init__()
        self.cluster_args = dict(cells=cells, hosts_per_cell=hosts_per_cell,
                                 **cluster_kwargs)

    def _setUp(self):
        self.cluster = self.useFixture(
            cluster_mod.Cluster(port=0, **self.cluster_args))
        self.app = self.cluster.deployment.application
        self.http = self.cluster.deployment.api_server
        self.url = self.http.url

    def client(self, token=ALICE_TOKEN):
        return Client(self.url, token)


class OneHostAPITest(base.TestCase):
    """A test against the API of one cell with one host, with the two
    callers most tests need: ``admin`` and ``alice`` (a project's
    member)."""

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(APIServer(cells=1, hosts_per_cell=1))
        self.admin = self.api.client(ADMIN_TOKEN)
        self.alice = self.api.client(ALICE_TOKEN)
