"""The proof of issue 6: no build is lost, whatever conductor dies.

300 servers are booted through the REST API while super conductors and
cell conductors are SIGKILLed and restarted (``scenario``). Every host of
a third cell fails every build, so that about a third of the builds are
handed back and moved to another cell under the kills (issue 20). Once
nothing is in flight, the invariant checker must find nothing, the API
must show every server ACTIVE, or ERROR with a fault, and some builds
must have moved.

The run's figures are one JSON line, printed and written to
``$CELLBOOT_CHAOS_RESULT`` when set (``make chaos`` prints that file
last)::

    {"boots", "kills", "resumed_flows", "reschedules", "moves", "active",
     "error",
     "violations", "healed_by_sweeps", "seed", "duration_s",
     "taken_over_flows", "killed",
     "kills_mid_flow", "phases_s"}

Replay a run with ``CELLBOOT_CHAOS_SEED=<its seed> make chaos``; keep
the services' logs with ``CELLBOOT_CHAOS_LOGS=<directory>``.
"""

import json
import os
import random
import time

from tests import base
from tests.functional.chaos import observe
from tests.functional.chaos import scenario
from tests import fixtures as cb_fixtures

SEED_VARIABLE = 'CELLBOOT_CHAOS_SEED'
RESULT_VARIABLE = 'CELLBOOT_CHAOS_RESULT'

SETTLED_STATUSES = ('ACTIVE', 'ERROR')


def chaos_seed():
    """The seed to replay, or a new one."""
    given = os.environ.get(SEED_VARIABLE)
    if given:
        return int(given)
    return random.SystemRandom().randrange(2 ** 32)


def record(summary):
    """Print the summary as one JSON line; write it where make wants it."""
    line = json.dumps(summary, sort_keys=False)
    print(line)
    path = os.environ.get(RESULT_VARIABLE)
    if path:
        with open(path, 'w') as result:
            result.write(line + '\n')


class ChaosTest(base.MySQLMixin, base.TestCase):
    """MariaDB, RabbitMQ and Redis; every service a process."""

    def test_no_build_is_lost_when_conductors_are_killed(self):
        seed = chaos_seed()
        print(f'chaos seed {seed} (replay: {SEED_VARIABLE}={seed})')
        redis = self.useFixture(cb_fixtures.Redis())
        chaos = scenario.Chaos(self, redis, seed, cells=scenario.CHAOS_CELLS,
                               options=scenario.EVEN_CELLS)
        started = time.monotonic()
        seen = violations = servers = None
        try:
            chaos.timed('deploy', chaos.deploy)
            chaos.timed('load', chaos.load_and_kill)
            seen = chaos.timed('quiesce', chaos.wait_quiet)
            violations = chaos.timed('check', chaos.check)
            servers = chaos.servers()
        finally:
            record(self._summary(chaos, violations, started))

        problems = self._problems(chaos, seen, violations, servers)
        if not observe.cross_cell_flows(observe.flows()):
            problems.append(f'no build moved out of '
                            f'{scenario.FAILING_CELL}')
        self.assertEqual([], problems, f'seed {seed}')

    @staticmethod
    def _problems(chaos, seen, violations, servers):
        """Every way the run fell short, one line each (all of them, so
        that one failed run tells as much as it can)."""
        problems = [f'refused: {status} {body[:200]}'
                    for status, body in chaos.refused]
        if len(chaos.accepted) != chaos.boots:
            problems.append(f'{len(chaos.accepted)} of {chaos.boots} boots '
                            f'accepted')
        if len(chaos.kills) != (chaos.super_kills + chaos.cell_kills +
                                chaos.scheduler_kills):
            problems.append(f'{len(chaos.kills)} kills done')
        if not seen.quiet:
            problems.append(f'not quiet after {chaos.phases["quiesce"]} s: '
                            f'{seen}')
        problems += [f'not alive: {line}'
                     for line in observe.missing(chaos.accepted)]
        problems += [f'invariant: {line}' for line in violations]
        listed = {server['id']: server for server in servers}
        if sorted(listed) != sorted(chaos.accepted):
            problems.append(f'the API lists {len(listed)} servers, '
                            f'{len(set(chaos.accepted) - set(listed))} '
                            f'accepted ones missing')
        for server in listed.values():
            if server['status'] not in SETTLED_STATUSES:
                problems.append(f'server {server["id"]} is '
                                f'{server["status"]}')
            elif server['status'] == 'ERROR' and not server.get('fault'):
                problems.append(f'server {server["id"]} is ERROR without '
                                f'a fault')
        return problems

    @staticmethod
    def _summary(chaos, violations, started):
        duration = time.monotonic() - started
        if chaos.deployment is None:
            return {'error': 'the deployment did not start',
                    'seed': chaos.seed, 'duration_s': round(duration, 1)}
        try:
            summary = chaos.summary(violations or [], duration)
        except Exception as exc:
            return {'error': f'cannot read the outcome: {exc}',
                    'seed': chaos.seed, 'duration_s': round(duration, 1)}
        if violations is None:
            summary['violations'] = None     # never checked: it failed
        return summary
