"""The REST API on a small threaded WSGI server, for one-process use.

The all-in-one serves the same WSGI application ``cellboot-api`` serves;
the standard library's server is enough for a laptop, and threads keep a
slow request (a long server list) from holding up the others.
"""

import socketserver
from wsgiref import simple_server


class _QuietHandler(simple_server.WSGIRequestHandler):
    """No access log on stderr: it would drown the demo's progress."""

    def log_message(self, format, *args):
        pass


class _ThreadingServer(socketserver.ThreadingMixIn,
                       simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


def api_application():
    """The REST API's WSGI application, as ``cellboot-api`` serves it."""
    from cellboot.api import wsgi
    return wsgi.make_app()


def make_server(host, port, app=None):
    """A WSGI server for ``app`` (default: the API), bound, not serving.

    ``port`` 0 picks a free port (read it back from ``server_port``).
    """
    server = simple_server.make_server(
        host, port, app or api_application(), server_class=_ThreadingServer,
        handler_class=_QuietHandler)
    return server
