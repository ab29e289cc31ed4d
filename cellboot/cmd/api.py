"""``cellboot-api``: the REST API on the built-in HTTP server (waitress).

The API is an API-level service: it reads and writes the API database,
reaches each cell's database through the cell mappings, casts boots to
the super conductor over ``[DEFAULT] transport_url``, and asks each
cell's scheduler, on the cell's bus, to release the claims of deleted
servers and to list its hosts (``cellboot.scheduler.cells``).

Usage::

    cellboot-api --config-file /etc/cellboot/cellboot.conf [--port 8774]
"""

import sys

from cellboot.api import server as api_server
from cellboot.api import wsgi
from cellboot.conf import CONF
from cellboot.db import pools
from cellboot import exception
from cellboot.scheduler import cells as cells_scheduler
from cellboot import service_runner

PROG = 'cellboot-api'

DESCRIPTION = """\
Serve the REST API (docs/api.md) under /v2.1 on [api] listen:[api]
listen_port (default 127.0.0.1:8774) with the built-in server (waitress;
limits and timeouts in [api], docs/deployment-api.md). Needs
[api_database] connection and [DEFAULT] transport_url. Also serves, outside
/v2.1, GET /healthcheck (no token) and GET /metrics (administrators); with
[metrics] port, the metrics on a port of their own too (docs/operations.md).
Runs until SIGTERM
or SIGINT; then stops accepting, lets requests in flight finish for up to
[api] shutdown_timeout seconds, and exits 0.

  cellboot-api --config-file /etc/cellboot/cellboot.conf"""


def _add_arguments(parser):
    parser.add_argument('--host', metavar='ADDRESS',
                        help='address to listen on (overrides [api] listen)')
    parser.add_argument('--port', type=int, metavar='PORT',
                        help='TCP port (overrides [api] listen_port)')


def build(context, args):
    """The HTTP server (API built first: a missing keystonemiddleware is
    a clean error before anything listens)."""
    pools.serve_as('api')
    scheduler = cells_scheduler.CellsScheduler()
    application = wsgi.make_app(scheduler)
    host = args.host or CONF.api.listen
    port = CONF.api.listen_port if args.port is None else args.port
    try:
        http = api_server.WSGIService(application, host, port)
    except OSError as exc:
        raise exception.ConfigurationError(
            reason=f'cannot listen on {host}:{port}: {exc.strerror or exc} '
                   f'(set [api] listen / listen_port, or --host / --port)')
    return [http]


def main(argv=None):
    return service_runner.main(PROG, DESCRIPTION, build, argv=argv,
                               add_arguments=_add_arguments)


if __name__ == '__main__':
    sys.exit(main())
