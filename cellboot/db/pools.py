"""Connection pools sized to each service, and the deployment's budget.

A pool keeps ``pool_size`` connections open once it has needed them, and
opens up to ``max_overflow`` more when more threads want one at once,
closing each of those as soon as it is given back. oslo.db's defaults (5
kept, 50 more per engine) fit no cellboot service: a super conductor
runs 16 flows at once, so the pools kept opening and closing overflow
connections (1.4 to 2 new connections per boot, each a TCP and
authentication round and CPU in both processes), and a burst could make
every process open up to 55 connections per database it uses, which
took MariaDB past its ``max_connections``.

Each service therefore sizes its pools to what it runs at once
(``pool_size``), plus a small overflow for its own background threads
(heartbeats, sweeps, the host states' refresh): nothing is opened and
closed again in steady state, and what a deployment may hold is known
(``budget``). A thread that finds the pool empty waits for a connection
(``[database] pool_timeout``) instead of opening one: transactions last
milliseconds.

===============  ====================================  ================
service          pool_size (per database it uses)      databases
===============  ====================================  ================
cellboot-api     ``[api] wsgi_threads`` (16)           API, each cell,
                                                       cell0; flow and
                                                       each cell's
                                                       flows (admin)
conductor        ``[jobboard] max_simultaneous_jobs``  super: API, flow,
                 (16)                                  each cell, cell0;
                                                       of a cell: its
                                                       cell twice (its
                                                       data, its flows)
compute host     ``RPC_POOL_SIZE`` (8)                 its cell
scheduler        ``RPC_POOL_SIZE`` (8)                 API, each cell
all-in-one       the conductor's + the API's (32)      all
===============  ====================================  ================

plus ``OVERFLOW`` (4) each. The compute host and the scheduler serve
RPC with many threads (``[DEFAULT] executor_thread_pool_size``, 64) whose
transactions are short next to the rest of their work (a spawn, host
filtering): 8 connections serve them, the other threads wait their turn.

``[database]``/``[api_database]`` ``max_pool_size`` and ``max_overflow``,
when set, win (for every database of the process, TaskFlow's included).
Processes that are no service (``cellboot-manage``, tests) keep oslo.db's
defaults. docs/reliability.md ("Database
connections") gives the budget; a unit test checks it against
``budget``.
"""

import collections

from cellboot.conf import CONF

# What a compute host or the scheduler keeps open per database.
RPC_POOL_SIZE = 8

# Connections beyond the pool for a service's background threads.
OVERFLOW = 4

# oslo.db's own defaults, for processes that are no service.
OSLO_DB_POOL_SIZE = 5
OSLO_DB_OVERFLOW = 50

KINDS = ('api', 'conductor', 'compute', 'scheduler', 'all-in-one')

Pool = collections.namedtuple('Pool', 'size overflow')

_kind = None


def serve_as(kind):
    """Size this process's pools for a service of ``kind`` (``KINDS``).

    Called by each service's entry point before it opens a database.
    """
    global _kind
    if kind not in KINDS:
        raise ValueError(f'unknown service kind {kind!r}')
    _kind = kind


def reset():
    """Back to oslo.db's defaults (tests)."""
    global _kind
    _kind = None


def pool_of(kind, conf=CONF):
    """The ``Pool`` of one database engine of a service of ``kind``.

    ``kind`` None: oslo.db's defaults. The configured ``[database]``
    options, when set, are applied by ``sized``, not here.
    """
    if kind is None:
        return Pool(OSLO_DB_POOL_SIZE, OSLO_DB_OVERFLOW)
    if kind == 'api':
        return Pool(conf.api.wsgi_threads, OVERFLOW)
    if kind == 'conductor':
        return Pool(conf.jobboard.max_simultaneous_jobs, OVERFLOW)
    if kind == 'all-in-one':
        # Its conductor's flows and its API's requests share the pools.
        return Pool(conf.jobboard.max_simultaneous_jobs +
                    conf.api.wsgi_threads, OVERFLOW)
    return Pool(RPC_POOL_SIZE, OVERFLOW)


def sized(max_pool_size=None, max_overflow=None):
    """The pool of this process's engines: what is set, else its size.

    ``max_pool_size``/``max_overflow``: the configured options (None when
    not set).
    """
    default = pool_of(_kind)
    return Pool(default.size if max_pool_size is None else max_pool_size,
                default.overflow if max_overflow is None else max_overflow)


def engines_of(kind, cells):
    """Database engines a service of ``kind`` opens, with ``cells`` cells
    (cell0 not counted)."""
    return {
        # API, each cell, cell0; for the admin's flow pages, TaskFlow's
        # engines on the flow database and each cell's.
        'api': (1 + cells + 1) + (1 + cells),
        'super-conductor': 2 + cells + 1,   # API, flow, cells, cell0
        'cell-conductor': 2,            # its cell's data and its flows
        'compute': 1,                   # its cell
        'scheduler': 1 + cells,         # API, each cell
    }[kind]


def budget(supers, cells, computes, apis=1, schedulers=0, conf=CONF):
    """Connections a deployment may hold at most, by the code's sizing.

    ``supers`` super conductors, ``cells`` cells each with one cell
    conductor, ``computes`` compute hosts in all, ``apis`` API processes
    and ``schedulers`` separate scheduler services (0: in the super
    conductors). Returns ``{service: per process}`` and the total.
    """
    per_process = {}
    for service, kind in (('api', 'api'), ('super-conductor', 'conductor'),
                          ('cell-conductor', 'conductor'),
                          ('compute', 'compute'),
                          ('scheduler', 'scheduler')):
        pool = pool_of(kind, conf)
        per_process[service] = (engines_of(service, cells) *
                                (pool.size + pool.overflow))
    counts = {'api': apis, 'super-conductor': supers,
              'cell-conductor': cells, 'compute': computes,
              'scheduler': schedulers}
    total = sum(per_process[s] * counts[s] for s in per_process)
    return per_process, total
