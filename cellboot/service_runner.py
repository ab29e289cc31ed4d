"""Run long-lived services until SIGTERM or SIGINT: the daemons' ``main``.

``cellboot-conductor``, ``cellboot-compute`` and ``cellboot-scheduler``
share everything but what they serve: the command line
(``--config-file``, ``--config-dir``, ``--debug``, plus options of their
own), configuration and logging, the signal handling, a clean stop, and
how errors are told. Each passes a ``build(context, args)`` function that
returns its services: objects with ``start()``, ``stop()`` and
``wait()`` (``cellboot.service.RPCService``, or a loop of its own such as
a heartbeat). They are started in order and stopped in reverse order;
SIGTERM or SIGINT stops them, lets the requests in flight finish, and
exits 0.

Errors before or while starting (a missing configuration file, a bad
transport URL, a database that is down) are one ``ERROR:`` line on stderr
and exit code 1; an unexpected error is one line too, with the traceback
only under ``--debug``. No traceback reaches an operator who did not ask.

A library rather than an entry point: ``cellboot all-in-one`` runs its
whole deployment as one such service, with the same signals and errors.
"""

import logging as std_logging
import signal
import sys
import threading
import time
import traceback

import oslo_messaging
from oslo_log import log as logging

from cellboot.console import configuration
from cellboot.console import output
from cellboot.console import parsing
from cellboot import context as cb_context
from cellboot.metrics import exposition
from cellboot import rpc

LOG = logging.getLogger(__name__)

EXIT_OK = parsing.EXIT_OK
EXIT_ERROR = parsing.EXIT_ERROR
EXIT_UNEXPECTED = parsing.EXIT_UNEXPECTED

EXIT_CODES = (
    (EXIT_OK, 'stopped by SIGTERM or SIGINT after finishing the requests '
              'in flight'),
    (EXIT_ERROR, 'could not start (configuration, database or transport); '
                 'explained on stderr in one ERROR: line'),
)

# How often the main thread looks up from waiting for a signal.
_POLL_SECONDS = 0.5


def build_parser(prog, description):
    """The command line every service shares; add your own options."""
    parser = parsing.Parser(prog=prog, description=description,
                            epilog=parsing.exit_codes_epilog(EXIT_CODES))
    configuration.add_arguments(parser)
    parser.add_argument(
        '--debug', action='store_true',
        help='log at DEBUG level and show the traceback of an unexpected '
             'error')
    return parser


def load_configuration(prog, args):
    """Read the configuration files into ``CONF`` and set up logging."""
    configuration.load(prog, args)
    std_logging.captureWarnings(True)


def describe(exc):
    """One operator's line for ``exc``, or None if nobody expected it."""
    message = output.describe(exc)
    if message is not None:
        return message
    if isinstance(exc, oslo_messaging.MessagingException):
        return f'messaging error: {exc}'
    return None


class StopRequested(BaseException):
    """A signal came while the services were still starting.

    A BaseException, like KeyboardInterrupt, so that the retry loops of
    a transport that cannot reach its broker do not swallow it.
    """


class _Stopper:
    """Turns SIGTERM/SIGINT into an event the main thread waits for.

    While the services start (a broker that is down makes a start retry
    for ever), a signal interrupts the start instead.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self):
        self.event = threading.Event()
        self.received = None
        self._starting = True

    def install(self):
        for signum in self.SIGNALS:
            signal.signal(signum, self._handle)

    def started(self):
        self._starting = False

    def _handle(self, signum, frame):
        self.received = signal.Signals(signum).name
        self.event.set()
        if self._starting:
            raise StopRequested(self.received)

    def wait(self):
        while not self.event.wait(_POLL_SECONDS):
            pass
        return self.received


def run(services, stopper=None, name=None):
    """Start ``services``, wait for a signal, stop them in reverse order.

    With a ``name`` (the program's), a stop prints exactly one line on
    stdout once every service has stopped, whatever the logs say and
    wherever they go: the operator at a terminal, or the journal of a
    unit, sees that the process ended cleanly and after how long.
    """
    stopper = stopper or _Stopper()
    stopper.install()
    started = []
    received = None
    try:
        for service in services:
            service.start()
            started.append(service)
        stopper.started()
        LOG.info('Started %d service(s); waiting for SIGTERM or SIGINT',
                 len(started))
        received = stopper.wait()
        LOG.info('Caught %s, stopping', received)
    except StopRequested as stop:
        received = stop
        LOG.info('Caught %s while starting, stopping', stop)
    finally:
        began = time.monotonic()
        for service in reversed(started):
            service.stop()
        for service in reversed(started):
            service.wait()
        rpc.cleanup()
    if name is not None:
        output.say(stop_line(name, received, len(started),
                             time.monotonic() - began))
    return EXIT_OK


def stop_line(name, received, count, seconds):
    """``cellboot-scheduler: SIGTERM; 2 services stopped in 0.1 s``.

    ``received`` a StopRequested: the signal came while the services
    were starting (one that was starting has stopped itself, so how
    many were "started" tells nothing).
    """
    if isinstance(received, StopRequested):
        return f'{name}: {received} while starting; stopped before ready'
    return (f'{name}: {received}; {output.plural(count, "service")} '
            f'stopped in {seconds:.1f} s')


def main(prog, description, build, argv=None, add_arguments=None):
    """Parse, configure, build the services and run them; the exit code.

    ``add_arguments(parser)`` adds the command's own options;
    ``build(context, args)`` returns its services (after configuration
    is loaded, so it may read ``CONF`` and open databases). With
    ``[metrics] port`` set, the metrics server starts first
    (``cellboot.metrics.exposition``), so that even a service that
    waits for its broker can be watched.
    """
    parser = build_parser(prog, description)
    if add_arguments is not None:
        add_arguments(parser)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        load_configuration(prog, args)
        services = build(cb_context.get_admin_context(), args)
        return run(exposition.services() + list(services), name=prog)
    except KeyboardInterrupt:
        output.error('interrupted')
        return EXIT_ERROR
    except Exception as exc:
        if args.debug:
            traceback.print_exc(file=sys.stderr)
        message = describe(exc)
        if message is not None:
            output.error(message)
            return EXIT_ERROR
        output.error(f'unexpected {type(exc).__name__}: {exc} (run again '
                     f'with --debug to see the traceback)')
        return EXIT_UNEXPECTED
