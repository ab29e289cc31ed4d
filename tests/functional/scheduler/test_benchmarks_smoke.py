"""The scheduler benchmarks keep running: tiny runs, their JSON lines.

``benchmarks/scheduler.py`` (throughput and concurrency modes) and
``benchmarks/placement_accuracy.py`` run through both scheduler levels
on fleets of a few hosts, print their figures as the last line, and
refuse bad options with one line and exit status 2. (What the figures
are worth is docs/benchmarks.md's.)
"""

import json
import os
import subprocess
import sys

from tests import base

BENCHMARKS = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                          os.pardir, 'benchmarks')

THROUGHPUT_KEYS = {
    'hosts', 'cells', 'backend', 'requests', 'decisions_per_s', 'p50_ms',
    'p99_ms', 'cpu_ms', 'rss_mb', 'cache_mb', 'cell_cache_mb', 'load_s',
    'api_level_mb', 'api_level_at_claims_bound_mb', 'api_level_traced_mb',
    'extra_cells_per_request', 'placed', 'rejected', 'failed_claims'}
CONCURRENCY_KEYS = THROUGHPUT_KEYS - {'api_level_traced_mb'} | {
    'processes', 'overcommitted_providers', 'conflicts', 'unavailable'}
ACCURACY_KEYS = {
    'hosts', 'cells', 'seed', 'placed', 'reference_placed', 'placed_ratio',
    'extra_cells_per_request', 'decisions_per_s', 'first_choice_rejections',
    'hosts_used', 'reference_hosts_used', 'cell_fill_stddev',
    'reference_fill', 'false_refusals', 'reached_fill', 'final'}


def _run(script, *args, timeout=300):
    return subprocess.run(
        [sys.executable, os.path.join(BENCHMARKS, script), *args],
        capture_output=True, text=True, timeout=timeout)


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

    def test_concurrent_processes_place_exactly_the_capacity(self):
        figures = _figures(self, _run(
            'scheduler.py', '--hosts', '10', '--cells', '2', '--processes',
            '2', '--requests', '40', '--capacity', '30'))
        self.assertLessEqual(CONCURRENCY_KEYS, set(figures))
        self.assertEqual(30, figures['placed'])
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
                 "must be GROUP.OPTION=VALUE, not 'nodot'")):
            done = _run('scheduler.py', *args, timeout=60)
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
                (['--seed', 'x'], "--seed: invalid int value: 'x'")):
            done = _run('placement_accuracy.py', *args, timeout=60)
            self.assertEqual(2, done.returncode, args)
            self.assertIn(message, done.stderr)
            self.assertEqual(1, len(done.stderr.strip().splitlines()),
                             done.stderr)
