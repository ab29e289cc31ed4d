"""A built-in threaded WSGI server, as a service with start/stop/wait.

Good enough for the embedded mode and tests (one thread per request,
``[api] wsgi_threads`` at a time); production deployments may serve
``cellboot.api.wsgi`` with any WSGI server instead.
"""

import socketserver
import threading
from wsgiref import simple_server

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class _QuietHandler(simple_server.WSGIRequestHandler):
    """Logs requests through oslo.log instead of stderr."""

    def log_message(self, format, *args):
        LOG.debug('%s %s', self.address_string(), format % args)


class _ThreadingServer(socketserver.ThreadingMixIn,
                       simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, handler, max_threads):
        self._slots = threading.BoundedSemaphore(max_threads)
        super().__init__(address, handler)

    def process_request(self, request, client_address):
        self._slots.acquire()
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class WSGIService:
    """Serves ``application`` on ``host``:``port`` (0: any free port)."""

    def __init__(self, application, host, port, threads=16):
        self._server = simple_server.make_server(
            host, port, application,
            server_class=lambda address, handler: _ThreadingServer(
                address, handler, threads),
            handler_class=_QuietHandler)
        self.host, self.port = self._server.server_address[:2]
        self._thread = None

    @property
    def url(self):
        return f'http://{self.host}:{self.port}'

    def start(self):
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name='cellboot-api', daemon=True)
        self._thread.start()
        LOG.info('cellboot-api listening on %s', self.url)

    def stop(self):
        self._server.shutdown()

    def wait(self):
        if self._thread is not None:
            self._thread.join()
        self._server.server_close()
