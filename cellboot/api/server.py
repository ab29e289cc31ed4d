"""cellboot-api's built-in HTTP server, as a service with start/stop/wait.

Served by waitress (see docs/deployment-api.md for why waitress and not
cheroot or wsgiref): one asynchronous loop reads requests, so slow
clients cost a socket and not a thread; a bounded pool of worker
threads runs the application; HTTP/1.1 with keep-alive and chunked
request bodies. ``waitress_http`` adds JSON error answers and the
request and idle timeouts; ``http_guards`` sheds load with 503 (the
application is wrapped here, so every user of this server gets it).

The loop runs in a thread of its own, one poll at a time, so that it
can also sweep the connections (``HardenedServer.sweep``) and drain
them on ``stop()``: no new connection, idle and incomplete ones closed
at once, requests in flight given ``[api] shutdown_timeout`` seconds to
finish, then everything closed.
"""

import threading
import time

from oslo_log import log as logging
from waitress import adjustments
from waitress import task as waitress_task
from waitress import wasyncore

from cellboot.api import http_guards
from cellboot.api import waitress_http
from cellboot.conf import CONF

LOG = logging.getLogger(__name__)

# Seconds the loop sleeps at most in one poll; the sweep's resolution.
_TICK = 0.25
# Worker threads beyond the ones running or waiting to run the
# application: they answer 503 at once when both are full.
SHEDDING_THREADS = 2
# Seconds worker threads get to finish once the connections are closed.
_WORKER_EXIT_SECONDS = 1.0


class WSGIService:
    """Serves ``application`` on ``host``:``port`` (0: any free port).

    Every keyword left out comes from ``[api]``. Raises ``OSError`` when
    the address cannot be listened on.
    """

    def __init__(self, application, host, port, threads=None,
                 max_connections=None, request_timeout=None,
                 idle_timeout=None, shed_wait=None, shutdown_timeout=None,
                 conf=None):
        conf = conf or CONF.api
        self.threads = threads or conf.wsgi_threads
        self.shutdown_timeout = (conf.shutdown_timeout
                                 if shutdown_timeout is None
                                 else shutdown_timeout)
        self.guard = http_guards.AdmissionLimit(
            application, self.threads,
            conf.shed_wait if shed_wait is None else shed_wait)
        adj = adjustments.Adjustments(
            host=host, port=port,
            threads=2 * self.threads + SHEDDING_THREADS,
            # waitress counts its listening socket and wake-up pipe.
            connection_limit=(max_connections or conf.max_connections) + 2,
            max_request_header_size=conf.max_request_header_size,
            # waitress refuses a body of this size or more.
            max_request_body_size=conf.max_request_body_size + 1,
            asyncore_use_poll=True, asyncore_loop_timeout=_TICK,
            ident='cellboot-api', log_socket_errors=False,
            expose_tracebacks=False)
        self._map = {}
        self._dispatcher = waitress_task.ThreadedTaskDispatcher()
        try:
            self._server = waitress_http.HardenedServer(
                http_guards.LengthRequired(self.guard),
                request_timeout=(conf.request_timeout
                                 if request_timeout is None
                                 else request_timeout),
                idle_timeout=(conf.idle_timeout if idle_timeout is None
                              else idle_timeout),
                map=self._map, dispatcher=self._dispatcher, adj=adj,
                sockinfo=adj.listen[0])
        except BaseException:
            wasyncore.close_all(self._map)
            raise
        self.host = self._server.effective_host
        self.port = int(self._server.effective_port)
        self._thread = None
        self._stop_requested = threading.Event()

    @property
    def url(self):
        host = f'[{self.host}]' if ':' in self.host else self.host
        return f'http://{host}:{self.port}'

    def start(self):
        self._dispatcher.set_thread_count(self._server.adj.threads)
        self._thread = threading.Thread(target=self._serve,
                                        name='cellboot-api', daemon=True)
        self._thread.start()
        LOG.info('cellboot-api listening on %s', self.url)

    def _serve(self):
        server = self._server
        deadline = None
        next_sweep = 0.0
        try:
            while True:
                wasyncore.loop(timeout=_TICK, use_poll=True, map=self._map,
                               count=1)
                now = time.time()
                if deadline is None and self._stop_requested.is_set():
                    LOG.info('cellboot-api stopping: no new connections; '
                             'requests in flight have %s s to finish',
                             self.shutdown_timeout)
                    server.stop_accepting()
                    deadline = time.monotonic() + self.shutdown_timeout
                    next_sweep = 0.0
                # Once a tick, not on every event: a sweep visits every
                # connection.
                if now >= next_sweep:
                    server.sweep(now, stopping=deadline is not None)
                    next_sweep = now + _TICK
                if deadline is not None and (
                        not server.active_channels
                        or time.monotonic() >= deadline):
                    break
        except Exception:
            LOG.exception('The cellboot-api HTTP loop failed; the API is '
                          'no longer served')
        finally:
            if server.active_channels:
                LOG.warning('Closing %d connection(s) whose requests did '
                            'not finish within [api] shutdown_timeout',
                            len(server.active_channels))
            server.close_all_channels()
            self._dispatcher.shutdown(timeout=_WORKER_EXIT_SECONDS)
            wasyncore.close_all(self._map)

    def stop(self):
        """Begin to stop (any thread); ``wait()`` returns once stopped."""
        self._stop_requested.set()
        if self._thread is not None and self._thread.is_alive():
            try:
                self._server.pull_trigger()
            except OSError:
                pass  # the loop already ended and closed the pipe

    def wait(self):
        if self._thread is not None:
            self._thread.join()
        else:
            wasyncore.close_all(self._map)
