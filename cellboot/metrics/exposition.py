"""Where a scrape reads this process's metrics.

* ``render(accept)`` — the text of every metric in the format the
  scraper accepts (Prometheus text, or OpenMetrics), for cellboot-api's
  ``GET /metrics`` (``cellboot.api.operator_paths``);
* ``MetricsServer`` — prometheus_client's own small HTTP server, in a
  thread of the process, on ``[metrics] host``:``port``, unauthenticated:
  what a conductor, a scheduler or a compute host (and an API whose
  scraper cannot send a token) serves. ``services()`` gives it to the
  daemons (``cellboot.service_runner``) when ``[metrics] port`` is set.
"""

from oslo_log import log as logging
import prometheus_client
from prometheus_client import exposition

from cellboot.conf import CONF
from cellboot import exception

LOG = logging.getLogger(__name__)


def render(accept=None):
    """``(body bytes, content type)`` of every metric, for ``accept``.

    An ``Accept`` header prometheus_client cannot read (a version that
    is not a number: it raises TypeError) gets the default text format:
    what the client accepts is a preference, not a reason to fail.
    """
    try:
        encoder, content_type = exposition.choose_encoder(accept or '')
        return encoder(prometheus_client.REGISTRY), content_type
    except (TypeError, ValueError) as exc:
        LOG.debug('Unreadable Accept header %r (%s): the text format',
                  accept, exc)
    encoder, content_type = exposition.choose_encoder('')
    return encoder(prometheus_client.REGISTRY), content_type


class MetricsServer:
    """prometheus_client's HTTP server as a service (start/stop/wait).

    Port 0 takes any free port (tests); ``port`` is the one listened on
    once started.
    """

    def __init__(self, host, port):
        self.host = host
        self.port = port
        self._server = self._thread = None

    @property
    def url(self):
        host = f'[{self.host}]' if ':' in self.host else self.host
        return f'http://{host}:{self.port}/metrics'

    def start(self):
        try:
            self._server, self._thread = prometheus_client.start_http_server(
                self.port, addr=self.host)
        except OSError as exc:
            raise exception.ConfigurationError(
                reason=f'cannot serve the metrics on {self.host}:'
                       f'{self.port}: {exc.strerror or exc} (set [metrics] '
                       f'host and port; 0 serves none)')
        self.port = self._server.server_address[1]
        LOG.info('Metrics served on %s', self.url)

    def stop(self):
        if self._server is not None:
            self._server.shutdown()

    def wait(self):
        if self._server is not None:
            self._thread.join()
            self._server.server_close()
            self._server = None


def services():
    """``[MetricsServer]`` when ``[metrics] port`` is set, else ``[]``."""
    if not CONF.metrics.port:
        return []
    return [MetricsServer(CONF.metrics.host, CONF.metrics.port)]
