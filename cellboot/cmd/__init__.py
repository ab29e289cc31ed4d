"""Console-script entry points; each sub-package is one command.

Importing TaskFlow imports eventlet (if installed), which warns on
stderr that it is deprecated. A command's stderr is for the operator's
errors, and we never use eventlet, so that one warning is silenced here,
before any command imports TaskFlow.

A Ctrl-C while a command is still importing its libraries (a second or
so, before its ``main`` can catch anything) would print the traceback of
whatever import it cut short. Every entry point imports this package
first, so the hook set here turns that into the one line a Ctrl-C
prints anywhere else; Python still exits as interrupted by SIGINT.
"""

import sys
import warnings

warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')


def _interrupted_quietly(kind, value, trace, _default=sys.excepthook):
    if issubclass(kind, KeyboardInterrupt):
        print('ERROR: interrupted', file=sys.stderr, flush=True)
        return
    _default(kind, value, trace)


sys.excepthook = _interrupted_quietly
