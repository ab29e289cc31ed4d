"""Run a cellboot console module as a child process of a test.

Command tests start the real entry point (``python -m cellboot.cmd.X``)
the way an operator would; the process is killed at clean-up whatever
the test did, so a failing test never leaves a service running.
"""

import subprocess
import sys


def start_module(test, module, *args):
    """Start ``python -m module *args`` with pipes; killed at clean-up."""
    process = subprocess.Popen(
        [sys.executable, '-m', module, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    test.addCleanup(_kill, process)
    return process


def _kill(process):
    if process.poll() is None:
        process.kill()
        process.communicate()
