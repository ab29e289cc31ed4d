"""A Ctrl-C before a command's ``main`` runs is one line, not a trace.

It lands while the entry point is still importing its libraries, where
no ``except KeyboardInterrupt`` of the command can catch it; importing
``cellboot.cmd`` (every entry point does, first) sets the hook that
does. Checked in a child process: the hook is the process's.
"""

import signal
import subprocess
import sys

from tests import base


class InterruptedWhileImportingTest(base.TestCase):

    def _run(self, code):
        return subprocess.run([sys.executable, '-c', code],
                              capture_output=True, text=True, timeout=60)

    def test_an_interrupt_is_one_error_line_and_a_sigint_exit(self):
        result = self._run('import cellboot.cmd\nraise KeyboardInterrupt')
        self.assertEqual('ERROR: interrupted\n', result.stderr)
        # Python still ends as killed by SIGINT, which shells expect.
        self.assertEqual(-signal.SIGINT, result.returncode)

    def test_other_errors_keep_their_traceback(self):
        result = self._run('import cellboot.cmd\nraise ValueError("x")')
        self.assertIn('Traceback', result.stderr)
        self.assertIn('ValueError: x', result.stderr)
        self.assertEqual(1, result.returncode)
