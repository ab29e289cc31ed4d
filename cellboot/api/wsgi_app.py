"""The API as a WSGI application for servers other than the built-in one.

uWSGI, mod_wsgi or gunicorn load ``cellboot.wsgi.api:application``,
which is ``init_application()``: read the configuration, set up
logging, and return the application behind
``http_guards`` (411 for a body without a length, 503 past ``[api]
wsgi_threads`` requests at once in this process). The server's own
limits and timeouts are then the server's to set (docs/deployment-api.md
shows them for uWSGI and mod_wsgi); ``[api] listen`` and the other
options of the built-in server do not apply, nor does ``[metrics]
port`` (every worker would try to listen on it): ``/metrics`` answers
with the counts of the worker that takes the request
(docs/operations.md).

The configuration files are named by environment variables, as OpenStack
services do under a WSGI server (there is no command line):
``OS_CELLBOOT_CONFIG_DIR`` (default ``/etc/cellboot``) and
``OS_CELLBOOT_CONFIG_FILES``, a ``;``-separated list of files in that
directory or absolute paths (default ``cellboot.conf``).
"""

import logging as std_logging
import os

from oslo_log import log as logging

from cellboot.api import http_guards
from cellboot.api import wsgi
from cellboot.conf import CONF
from cellboot.db import pools
from cellboot import exception
from cellboot.scheduler import cells as cells_scheduler

LOG = logging.getLogger(__name__)

CONFIG_DIR_ENV = 'OS_CELLBOOT_CONFIG_DIR'
CONFIG_FILES_ENV = 'OS_CELLBOOT_CONFIG_FILES'
DEFAULT_CONFIG_DIR = '/etc/cellboot'
DEFAULT_CONFIG_FILE = 'cellboot.conf'
PROG = 'cellboot-api'


def config_files(environ):
    """The configuration files ``environ`` names; each must exist.

    :raises: ConfigurationError naming the missing files and the
        variables that name them.
    """
    directory = environ.get(CONFIG_DIR_ENV) or DEFAULT_CONFIG_DIR
    names = [name.strip() for name in
             environ.get(CONFIG_FILES_ENV, DEFAULT_CONFIG_FILE).split(';')]
    paths = [os.path.join(directory, name) for name in names if name]
    missing = [path for path in paths if not os.path.isfile(path)]
    if not paths or missing:
        raise exception.ConfigurationError(
            reason=f'no configuration file {", ".join(missing)}: set '
                   f'{CONFIG_FILES_ENV} (";"-separated, relative to '
                   f'{CONFIG_DIR_ENV}, default {DEFAULT_CONFIG_DIR}) in the '
                   f'WSGI server\'s environment')
    return paths


def init_application(environ=None):
    """Configure this process and return the guarded API application."""
    files = config_files(os.environ if environ is None else environ)
    logging.register_options(CONF)
    CONF([], project='cellboot', prog=PROG, default_config_files=files)
    logging.setup(CONF, PROG)
    std_logging.captureWarnings(True)
    # Per worker process, as under cellboot-api: wsgi_threads at once.
    pools.serve_as('api')
    application = wsgi.make_app(cells_scheduler.CellsScheduler())
    LOG.info('cellboot-api WSGI application ready (configuration %s)',
             ', '.join(files))
    return http_guards.wrap(application)
