"""The API served over HTTP in front of the in-process cluster.

``APIServer`` starts a ``tests.functional.cluster.Cluster``, creates the
flavor ``small`` in its API database, and serves ``cellboot.api`` on a
random loopback port with the built-in server, sharing the cluster's
scheduler and conductor client (as ``cellboot all-in-one`` does).
``client(token)`` returns a small HTTP client for one user.
"""

import fixtures
import requests

from cellboot.api import server as api_server
from cellboot.api import wsgi
from cellboot.objects import flavor as flavor_obj
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
            cluster_mod.Cluster(**self.cluster_args))
        flavor = cluster_mod.FLAVOR
        flavor_obj.Flavor.create(
            self.cluster.ctx, flavor['name'], flavor['vcpus'],
            flavor['memory_mb'], root_gb=flavor['root_gb'],
            flavorid=flavor['flavorid'])
        self.app = wsgi.make_app(self.cluster.scheduler,
                                 conductor=self.cluster.conductor_api)
        self.http = api_server.WSGIService(self.app, '127.0.0.1', 0)
        self.http.start()
        self.addCleanup(self.http.wait)
        self.addCleanup(self.http.stop)
        self.url = self.http.url

    def client(self, token=ALICE_TOKEN):
        return Client(self.url, token)
