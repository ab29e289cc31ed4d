"""The scheduler benchmarks keep running: tiny runs, their JSON lines.

``benchmarks/scheduler.py`` (throughput and concurrency modes, with and
without zones), ``benchmarks/scheduler_race.py`` (on MariaDB, and its
race of real services also on RabbitMQ; skipped, like the database and
multi-process tests, where they cannot be reached, unless CI=true) and
``benchmarks/placement_accuracy.py`` run through both scheduler levels
on fleets of a few hosts, print their figures as the last line, and
refuse bad options with one line and exit status 2. (What the figures
are worth is docs/benchmarks.md's.)
"""

import json
import os
import re
import shutil
import subprocess
import sys

from cellboot.db.api import models as api_models
from tests import base
from tests import fixtures

BENCHMARKS = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                          os.pardir, 'benchmarks')

THROUGHPUT_KEYS = {
    'hosts', 'cells', 'backend', 'requests', 'decisions_per_s', 'p50_ms',
    'p99_ms', 'cpu_ms', 'rss_mb', 'cache_mb', 'cell_cache_mb', 'load_s',
    'api_level_mb', 'api_level_at_claims_bound_mb', 'api_level_traced_mb',
    'extra_cells_per_request', 'placed', 'rejected', 'failed_claims'}
CONCURRENCY_KEYS = THROUGHPUT_KEYS - {'api_level_traced_mb'} | {
    'processes', 'overcommitted_providers', 'conflicts', 'unavailable'}
ZONE_KEYS = {'zone_levels', 'fan_out', 'zones', 'build_s', 'process_rss_mb',
             'cell_cache_mb_per_1000_hosts',
             'cell_scheduler_mb_per_1000_hosts', 'api_level_ms',
             'api_level_decisions_per_s'}
RACE_KEYS = {'placed', 'rejected', 'unavailable', 'overcommitted_providers',
             'holding_consumers', 'failed_claims', 'failed_claim_rate',
             'conflicts', 'decisions_per_s', 'sync', 'broken'}
SERVICES_RACE_KEYS = RACE_KEYS | {
    'claims_tried', 'db_retries', 'sync_pulls', 'sync_seen', 'sync_errors',
    'sync_lag_p50_ms', 'sync_lag_p99_ms', 'sync_view_age_p50_ms',
    'sync_view_age_p99_ms', 'api_requests_placed',
    'failed_claims_per_cell_scheduler', 'silent_services', 'clients',
    'p50_ms', 'p99_ms', 'logs'}
ACCURACY_KEYS = {
    'hosts', 'cells', 'seed', 'placed', 'reference_placed', 'placed_ratio',
    'extra_cells_per_request', 'decisions_per_s', 'first_choice_rejections',
    'hosts_used', 'reference_hosts_used', 'cell_fill_stddev',
    'reference_fill', 'false_refusals', 'reached_fill', 'final',
    'overcommitted_providers'}
GENERIC_ACCURACY_KEYS = ACCURACY_KEYS | {
    'custom_class_requests', 'custom_class_placed',
    'reference_custom_class_placed', 'trait_requests', 'trait_placed',
    'reference_trait_placed', 'pool_requests', 'pool_placed',
    'reference_pool_placed', 'pool_used', 'pool_capacity',
    'overcommitted_pools', 'reference_pool_used', 'reference_pool_capacity',
    'reference_overcommitted_pools'}


def _run(script, *args, timeout=300):
    # A script's own directory heads sys.path, not the working one: name
    # this checkout, or the venv's editable install's cellboot is run.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.abspath(os.path.join(BENCHMARKS, os.pardir))]
        + [p for p in [os.environ.get('PYTHONPATH')] if p]))
    return subprocess.run(
        [sys.executable, os.path.join(BENCHMARKS, script), *args],
        capture_output=True, text=True, timeout=timeout, env=env)


def _zones(levels, fan_out):
    """The zones a fleet gets: none where the API database has none."""
    tables = api_models.Base.metadata.tables
    if 'zones' not in tables or 'zone_id' not in tables['cell_mappings'].c:
        return 0
    return sum(fan_out ** level for level in range(1, levels + 1))


def _figures(test, done):
    test.assertEqual(0, done.returncode, done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


class SchedulerBenchmarkSmokeTest(base.TestCase):

    def test_a_tiny_throughput_run_goes_through_both_levels(self):
        figures = _figures(self, _run('scheduler.py', '--hosts', '12',
                                      '--cells', '3', '--requests', '30'))
        self.assertLessEqual(THROUGHPUT_KEYS, set(figures))
        self.assertEqual(30, figures['placed'])
        self.assertEqual(12, figures['loaded_hosts'])
        self.assertGreater(figures['decisions_per_s'], 0)
        self.assertGreater(figures['api_level_mb'], 0)
        self.assertEqual(figures['cache_mb'], figures['cell_cache_mb'])

    def test_generic_and_plain_fleets_are_compared_in_one_run(self):
        figures = _figures(self, _run(
            'scheduler_generic.py', '--hosts', '8', '--cells', '2',
            '--requests', '20', '--extra-classes', '2', '--traits', '3',
            timeout=600))
        self.assertEqual((5, 3), (figures['classes'], figures['traits']))
        self.assertGreater(figures['ratio'], 0)
        self.assertAlmostEqual(
            figures['generic_decisions_per_s']
            / figures['plain_decisions_per_s'], figures['ratio'], places=2)

    def test_pools_are_a_third_variant_of_the_same_run(self):
        figures = _figures(self, _run(
            'scheduler_generic.py', '--hosts', '8', '--cells', '4',
            '--requests', '20', '--extra-classes', '1',
            '--pools-per-zone', '1', '--zone-levels', '1', '--fan-out', '2',
            timeout=600))
        self.assertEqual((1, 20), (figures['pools_per_zone'],
                                   figures['pools_placed']))
        self.assertAlmostEqual(
            figures['pools_decisions_per_s']
            / figures['plain_decisions_per_s'], figures['pools_ratio'],
            places=2)

    def test_hosts_without_disk_take_it_from_the_pools_up_to_their_room(self):
        # 12 slots of disk in the pools, the hosts' other classes as
        # many; two processes race for them (no warm-up placements).
        figures = _figures(self, _run(
            'scheduler.py', '--hosts', '6', '--cells', '2', '--processes',
            '2', '--requests', '20', '--capacity', '12',
            '--pools-per-zone', '2'))
        self.assertEqual((12, 8, 2, 0), (
            figures['placed'], figures['rejected'],
            figures['pools_per_zone'], figures['overcommitted_providers']))

    def test_a_fleet_under_zones_reports_both_levels_memory(self):
        figures = _figures(self, _run(
            'scheduler.py', '--hosts', '24', '--cells', '8',
            '--requests', '30', '--zone-levels', '3', '--fan-out', '2',
            '--warm-cells'))
        self.assertLessEqual(THROUGHPUT_KEYS | ZONE_KEYS, set(figures))
        self.assertEqual((30, True), (figures['placed'],
                                      figures['warm_cells']))
        self.assertEqual(24, figures['loaded_hosts'])
        self.assertEqual(8, figures['usable_cells'])
        self.assertEqual(_zones(3, 2), figures['zones'])
        self.assertGreater(figures['cell_cache_mb_per_1000_hosts'], 0)
        self.assertGreaterEqual(figures['cell_scheduler_mb_per_1000_hosts'],
                                figures['cell_cache_mb_per_1000_hosts'])
        self.assertGreater(figures['process_rss_mb'], figures['rss_mb'])

    def test_concurrent_processes_place_exactly_the_capacity(self):
        figures = _figures(self, _run(
            'scheduler.py', '--hosts', '10', '--cells', '2', '--processes',
            '2', '--requests', '40', '--capacity', '30', '--warm-cells'))
        self.assertLessEqual(CONCURRENCY_KEYS, set(figures))
        # The warm-up's placements were released: the room is whole.
        self.assertEqual(30, figures['placed'])
        self.assertLessEqual(figures['sync_view_age_p50_ms'],
                             figures['sync_view_age_p99_ms'])
        self.assertEqual(10, figures['rejected'] + figures['unavailable'])
        self.assertEqual(0, figures['overcommitted_providers'])
        self.assertEqual(30, figures['holding_consumers'])

    def test_bad_options_are_refused_in_one_line(self):
        for args, message in (
                (['--hosts', '0', '--cells', '1'],
                 "--hosts: must be a whole number of at least 1, not '0'"),
                (['--hosts', '2', '--cells', '3'],
                 '--cells: must not exceed --hosts (2), not 3'),
                (['--hosts', 'many', '--cells', '1'], "not 'many'"),
                (['--hosts', '2', '--cells', '1', '--conf',
                  'scheduler.no_such_option=1'],
                 'no such option no_such_option in group [scheduler]'),
                (['--hosts', '2', '--cells', '1', '--conf', 'nodot'],
                 "must be GROUP.OPTION=VALUE, not 'nodot'"),
                (['--hosts', '9', '--cells', '3', '--zone-levels', '2',
                  '--fan-out', '2'],
                 '--fan-out: 2 ** --zone-levels 2 = 4 leaf zones, more '
                 'than the 3 cells to put in them'),
                (['--hosts', '2', '--cells', '1', '--fan-out', '0'],
                 "--fan-out: must be a whole number of at least 1, not "
                 "'0'"),
                (['--hosts', '2', '--cells', '1', '--pools-per-zone', 'x'],
                 "--pools-per-zone: must be a whole number of at least 0, "
                 "not 'x'"),
                (['--hosts', '2', '--cells', '1', '--zone-levels', '-1'],
                 "--zone-levels: must be a whole number of at least 0, "
                 "not '-1'")):
            done = _run('scheduler.py', *args, timeout=60)
            self.assertEqual(2, done.returncode, args)
            self.assertIn(message, done.stderr)
            self.assertEqual(1, len(done.stderr.strip().splitlines()),
                             done.stderr)


class SchedulerRaceSmokeTest(base.TestCase):

    def _server_url(self):
        url = fixtures.server_backend('mysql').url
        return url.render_as_string(hide_password=False)

    def test_racing_processes_place_exactly_the_capacity(self):
        done = _run('scheduler_race.py', '--hosts', '8', '--cells', '2',
                    '--processes', '2', '--requests', '40', '--capacity',
                    '30', '--db-url', self._server_url(), '--sync',
                    'none,database')
        figures = _figures(self, done)
        self.assertEqual(2, figures['cell_schedulers_per_cell'])
        self.assertEqual(['none', 'database'],
                         [run['sync'] for run in figures['runs']])
        for run in figures['runs']:
            self.assertLessEqual(RACE_KEYS, set(run))
            self.assertEqual([], run['broken'])
            self.assertEqual(30, run['placed'])
            self.assertEqual(10, run['rejected'] + run['unavailable'])
            self.assertEqual(0, run['overcommitted_providers'])
            self.assertEqual(30, run['holding_consumers'])
            self.assertEqual(round(run['failed_claims'] / (
                30 + run['failed_claims']), 4), run['failed_claim_rate'])

    def test_racing_services_place_exactly_the_capacity(self):
        done = _run('scheduler_race.py', '--hosts', '20', '--cells', '2',
                    '--services', '2,2', '--requests', '60', '--capacity',
                    '40', '--db-url', self._server_url(), '--sync',
                    'none,database')
        if done.returncode == 2 and 'cannot run:' in done.stderr:
            fixtures.service_unavailable(done.stderr.strip())
        figures = _figures(self, done)
        self.assertEqual((2, 2, 8, True), (
            figures['api_levels'], figures['cell_schedulers_per_cell'],
            figures['clients'], figures['services']))
        self.assertEqual(['none', 'database'],
                         [run['sync'] for run in figures['runs']])
        for run in figures['runs']:
            self.assertLessEqual(SERVICES_RACE_KEYS, set(run))
            self.assertEqual([], run['broken'])
            self.assertEqual((40, 20, 0, 0, 40, 40), (
                run['placed'], run['rejected'], run['unavailable'],
                run['overcommitted_providers'], run['holding_consumers'],
                run['api_requests_placed']))
            self.assertEqual(40 + run['failed_claims'], run['claims_tried'])
            self.assertEqual(4, len(run['failed_claims_per_cell_scheduler']))
            self.assertEqual(run['failed_claims'],
                             sum(run['failed_claims_per_cell_scheduler']))
            self.assertEqual(round(run['failed_claims'] / (
                40 + run['failed_claims']), 4), run['failed_claim_rate'])
            self.assertGreater(run['decisions_per_s'], 0)
            self.assertIsNone(run['logs'])   # removed: nothing broken
        off, on = figures['runs']
        self.assertEqual((0, None), (off['sync_pulls'],
                                     off['sync_lag_p99_ms']))
        self.assertGreater(on['sync_seen'], 0)
        self.assertEqual(0, on['sync_errors'])

    def test_a_service_that_cannot_start_is_one_line(self):
        done = _run('scheduler_race.py', '--hosts', '4', '--cells', '1',
                    '--services', '1,2', '--requests', '4', '--capacity',
                    '4', '--db-url', self._server_url(), '--conf',
                    'filter_scheduler.enabled_filters=NoSuchFilter')
        if done.returncode == 2 and 'cannot run:' in done.stderr:
            fixtures.service_unavailable(done.stderr.strip())
        self.assertEqual(1, done.returncode, done.stderr[-3000:])
        self.assertEqual(1, len(done.stderr.strip().splitlines()),
                         done.stderr)
        self.assertRegex(done.stderr, r"scheduler-cell1-[12] exited with "
                         r"code 1 before serving: ERROR: Configuration "
                         r"error: unknown filter 'NoSuchFilter'")
        logs = re.search(r'\(logs in (\S+)\)', done.stderr).group(1)
        self.assertTrue(os.path.isfile(os.path.join(
            logs, 'scheduler-cell1-1.conf')))
        shutil.rmtree(logs)

    def test_bad_options_are_refused_in_one_line(self):
        for args, message in (
                (['--processes', '1'],
                 '--processes: a race needs at least 2, not 1'),
                (['--services', '2'],
                 "--services: must be API_LEVEL,PER_CELL, two whole "
                 "numbers of at least 1, not '2'"),
                (['--services', '2,0'], "not '2,0'"),
                (['--services', '2,x'], "not '2,x'"),
                (['--services', '2,2,2'], "not '2,2,2'"),
                (['--services=-1,2'], "not '-1,2'"),
                (['--services', ' , '], "not ' , '"),
                (['--services', '\u0661,2'], "not '\u0661,2'"),
                (['--services', '1,1'],
                 '--services: a race needs at least 2 schedulers at one '
                 'level, not 1,1'),
                (['--services', '2,2', '--processes', '2'],
                 '--processes: not with --services'),
                (['--clients', '3'], '--clients: only with --services'),
                (['--keep-logs'], '--keep-logs: only with --services'),
                (['--services', '2,2', '--clients', '0'],
                 "--clients: must be a whole number of at least 1, not "
                 "'0'"),
                (['--requests', '10', '--capacity', '20'],
                 '--requests: must be at least --capacity (20) to fill '
                 'the fleet, not 10'),
                (['--sync', 'none,'], '--sync: an empty value in the list'),
                (['--sync-option', 'nodot'],
                 "--sync-option: must be GROUP.OPTION, not 'nodot'"),
                (['--sync', 'x', '--sync-option', 'scheduler.no_such'],
                 '--sync scheduler.no_such=x: no such option no_such in '
                 'group [scheduler]'),
                (['--sync', 'none,carrier-pigeon'],
                 '--sync scheduler.sync_backend=carrier-pigeon: ')):
            done = _run('scheduler_race.py', *args, timeout=60)
            self.assertEqual(2, done.returncode, args)
            self.assertIn(message, done.stderr)
            self.assertEqual(1, len(done.stderr.strip().splitlines()),
                             done.stderr)


class PlacementAccuracySmokeTest(base.TestCase):

    def test_a_tiny_fleet_is_filled_by_both_schedulers(self):
        done = _run('placement_accuracy.py', '--hosts', '8', '--cells', '2',
                    '--seed', '3')
        figures = _figures(self, done)
        self.assertLessEqual(ACCURACY_KEYS, set(figures))
        self.assertTrue(figures['reached_fill'], done.stdout[-2000:])
        self.assertGreaterEqual(figures['reference_fill'], 0.95)
        self.assertGreater(figures['placed'], 0)
        self.assertEqual(round(figures['placed']
                               / figures['reference_placed'], 5),
                         figures['placed_ratio'])
        self.assertIn('refused by the hierarchy only', done.stdout)

    def test_zones_and_several_api_schedulers_fill_the_fleet(self):
        done = _run('placement_accuracy.py', '--hosts', '16', '--cells',
                    '4', '--seed', '3', '--zone-levels', '2', '--fan-out',
                    '2', '--schedulers', '3')
        figures = _figures(self, done)
        self.assertLessEqual(ACCURACY_KEYS, set(figures))
        self.assertEqual(3, figures['schedulers'])
        self.assertEqual(_zones(2, 2), figures['zones'])
        self.assertTrue(figures['reached_fill'], done.stdout[-2000:])
        self.assertGreater(figures['placed'], 0)

    def test_custom_classes_traits_and_a_pool_are_placed_as_globally(self):
        done = _run('placement_accuracy.py', '--hosts', '16', '--cells',
                    '2', '--seed', '3', '--generic')
        figures = _figures(self, done)
        self.assertLessEqual(GENERIC_ACCURACY_KEYS, set(figures))
        self.assertTrue(figures['generic'])
        self.assertTrue(figures['reached_fill'], done.stdout[-2000:])
        self.assertEqual(round(figures['placed']
                               / figures['reference_placed'], 5),
                         figures['placed_ratio'])
        self.assertGreaterEqual(figures['placed_ratio'], 0.9)
        for key in ('custom_class', 'trait', 'pool'):
            self.assertGreater(figures[f'{key}_placed'], 0, key)
            self.assertLessEqual(figures[f'{key}_placed'],
                                 figures[f'{key}_requests'], key)
        # Every create takes its disk from the pool, which binds first.
        self.assertEqual(figures['creates'], figures['pool_requests'])
        self.assertEqual(figures['pool_capacity'],
                         figures['reference_pool_capacity'])
        self.assertGreaterEqual(figures['reference_pool_used'],
                                0.95 * figures['reference_pool_capacity'])
        for final in (figures, figures['final']):
            self.assertEqual((0, 0, 0), (
                figures['overcommitted_providers'],
                final['overcommitted_pools'],
                final['reference_overcommitted_pools']))
            self.assertLessEqual(final['pool_used'], final['pool_capacity'])

    def test_a_capped_stream_says_the_fill_was_not_reached(self):
        figures = _figures(self, _run(
            'placement_accuracy.py', '--hosts', '8', '--cells', '2',
            '--requests', '5'))
        self.assertFalse(figures['reached_fill'])
        self.assertEqual(5, figures['requests'])

    def test_bad_options_are_refused_in_one_line(self):
        for args, message in (
                (['--requests', '0'],
                 "--requests: must be a whole number of at least 1, not "
                 "'0'"),
                (['--hosts', '2', '--cells', '5'],
                 '--cells: must not exceed --hosts (2), not 5'),
                (['--seed', 'x'], "--seed: invalid int value: 'x'"),
                (['--schedulers', '0'],
                 "--schedulers: must be a whole number of at least 1, not "
                 "'0'"),
                (['--hosts', '20', '--cells', '4', '--zone-levels', '3',
                  '--fan-out', '2'],
                 '--fan-out: 2 ** --zone-levels 3 = 8 leaf zones, more '
                 'than the 4 cells to put in them'),
                (['--generic', '--zone-levels', '1', '--fan-out', '2'],
                 '--generic: one pool serves the whole fleet; not with '
                 '--zone-levels'),
                (['--generic=yes'],
                 "--generic: ignored explicit argument 'yes'")):
            done = _run('placement_accuracy.py', *args, timeout=60)
            self.assertEqual(2, done.returncode, args)
            self.assertIn(message, done.stderr)
            self.assertEqual(1, len(done.stderr.strip().splitlines()),
                             done.stderr)
