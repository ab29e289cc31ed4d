"""What ``GET /healthcheck`` checks: the API's database and its broker.

oslo.middleware's healthcheck application answers the request (200, or
503 when a check fails; text, JSON or HTML as the client accepts; the
reasons only, unless ``[healthcheck] detailed``). Its own plugins
(``[healthcheck] backends``: ``disable_by_file`` to take an API out of a
load balancer by creating a file) run as they do everywhere; cellboot
adds two checks of its own, always on, because an API that cannot reach
either cannot accept a boot:

* ``APIDatabaseCheck`` — a new connection to the API database;
* ``BrokerCheck`` — a TCP connection to a host of ``[DEFAULT]
  transport_url`` (to one at least: a cluster with a node up is
  usable); the in-process ``fake://`` bus is always up.

Each check is cheap and **bounded**: it runs in a thread of its own and
is reported as not answering after ``[metrics] health_check_timeout``
seconds, whatever the database driver or the network does. A check
still running from an earlier request is not started again (a probe
hammered every second against a hung database would otherwise pile
threads up): it is reported as still not answering. A failure is told
in one line (what could not be reached and the error's class; the
error's message in ``details``, shown only when detailed, with the
database URL's password masked), never a traceback.
"""

import socket
import threading
import time

from oslo_log import log as logging
import oslo_messaging
from oslo_middleware import healthcheck
from oslo_middleware.healthcheck import pluginbase

from cellboot.conf import CONF
from cellboot.db import migration
from cellboot.rpc import inprocess

LOG = logging.getLogger(__name__)

# Broker ports when the transport URL names none, per driver.
DEFAULT_PORTS = {'rabbit': 5672, 'amqp': 5672, 'kafka': 9092}
# Characters of an error's message kept in a check's details.
_DETAILS_LENGTH = 300


class BoundedCheck(pluginbase.HealthcheckBaseExtension):
    """A healthcheck plugin whose ``probe()`` may take at most
    ``[metrics] health_check_timeout`` seconds.

    ``probe()`` returns a sentence saying what answered, or raises.
    ``what`` names the thing checked in the reasons.
    """

    what = None

    def __init__(self, oslo_conf=None, conf=None):
        super().__init__(oslo_conf or CONF, conf or {})
        self._lock = threading.Lock()
        self._running = None    # (thread, started at, result holder)

    def probe(self):
        raise NotImplementedError

    def _run(self, holder):
        try:
            holder['ok'] = self.probe()
        except Exception as exc:
            holder['error'] = exc

    def healthcheck(self, server_port):
        timeout = CONF.metrics.health_check_timeout
        with self._lock:
            if self._running is None:
                holder = {}
                thread = threading.Thread(
                    target=self._run, args=(holder,), daemon=True,
                    name=f'healthcheck {self.what}')
                self._running = (thread, time.monotonic(), holder)
                thread.start()
            thread, started, holder = self._running
        thread.join(max(0.0, started + timeout - time.monotonic()))
        if thread.is_alive():
            return pluginbase.HealthcheckResult(
                available=False,
                reason=f'{self.what}: no answer within {timeout:g} s',
                details=f'checking since {time.monotonic() - started:.1f}'
                        f' s ago')
        with self._lock:
            if self._running is not None and self._running[0] is thread:
                self._running = None
        if 'error' in holder:
            exc = holder['error']
            return pluginbase.HealthcheckResult(
                available=False,
                reason=f'{self.what}: not reachable '
                       f'({type(exc).__name__})',
                details=str(exc)[:_DETAILS_LENGTH])
        return pluginbase.HealthcheckResult(
            available=True, reason=f'{self.what}: {holder["ok"]}')


class APIDatabaseCheck(BoundedCheck):
    """A new connection to the API database (``migration.probe``)."""

    what = 'API database'

    def probe(self):
        migration.probe(CONF.api_database.connection)
        return 'OK'


class BrokerCheck(BoundedCheck):
    """A TCP connection to one host of ``[DEFAULT] transport_url``."""

    what = 'message broker'

    def probe(self):
        url = oslo_messaging.TransportURL.parse(CONF, CONF.transport_url)
        driver = url.transport.split('+')[0]
        if driver == inprocess.DRIVER:
            return 'OK (the in-process bus)'
        hosts = [(host.hostname or 'localhost',
                  host.port or DEFAULT_PORTS.get(driver, 5672))
                 for host in url.hosts] or [('localhost',
                                            DEFAULT_PORTS.get(driver, 5672))]
        timeout = CONF.metrics.health_check_timeout
        failures = []
        for hostname, port in hosts:
            try:
                with socket.create_connection((hostname, port),
                                              timeout=timeout):
                    return f'OK ({hostname}:{port} accepts connections)'
            except OSError as exc:
                failures.append(f'{hostname}:{port}: '
                                f'{exc.strerror or type(exc).__name__}')
        raise ConnectionError('; '.join(failures))


class _Extension:
    """What the healthcheck application reads of a stevedore extension."""

    def __init__(self, obj):
        self.obj = obj


def application(fallback):
    """oslo.middleware's healthcheck application with cellboot's checks.

    ``fallback``: the application a request goes to when the
    healthcheck lets it through (``[healthcheck]
    allowed_source_ranges``, ``ignore_proxied_requests``).

    cellboot's checks are added to the plugins the configuration names
    (loaded by stevedore as oslo does) rather than declared as entry
    points: they are this API's, always on, and need no configuration.
    """
    app = healthcheck.Healthcheck(fallback, CONF)
    # oslo.middleware iterates ``_backends`` and calls each
    # extension's ``obj.healthcheck(port)`` (checked by
    # tests/unit/api/test_health.py).
    app._backends = list(app._backends) + [
        _Extension(APIDatabaseCheck()), _Extension(BrokerCheck())]
    return app
