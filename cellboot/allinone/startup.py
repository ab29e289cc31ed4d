"""What ``cellboot all-in-one`` checks and prepares before it creates
anything: its port, its state directory, its log file.

A taken port used to be found only when the API was started, last,
after the databases and cells had been created in the state directory:
an operator who mistyped ``--port`` was left with a half-made
deployment. The port is now tried first; what the deployment then
creates (the state directory, the log file in it) is told in one line
when it cannot be.

The logs go to a file, ``all-in-one.log`` in the state directory unless
``[DEFAULT] log_file``/``log_dir`` name another, at INFO (DEBUG with
``--debug``); the terminal shows the progress lines and the warnings
only (everything with ``--debug``), so the story of a start or a demo
stays readable and the services' full account is still kept.
"""

import logging as std_logging
import os
import socket

from cellboot.conf import CONF
from cellboot.console import configuration
from cellboot import exception

# The log file's name when the configuration names none.
LOG_FILE = 'all-in-one.log'


def cannot_listen(host, port, exc):
    """The error of an API that cannot listen on ``host:port``."""
    return exception.ConfigurationError(
        reason=f'cannot listen on {host}:{port}: {exc.strerror or exc} '
               f'(choose another --port, or --port 0 for any free one)')


def check_port(host, port):
    """Raise ``cannot_listen`` unless ``host:port`` can be listened on.

    Bound and let go at once, with the same ``SO_REUSEADDR`` the API's
    server sets (a port left in TIME_WAIT by a previous run is free to
    it). Port 0 (any free port) is always free. Another process may
    still take the port before the API binds it: that is then the same
    error, later.
    """
    if not port:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
            probe.listen()
        except OSError as exc:
            raise cannot_listen(host, port, exc)


def make_state_dir(state_dir):
    """Create ``state_dir`` (and its parents) if missing; one line if not."""
    try:
        os.makedirs(state_dir, exist_ok=True)
    except OSError as exc:
        raise exception.ConfigurationError(
            reason=f'cannot create the state directory {state_dir}: '
                   f'{exc.strerror or exc} (choose another --state-dir)')


def log_to_file(prog, state_dir, debug):
    """Send the logs to their file and the warnings to stderr; its path.

    The file is the configured one (``log_dir`` alone:
    ``cellboot-all-in-one.log`` in it), else ``all-in-one.log`` in
    ``state_dir``.
    """
    if not configuration.logs_to_file():
        CONF.set_override('log_file', os.path.join(state_dir, LOG_FILE))
    configuration.setup_logging(prog)
    if not debug:
        for handler in std_logging.getLogger().handlers:
            if (isinstance(handler, std_logging.StreamHandler) and
                    not isinstance(handler, std_logging.FileHandler)):
                handler.setLevel(std_logging.WARNING)
    return os.path.abspath(os.path.join(CONF.log_dir or '', CONF.log_file))
