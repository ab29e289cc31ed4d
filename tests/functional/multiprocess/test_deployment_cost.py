"""The cost benchmark (benchmarks/deployment_cost.py) still runs.

A benchmark that only runs when someone measures rots between two
measurements; this runs it as a user does, with tiny counts, against
this machine's MariaDB, RabbitMQ and Redis, and checks that its JSON
line has every figure. Like the other multi-process tests it is skipped
when a service is missing, and fails then under ``CI=true``. Its
options are checked too: a bad one is refused with argparse's one-line
error, never a traceback.
"""

import json
import os
import subprocess
import sys

from tests import base
from tests import fixtures as cb_fixtures

SCRIPT = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                      os.pardir, 'benchmarks', 'deployment_cost.py')

# Seconds the whole run may take: the deployment's start and stop take
# about a minute here, the boots a few seconds.
RUN_TIMEOUT = 600
OPTIONS_TIMEOUT = 120

KINDS = {'super_conductors', 'api', 'scheduler', 'cell_conductors',
         'computes', 'mariadb', 'deployment', 'machine'}
PHASE_KEYS = {'boots', 'active', 'stragglers', 'settled', 'refused',
              'seconds', 'cpu_window_s', 'boots_per_s', 'cpu_ms_per_boot',
              'new_connections_per_boot', 'threads_connected_peak'}


def run_benchmark(*args, timeout=RUN_TIMEOUT):
    return subprocess.run([sys.executable, SCRIPT, *args], text=True,
                          capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


class DeploymentCostSmokeTest(base.TestCase):

    def test_tiny_run_reports_every_figure_with_every_server_active(self):
        result = run_benchmark('--singles', '4', '--rate', '20',
                               '--batch', '4',
                               '--burst-batch', '3', '--burst-singles', '4',
                               '--super-conductors', '1', '--warmup', '1',
                               '--idle-seconds', '1', '--tail', '0.5')
        if result.returncode == 2 and 'cannot run:' in result.stderr:
            cb_fixtures.service_unavailable(
                result.stderr.strip().splitlines()[-1])
        self.assertEqual(0, result.returncode,
                         f'stdout:\n{result.stdout}\nstderr:\n'
                         f'{result.stderr[-5000:]}')
        summary = json.loads(result.stdout.strip().splitlines()[-1])

        self.assertEqual(1, summary['super_conductors'])
        self.assertEqual(20.0, summary['rate'])
        self.assertEqual('server-wide', summary['connections_scope'])
        self.assertEqual([], summary['dead_services'])
        self.assertEqual(KINDS, set(summary['idle_cpu_ms_per_s']))
        for phase, boots in (('singles', 4), ('batch', 4), ('burst', 7)):
            figures = summary[phase]
            self.assertEqual(set(), PHASE_KEYS - set(figures), phase)
            self.assertEqual((boots, boots, {}, 0),
                             (figures['boots'], figures['active'],
                              figures['stragglers'], figures['refused']),
                             phase)
            self.assertEqual(KINDS, set(figures['cpu_ms_per_boot']), phase)
            self.assertGreater(figures['boots_per_s'], 0, phase)
            self.assertGreaterEqual(figures['new_connections_per_boot'], 0,
                                    phase)


class DeploymentCostOptionsTest(base.TestCase):
    """Every option refuses what it cannot mean, before starting anything.
    """

    BAD = [
        (['--singles', '-1'], '--singles: -1 must be at least 0'),
        (['--singles', 'many'], "--singles: 'many' is not a whole number"),
        (['--clients', '0'], '--clients: 0 must be at least 1'),
        (['--super-conductors', '0'], '--super-conductors: 0 must be'),
        (['--super-conductors', '99'], 'and at most 8'),
        (['--batch', '1001'], '--batch: 1001 must be at least 0 and at '
                              'most 1000'),
        (['--burst-batch', '-3'], '--burst-batch: -3 must be at least 0'),
        (['--burst-singles', '2.5'], "--burst-singles: '2.5' is not a "
                                     'whole number'),
        (['--idle-seconds', '0'], '--idle-seconds: 0 must be a positive'),
        (['--timeout', 'nan'], '--timeout: nan must be a positive'),
        (['--tail', 'inf'], '--tail: inf must be a positive'),
        (['--rate', '0'], '--rate: 0 must be a positive number of boots '
                          'per second'),
        (['--rate', 'fast'], "--rate: 'fast' is not a number"),
        (['--scheduler', 'remote'], "--scheduler: invalid choice: "
                                    "'remote'"),
        (['--keep-logs', '/dev/null/logs'], '--keep-logs: [Errno 20] Not '
                                            'a directory'),
    ]

    def test_bad_options_are_refused_with_one_clear_line(self):
        problems = []
        for args, expected in self.BAD:
            result = run_benchmark(*args, timeout=OPTIONS_TIMEOUT)
            last = result.stderr.strip().splitlines()[-1]
            if (result.returncode != 2 or 'Traceback' in result.stderr
                    or expected not in last or result.stdout):
                problems.append(f'{args}: exit {result.returncode}, '
                                f'stderr ends {last!r}')
        self.assertEqual([], problems)
