"""One cell's database partitioned under load, the rest of the cloud fine.

A deployment in processes (``deployment.Deployment``) on MariaDB,
RabbitMQ and a Redis jobboard: the API, two super conductors, the
scheduler, and three cells of a cell conductor and two compute hosts
each. The database of ``CUT_CELL`` is behind a TCP proxy of the test
(``proxied_cells``): every service reaches it through the proxy, so
cutting it is a partition as all of them see it, the API, the super
conductors and the scheduler as much as the cell's own services.

``Partition.run`` boots singles through ``POST /servers`` at a steady
rate (``rate`` a second, from two client threads, open loop) for
``before + cut + after`` seconds, while a lister reads ``GET
/servers/detail`` every ``LIST_INTERVAL`` seconds; ``before`` seconds
in, the proxy is cut (``mode`` 'cut': connections refused and dropped;
'black_hole': accepted, nothing forwarded, nothing dropped) and
restored ``cut`` seconds later. Then it waits (bounded) for
quiescence and reads, from the databases, when each server was created
and went ACTIVE, and where.

The figures (``figures``): boots accepted, statuses of every answer, ACTIVE
per second in the cells that stay up before and during the cut, the
median time from POST to ACTIVE there, and the listings' times before
and during the cut.
"""

import collections
import datetime
import glob
import os
import shutil
import statistics
import threading
import time

import requests
import sqlalchemy as sa

from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from tests.functional.chaos import observe
from tests.functional.multiprocess import deployment as deployment_mod

CELLS = {cell: [f'{cell}-host{index}' for index in (1, 2)]
         for cell in ('cell1', 'cell2', 'cell3')}
CUT_CELL = 'cell2'
# The proxy's methods that make the outage.
MODES = ('cut', 'black_hole')

SPAWN_TIME = 0.2
OPTIONS = """
    [conductor]
    sweep_interval = 3

    # One project boots every server of the run: no quota may refuse it.
    [quota]
    instances = -1
    cores = -1
    ram = -1
    """
CELL_OPTIONS = f"""
    [fake_driver]
    spawn_time = {SPAWN_TIME}
    """
# The cut cell's hosts spawn slowly, so that builds are under way there
# when the cut comes: they must finish after it.
CUT_SPAWN_TIME = 2.0
CUT_HOST_OPTIONS = {host: f'[fake_driver]\nspawn_time = {CUT_SPAWN_TIME}\n'
                    for host in CELLS[CUT_CELL]}

# Where to keep the services' logs after the run (default: nowhere).
KEEP_LOGS_VARIABLE = 'CELLBOOT_PARTITION_LOGS'

TOKEN = 'partition:partition-project'
HTTP_TIMEOUT = 60
LIST_INTERVAL = 1.0
CLIENTS = 2
# Seconds after the cut and after the restore during which the services
# may still be finding out; left out of the rates.
SETTLING = 5.0
QUIESCE_TIMEOUT = 90
POLL_INTERVAL = 1.0

_INSTANCES = cell_models.Base.metadata.tables['instances']
_EPOCH = datetime.datetime(1970, 1, 1)


class Partition:
    """One run of the scenario on a deployment made for it.

    ``mode`` is the proxy's method that makes the outage: ``cut`` or
    ``black_hole``; ``before``, ``cut`` and ``after`` the seconds of load
    around it; ``rate`` the boots a second.
    """

    def __init__(self, test, redis, mode='cut', rate=3.0, before=15.0,
                 cut=30.0, after=10.0):
        if mode not in MODES:
            raise ValueError(f'mode {mode!r}: one of {MODES}')
        self.test = test
        self.redis = redis
        self.mode = mode
        self.rate = rate
        self.before, self.cut, self.after = before, cut, after
        self.deployment = None
        self.posted = {}            # instance uuid: wall time of its POST
        self.answers = collections.Counter()   # POST status: count
        self.errors = []            # (status, body) of a 5xx or no answer
        self.listings = []          # (wall start, seconds, status, servers)
        self.cut_at = self.restored_at = None
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def deploy(self):
        self.deployment = self.test.useFixture(deployment_mod.Deployment(
            self.test, backend='mysql', cells=CELLS,
            cell_options=CELL_OPTIONS, host_options=CUT_HOST_OPTIONS,
            options=OPTIONS, super_conductors=2,
            jobboard=self.redis, api=True, proxied_cells=[CUT_CELL]))
        keep = os.environ.get(KEEP_LOGS_VARIABLE)
        if keep:
            self.test.addCleanup(self._keep_logs, keep)
        return self.deployment

    def _keep_logs(self, directory):
        os.makedirs(directory, exist_ok=True)
        for path in glob.glob(os.path.join(self.deployment.dir, '*.log')):
            shutil.copy(path, directory)

    @property
    def proxy(self):
        return self.deployment.cell_proxy(CUT_CELL)

    # -- load ----------------------------------------------------------------

    def _post(self, session, index):
        server = {'name': f'partition-{index}', 'imageRef': 'cirros',
                  'flavorRef': deployment_mod.FLAVOR['flavorid']}
        sent = time.time()
        try:
            answer = session.post(f'{self.deployment.api_url}/servers',
                                  json={'server': server},
                                  timeout=HTTP_TIMEOUT)
        except requests.RequestException as exc:
            with self._lock:
                self.answers[None] += 1
                self.errors.append((None, str(exc)))
            return
        with self._lock:
            self.answers[answer.status_code] += 1
            if answer.status_code == 202:
                self.posted[answer.json()['server']['id']] = sent
            elif answer.status_code >= 500:
                self.errors.append((answer.status_code, answer.text))

    def _submit(self, first, started, total):
        session = requests.Session()
        session.headers['X-Auth-Token'] = TOKEN
        for index in range(first, total, CLIENTS):
            pause = started + index / self.rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            self._post(session, index)

    def _list(self):
        session = requests.Session()
        session.headers['X-Auth-Token'] = TOKEN
        while not self._stop.wait(LIST_INTERVAL):
            sent = time.time()
            try:
                answer = session.get(
                    f'{self.deployment.api_url}/servers/detail',
                    timeout=HTTP_TIMEOUT)
            except requests.RequestException as exc:
                self.listings.append((sent, time.time() - sent, None, {}))
                self.errors.append((None, f'listing: {exc}'))
                continue
            servers = {}
            if answer.status_code == 200:
                servers = {server['id']: server['status']
                           for server in answer.json()['servers']}
            elif answer.status_code >= 500:
                self.errors.append((answer.status_code, answer.text))
            self.listings.append((sent, time.time() - sent,
                                  answer.status_code, servers))

    def run(self):
        """Load, cut, restore, load; returns when the last POST is done."""
        total = int(self.rate * (self.before + self.cut + self.after))
        started = time.monotonic()
        threads = [threading.Thread(target=self._submit,
                                    args=(first, started, total))
                   for first in range(CLIENTS)]
        threads.append(threading.Thread(target=self._list))
        for thread in threads:
            thread.start()
        try:
            time.sleep(max(0.0, started + self.before - time.monotonic()))
            self.cut_at = time.time()
            getattr(self.proxy, self.mode)()
            time.sleep(max(0.0, started + self.before + self.cut -
                           time.monotonic()))
        finally:
            self.proxy.restore()
            self.restored_at = time.time()
        for thread in threads[:-1]:
            thread.join()
        self._stop.set()
        threads[-1].join()

    # -- outcome -------------------------------------------------------------

    def wait_quiet(self):
        deadline = time.monotonic() + QUIESCE_TIMEOUT
        while True:
            seen = observe.look(self.redis.client, self.redis.namespace)
            if seen.quiet:
                return seen
            if time.monotonic() > deadline:
                raise AssertionError(
                    f'not quiet {QUIESCE_TIMEOUT} s after the load: '
                    f'{seen}')
            time.sleep(POLL_INTERVAL)

    @staticmethod
    def instances():
        """{uuid: (cell, vm_state, created_at, launched_at)}, wall times."""
        found = {}
        for cell, url in observe.cell_urls().items():
            with cell_connection.get_engine(url).connect() as conn:
                for row in conn.execute(sa.select(
                        _INSTANCES.c.uuid, _INSTANCES.c.vm_state,
                        _INSTANCES.c.created_at, _INSTANCES.c.launched_at
                ).where(_INSTANCES.c.deleted == 0)):
                    found[row.uuid] = (cell, row.vm_state,
                                       _wall(row.created_at),
                                       _wall(row.launched_at))
        return found

    def windows(self):
        """(before, during): the (start, end) wall times of the rates."""
        first = min(self.posted.values())
        return ((first + SETTLING, self.cut_at),
                (self.cut_at + SETTLING, self.restored_at))

    def figures(self, instances):
        """The run's figures, one JSON-able dict."""
        up = [(uuid, launched) for uuid, (cell, _state, _c, launched)
              in instances.items() if cell != CUT_CELL and launched]
        rates, latencies = {}, {}
        for name, (start, end) in zip(('before', 'during'), self.windows()):
            went = [uuid for uuid, launched in up if start <= launched < end]
            rates[name] = round(len(went) / (end - start), 2)
            waits = [instances[uuid][3] - self.posted[uuid]
                     for uuid in went if uuid in self.posted]
            latencies[name] = round(statistics.median(waits), 2) \
                if waits else None
        listed = {'before': [], 'during': []}
        for sent, took, status, _servers in self.listings:
            if sent < self.cut_at:
                listed['before'].append(took)
            elif sent + took < self.restored_at:
                listed['during'].append(took)
        states = collections.Counter(state for _cell, state, _c, _l
                                     in instances.values())
        # Accepted before the cut, in the cut cell, ACTIVE after it.
        caught = [uuid for uuid, (cell, _s, _c, launched) in instances.items()
                  if cell == CUT_CELL and launched and uuid in self.posted
                  and self.posted[uuid] < self.cut_at <= launched]
        return {
            'mode': self.mode, 'cut_s': self.cut,
            'boots': len(self.posted),
            'answers': {str(k): v for k, v in sorted(
                self.answers.items(), key=lambda item: str(item[0]))},
            'active_per_s_up_cells': rates,
            'median_post_to_active_s_up_cells': latencies,
            'listing_max_s': {k: round(max(v), 2) if v else None
                              for k, v in listed.items()},
            'listing_median_s': {k: round(statistics.median(v), 2)
                                 if v else None for k, v in listed.items()},
            'listings': {k: len(v) for k, v in listed.items()},
            'states': dict(states),
            'caught_in_cut_cell': len(caught),
            'cut_at': self.cut_at, 'restored_at': self.restored_at,
        }


def _wall(when):
    """A naive UTC datetime of the databases as a wall-clock time."""
    if when is None:
        return None
    return (when - _EPOCH).total_seconds()
