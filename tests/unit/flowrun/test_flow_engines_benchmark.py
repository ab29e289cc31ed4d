"""``benchmarks/flow_engines.py`` runs, says what it measured, refuses
bad options. (What its figures are worth is docs/benchmarks.md's.)"""

import json
import os
import subprocess
import sys

from tests import base

SCRIPT = os.path.join(os.path.dirname(__file__), '..', '..', '..',
                      'benchmarks', 'flow_engines.py')


def _run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args],
                          capture_output=True, text=True, timeout=120)


class FlowEnginesBenchmarkTest(base.TestCase):

    def test_a_small_run_prints_one_json_line_per_kind(self):
        done = _run('--count', '3', '--repeat', '1')
        self.assertEqual(0, done.returncode, done.stderr)
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        self.assertEqual({'boot', 'cross-cell', 'reschedule'},
                         set(figures['kinds']))
        for kind in figures['kinds'].values():
            self.assertGreater(kind['cpu_ms_per_engine'], 0)

    def test_bad_options_are_refused(self):
        for args in (['--count', '0'], ['--repeat', '-2'],
                     ['--count', 'many']):
            done = _run(*args)
            self.assertEqual(2, done.returncode, args)
            self.assertIn('at least 1', done.stderr)
            self.assertNotIn('Traceback', done.stderr)
