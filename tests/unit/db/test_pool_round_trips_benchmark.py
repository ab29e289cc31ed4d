"""``benchmarks/pool_round_trips.py`` runs on each server, says what it
measured, and refuses bad options. (What its figures are worth is
docs/benchmarks.md's.)"""

import json
import os
import subprocess
import sys

from tests import base

SCRIPT = os.path.join(os.path.dirname(__file__), '..', '..', '..',
                      'benchmarks', 'pool_round_trips.py')


def _run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args],
                          capture_output=True, text=True, timeout=120)


class _BenchmarkTests:

    CELLS = 0

    def test_a_small_run_prints_one_json_line(self):
        done = _run('--url', self.dbs.api_url, '--count', '5',
                    '--repeat', '2')
        self.assertEqual(0, done.returncode, done.stderr)
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        self.assertEqual((self.DIALECT, 2),
                         (figures['backend'], len(figures['rounds'])))
        self.assertGreater(figures['best']['cpu_us_per_pair'], 0)
        return figures


class MySQLBenchmarkTest(_BenchmarkTests, base.MySQLMixin,
                         base.DatabaseTestCase):

    DIALECT = 'mysql'

    def test_a_small_run_prints_one_json_line(self):
        figures = super().test_a_small_run_prints_one_json_line()
        # What the server counted: at least the pair's own statements.
        self.assertGreaterEqual(
            figures['best']['server_per_pair']['Questions'], 3)


class PostgreSQLBenchmarkTest(_BenchmarkTests, base.PostgreSQLMixin,
                              base.DatabaseTestCase):

    DIALECT = 'postgresql'


class OptionsTest(base.TestCase):

    def test_bad_options_are_refused(self):
        for args in (['--url', 'sqlite://', '--count', '0'],
                     ['--url', 'sqlite://', '--repeat', 'many'], []):
            done = _run(*args)
            self.assertEqual(2, done.returncode, args)
            self.assertNotIn('Traceback', done.stderr)

    def test_a_database_it_cannot_reach_is_said_so(self):
        done = _run('--url', 'mysql+pymysql://nobody@127.0.0.1:1/none',
                    '--count', '1')
        self.assertEqual(2, done.returncode)
        self.assertIn('cannot use the database at --url', done.stderr)
        self.assertNotIn('Traceback', done.stderr)
