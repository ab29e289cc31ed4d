"""The load of the cost benchmark: REST in, ACTIVE out.

``Clients`` boots servers through ``POST /servers`` as users do: single
boots taken from one queue by several client threads, each with an HTTP
session of its own, as fast as the API answers; or one multi-create.
Each phase boots in a project of its own, so that its servers can be
counted apart from the other phases'.

``Settlement`` learns when they are done by reading the instances'
``vm_state`` in every cell's database (cell0 included) through one
connection per database, opened before the load and kept: polling the
REST API instead would add the API's own work to the cost being
measured, and new connections to the ``Connections`` being counted.
"""

import collections
import queue
import threading
import time

import requests
import sqlalchemy as sa

from cellboot.db.cell import models as cell_models

# Seconds a POST /servers may take before the client gives up on it.
HTTP_TIMEOUT = 120
# Seconds between two looks at the cell databases while waiting.
POLL_INTERVAL = 0.1

ACTIVE = 'active'
SETTLED = (ACTIVE, 'error')
# What a server that is in no cell yet (a build request) is counted as.
UNPLACED = 'unplaced'

_INSTANCES = cell_models.Instance.__table__


class Clients:
    """Boots through the REST API at ``api_url`` (``.../v2.1``)."""

    def __init__(self, api_url, flavor, image='cirros'):
        self.api_url = api_url
        self.flavor = flavor
        self.image = image

    def _session(self, project):
        session = requests.Session()
        session.headers['X-Auth-Token'] = f'bench:{project}'
        return session

    def _post(self, session, name, count):
        """POST one request; (ids accepted, None) or ([], refusal)."""
        server = {'name': name, 'flavorRef': self.flavor,
                  'imageRef': self.image}
        if count > 1:
            server.update(min_count=count, max_count=count)
        try:
            answer = session.post(f'{self.api_url}/servers',
                                  json={'server': server},
                                  timeout=HTTP_TIMEOUT)
        except requests.RequestException as exc:
            return [], str(exc)
        if answer.status_code != 202:
            return [], f'{answer.status_code} {answer.text[:200]}'
        body = answer.json()
        if 'servers' in body:
            return [server['id'] for server in body['servers']], None
        return [body['server']['id']], None

    def singles(self, project, count, clients, rate=None):
        """``count`` single boots from ``clients`` threads.

        ``rate``: boots per second; the i-th boot is not sent before i /
        rate seconds from the start (None: each client sends its next
        boot as soon as its last was answered). Returns (accepted ids,
        refusals).
        """
        todo = queue.Queue()
        for index in range(count):
            todo.put((index, f'{project}-{index}'))
        accepted, refused = [], []
        lock = threading.Lock()
        start = time.monotonic()

        def client():
            session = self._session(project)
            while True:
                try:
                    index, name = todo.get_nowait()
                except queue.Empty:
                    return
                if rate is not None:
                    time.sleep(max(0.0, start + index / rate -
                                   time.monotonic()))
                ids, refusal = self._post(session, name, 1)
                with lock:
                    accepted.extend(ids)
                    if refusal:
                        refused.append(refusal)

        threads = [threading.Thread(target=client, daemon=True)
                   for _ in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return accepted, refused

    def multi_create(self, project, count):
        """One request for ``count`` servers: (accepted ids, refusals)."""
        ids, refusal = self._post(self._session(project), project, count)
        return ids, [refusal] if refusal else []


class Settlement:
    """How far a project's servers got, read from every cell database.

    ``urls`` are the database URLs of cell0 and each cell. ``close``
    gives the connections back.
    """

    def __init__(self, urls):
        self._engines = [sa.create_engine(url, pool_size=1, max_overflow=0,
                                          isolation_level='AUTOCOMMIT')
                         for url in urls]
        # Opened now, before anything is measured, and kept.
        self._conns = [engine.connect() for engine in self._engines]

    def states(self, project, expected):
        """Counter of vm_state of the project's ``expected`` servers;
        those in no cell yet count as ``UNPLACED``."""
        counts = collections.Counter()
        query = sa.select(_INSTANCES.c.vm_state, sa.func.count()).where(
            _INSTANCES.c.project_id == project,
            _INSTANCES.c.deleted == sa.false()).group_by(
            _INSTANCES.c.vm_state)
        for conn in self._conns:
            for vm_state, count in conn.execute(query):
                counts[vm_state] += count
        placed = sum(counts.values())
        if placed < expected:
            counts[UNPLACED] = expected - placed
        return counts

    def wait(self, project, expected, timeout, on_progress=None):
        """Wait, bounded, until none of the servers is still building.

        Calls ``on_progress()``, when given, after each look that found
        more servers settled. Returns (True when all settled else False,
        the last Counter, the monotonic time of the look that last found
        more settled: the end of the phase's boots, stragglers left out).
        """
        deadline = time.monotonic() + timeout
        settled_before, last_settled_at = 0, time.monotonic()
        while True:
            counts = self.states(project, expected)
            building = sum(count for state, count in counts.items()
                           if state not in SETTLED)
            if expected - building > settled_before:
                settled_before = expected - building
                last_settled_at = time.monotonic()
                if on_progress is not None:
                    on_progress()
            if building == 0:
                return True, counts, last_settled_at
            if time.monotonic() > deadline:
                return False, counts, last_settled_at
            time.sleep(POLL_INTERVAL)

    def close(self):
        for conn in self._conns:
            conn.close()
        for engine in self._engines:
            engine.dispose()
