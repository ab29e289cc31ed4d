"""The e2e benchmark's way in through the REST API, over HTTP (--via rest).

The deployment serves cellboot's WSGI application on the loopback, as
``cellboot all-in-one`` does, with a server class named ``module:Class``
(default: the built-in server, ``cellboot.api.server:WSGIService``; any
class with the same ``(application, host, port)`` constructor,
``start``/``stop``/``wait`` and ``port`` will do, which is how a server
is compared with another: put the other module on ``PYTHONPATH`` and
name it). ``RESTFront.boot`` POSTs ``/v2.1/servers`` with a ``requests``
session per client thread (keep-alive where the server offers it) and
waits until the deployment has settled the new servers.
"""

import threading
import time

import requests

import e2e_deployment

DEFAULT_SERVER = 'cellboot.api.server:WSGIService'
TOKEN = f'bench:{e2e_deployment.PROJECT}'


class RESTFront:
    """HTTP clients of the REST API ``deployment`` serves."""

    def __init__(self, deployment, flavor):
        self.flavor = flavor['flavorid']
        self.completions = deployment.completions
        self.url = deployment.url
        self._local = threading.local()

    def _session(self):
        session = getattr(self._local, 'session', None)
        if session is None:
            session = self._local.session = requests.Session()
            session.headers['X-Auth-Token'] = TOKEN
        return session

    def boot(self, count, timeout):
        """One POST of ``count`` servers; {uuid: latency s} once settled.

        A multi-create answers with its first server only: the others
        are the servers settled after it was sent (boot batches one at
        a time, as the benchmark does).
        """
        server = {'name': 'bench', 'flavorRef': self.flavor,
                  'imageRef': 'cirros'}
        if count > 1:
            server.update(min_count=count, max_count=count)
        settled_before = len(self.completions.done)
        started = time.perf_counter()
        response = self._session().post(self.url + '/servers',
                                        json={'server': server}, timeout=60)
        response.raise_for_status()
        if count == 1:
            uuids = [response.json()['server']['id']]
            self.completions.wait(uuids, timeout)
        else:
            self.completions.wait_for_count(settled_before + count, timeout)
            uuids = list(self.completions.done)[settled_before:]
        done = self.completions.done
        return {uuid: done[uuid] - started for uuid in uuids if uuid in done}
