"""benchmarks/nova_door.py keeps running: a tiny run, its JSON line."""

import json
import os
import subprocess
import sys

from tests import base
from tests.functional.nova import novaapi

SCRIPT = os.path.join(novaapi.ROOT, 'benchmarks', 'nova_door.py')


class NovaDoorBenchmarkTest(base.TestCase):

    def test_a_tiny_run_prints_both_ways_figures(self):
        novaapi.check_venv()
        done = subprocess.run(
            [sys.executable, SCRIPT, '--count', '2', '--clients', '1',
             '--warmup', '1', '--cells', '1', '--hosts', '1'],
            capture_output=True, text=True, timeout=300)
        self.assertEqual(0, done.returncode, done.stderr[-3000:])
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        for way in ('nova', 'cellboot'):
            self.assertEqual(2, figures[way]['boots'])
            self.assertGreater(figures[way]['boots_per_s'], 0)
        self.assertGreater(figures['nova_to_cellboot'], 0)

    def test_bad_arguments_are_refused_with_a_usage_error(self):
        done = subprocess.run([sys.executable, SCRIPT, '--count', '0'],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(2, done.returncode)
        self.assertIn("--count: must be a whole number of at least 1, not '0'",
                      done.stderr)

    def test_a_mirror_interval_that_is_no_duration_is_refused(self):
        for value in ('0', '-1', 'nan', 'inf', 'soon'):
            done = subprocess.run(
                [sys.executable, SCRIPT, '--mirror-interval', value],
                capture_output=True, text=True, timeout=60)
            self.assertEqual(2, done.returncode, value)
            self.assertIn('--mirror-interval: must be a number of seconds '
                          f"of at least 0.1, not '{value}'", done.stderr)
