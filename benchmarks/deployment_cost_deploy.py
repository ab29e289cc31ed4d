"""The deployment the cost benchmark measures: the chaos test's own.

The composition is not repeated here: it is
``tests.functional.multiprocess.deployment.Deployment``, the fixture the
multi-process and chaos tests build their deployments with (MariaDB
databases of its own, RabbitMQ vhosts of its own, the operator's
``cellboot-manage`` set-up, every service a process started by its
console command), with the chaos test's layout
(``tests.functional.chaos.scenario.CELLS``: 2 cells of a cell conductor
and 4 compute hosts each), a Redis jobboard namespace of its own and the
REST API. What differs from the chaos test is only what it is for: the
fake driver spawns at once and never fails, nothing is killed, and the
project's default timers are kept (no short sweeps; only the fixture's
1 s compute heartbeat differs from the default 10 s), so that the cost
measured is the one operators get.

The benchmark imports the fixture from ``tests/`` (it runs from a
checkout, like the other benchmarks, with the venv's test dependencies)
rather than moving it into ``cellboot``: the fixture is built of the
test suite's own pieces (database provisioning, vhosts, log capture),
which have no place in the shipped package. What a fixture asks of its
test (``addOnException``, ``addDetail``) a ``Run`` answers: a failed
start prints the services' logs on stderr.

With in-process scheduling (``[conductor] scheduler = local``, as the
chaos test and docs/architecture.md advise with a jobboard) a super
conductor loads its host states when it starts, and the fixture starts
the super conductors before the compute hosts; rather than shorten
``[scheduler] host_state_refresh_interval`` (60 s) for every process,
each super conductor is stopped and started again once the hosts are
up, as it would be in a deployment whose hosts were already running.
"""

import glob
import os
import shutil
import sys

from cellboot.conf import CONF

# The fixtures live in the checkout's tests/ package, one level up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from tests.functional.chaos import scenario  # noqa: E402
from tests.functional.multiprocess import deployment  # noqa: E402
from tests import fixtures as cb_fixtures  # noqa: E402

SCHEDULERS = ('local', 'rpc')
CELLS = scenario.CELLS
FLAVOR = deployment.FLAVOR['flavorid']

# The only options the benchmark sets: where the super conductors
# schedule, and no quota (one project makes every boot of a phase).
OPTIONS = """
    [conductor]
    scheduler = {scheduler}

    [quota]
    instances = -1
    cores = -1
    ram = -1
    """

# Instant, never failing builds: the control plane's cost alone. Hosts
# big enough for every phase together (by RAM 768 servers of the
# benchmark's flavor each, by CPU 256: 2,048 on the 8 hosts), so that a
# burst after the other phases still finds room.
CELL_OPTIONS = """
    [fake_driver]
    spawn_time = 0

    [compute]
    memory_mb = 262144
    """


class Run:
    """Stands for the test a fixture reports to."""

    def __init__(self):
        self._on_exception = []

    def addOnException(self, handler):
        self._on_exception.append(handler)

    def addDetail(self, name, content):
        """The fixtures also write what they attach on stderr."""

    def failed(self, exc_info):
        for handler in self._on_exception:
            handler(exc_info)


def start(run, super_conductors, scheduler):
    """Redis namespace and deployment fixtures, set up; (redis, deployment).

    Raises unittest.SkipTest when a service is missing (AssertionError
    with ``CI=true``), AssertionError when a service does not start.
    The caller cleans both up (``cleanUp``), in reverse order.
    """
    CONF([], project='cellboot', default_config_files=[])
    redis = cb_fixtures.Redis()
    redis.setUp()
    try:
        deployed = deployment.Deployment(
            run, backend='mysql', cells=CELLS, cell_options=CELL_OPTIONS,
            options=OPTIONS.format(scheduler=scheduler),
            super_conductors=super_conductors, jobboard=redis, api=True)
        deployed.setUp()
    except BaseException:
        redis.cleanUp()
        raise
    if scheduler == 'local':
        _restart_super_conductors(deployed)
    return redis, deployed


def _restart_super_conductors(deployed):
    """Stop and start each super conductor: it loads every host."""
    for name in deployed.super_conductor_names:
        deployed.service(name).stop()
        deployed.restart(name, wait=False)
    deployed.processes.wait_ready(
        [deployed.service(name) for name in deployed.super_conductor_names])


def kinds(deployed):
    """{kind: function returning the pids of that kind's services}."""
    def pids(names):
        return lambda: [deployed.service(name).process.pid
                        for name in names]

    hosts = [host for cell_hosts in CELLS.values() for host in cell_hosts]
    return {
        'super_conductors': pids(deployed.super_conductor_names),
        'api': pids(['api']),
        'scheduler': pids(['scheduler']),
        'cell_conductors': pids([deployed.cell_conductor_name(cell)
                                 for cell in CELLS]),
        'computes': pids(hosts),
    }


def cell_database_urls(deployed):
    """cell0's and every cell's database URL (direct, no proxy)."""
    return [deployed.cell0_url, *deployed.direct_cell_urls.values()]


def dead_services(deployed):
    """Names of the services whose latest process has exited."""
    latest = {service.name: service
              for service in deployed.processes.services}
    return sorted(name for name, service in latest.items()
                  if not service.alive())


def keep_logs(deployed, directory):
    """Copy every service's log to ``directory`` (made if missing)."""
    os.makedirs(directory, exist_ok=True)
    for path in glob.glob(os.path.join(deployed.dir, '*.log')):
        shutil.copy(path, directory)
