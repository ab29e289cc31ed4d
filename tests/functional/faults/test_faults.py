"""The proof of issue 14: the infrastructure fails, no build is lost.

Each test is one run of ``scenario.FaultRun``: 150 boots over REST in
45 s on the chaos deployment, one fault 15 s in. Every run must end
with every accepted server ACTIVE (no ERROR: the fake hosts that fail
builds fail them reschedulably, and every build finds a host), zero
answers of 500 or above other than the counted 503s, zero invariant
violations and every service still running.

Each run prints its figures as one JSON line and appends it to
``$CELLBOOT_FAULTS_RESULT`` when set (``make faults`` prints that file
last)::

    {"fault", "down_s", "boots", "reschedules", "active", "error",
     "violations", "healed_by_sweeps", "seed", "duration_s", "phases_s",
     "5xx", "503",
     "refused", "resent_builds", "orphans_started", "quiet_after_fault_s",
     "dead_services"}

``test_partition`` proves more of a partition (the rate of the other
cells, the listing's latency) with a steadier load; it runs in the same
serial part of ``make test``, because its deployment alone holds some
70 MariaDB connections, and two such tests side by side can pass the
server's ``max_connections``.

Three of the runs stop and restart this machine's own MariaDB, RabbitMQ
and Redis, which would break any test running beside them: they run only
when ``CELLBOOT_FAULTS=1`` says that nothing else runs (``make faults``,
which ``make test`` runs after the rest of the suite).
"""

import json
import os
import time
import unittest

from tests import base
from tests.functional.chaos import test_chaos
from tests.functional.faults import scenario
from tests.functional.faults import services
from tests import fixtures as cb_fixtures

ENABLE_VARIABLE = 'CELLBOOT_FAULTS'
RESULT_VARIABLE = 'CELLBOOT_FAULTS_RESULT'

RABBITMQ_DOWN = 10
MARIADB_DOWN = 5
PARTITION = 30
PARTITIONED_CELL = 'cell2'


def record(summary):
    line = json.dumps(summary)
    print(line)
    path = os.environ.get(RESULT_VARIABLE)
    if path:
        with open(path, 'a') as result:
            result.write(line + '\n')


@unittest.skipUnless(os.environ.get(ENABLE_VARIABLE) == '1',
                     f'restarts the machine\'s MariaDB, RabbitMQ and Redis: '
                     f'run alone, with `make faults` ({ENABLE_VARIABLE}=1)')
class FaultTest(base.MySQLMixin, base.TestCase):
    """MariaDB, RabbitMQ and Redis; every service a process."""

    def _run(self, name, fault, **options):
        seed = test_chaos.chaos_seed()
        redis = self.useFixture(cb_fixtures.Redis())
        run = scenario.FaultRun(self, redis, seed, name, fault, **options)
        started = time.monotonic()
        seen = violations = servers = None
        try:
            run.timed('deploy', run.deploy)
            run.timed('load', run.load_with_fault)
            seen = run.timed('quiesce', run.wait_quiet)
            violations = run.timed('check', run.check)
            servers = run.servers()
        finally:
            record(self._summary(run, violations, started))
        problems = test_chaos.ChaosTest._problems(run, seen, violations,
                                                  servers)
        problems += [f'server {server["id"]} is ERROR: '
                     f'{server.get("fault", {}).get("message")}'
                     for server in servers if server['status'] == 'ERROR']
        problems += [f'{service} is not running'
                     for service in run.dead_services()]
        self.assertEqual([], problems, f'{name}, seed {seed}')

    @staticmethod
    def _summary(run, violations, started):
        summary = test_chaos.ChaosTest._summary(run, violations, started)
        summary.setdefault('fault', run.name)
        return summary

    def test_rabbitmq_restart(self):
        server = services.RabbitMQ()
        server.usable()
        self._run('rabbitmq-restart',
                  scenario.restart(server, RABBITMQ_DOWN))

    def test_mariadb_restart(self):
        server = services.MariaDB()
        server.usable()
        self._run('mariadb-restart', scenario.restart(server, MARIADB_DOWN))

    def test_redis_restart(self):
        server = services.Redis()
        server.usable()
        self._run('redis-restart', scenario.restart(server, 0))

    def test_cell_database_partition(self):
        self._run('cell-database-partition',
                  scenario.partition(PARTITIONED_CELL, PARTITION),
                  proxied_cells=[PARTITIONED_CELL])
