"""What the front of cellboot-api refuses before the application runs.

Two WSGI middlewares that hold under any server (the built-in one,
uWSGI, mod_wsgi), because they need nothing from the server but the
environ:

* ``LengthRequired`` — a POST, PUT or PATCH must say how long its body
  is (``Content-Length``, or an HTTP/1.1 chunked body that the server
  decodes). Without either, HTTP gives the body a length of zero; the
  client meant to send one, so it gets a 411 that says what to send
  instead of a puzzling "no body" error (and a server that would read
  until the client hangs up never gets the chance).
* ``AdmissionLimit`` — at most ``limit`` requests inside the
  application at once; one that finds them all busy waits up to
  ``wait`` seconds, and when as many are already waiting it does not
  wait at all: it is answered 503 with ``Retry-After``. A flood then
  costs the clients a quick 503 each instead of a queue that grows
  until every request times out.

``wrap(application)`` applies both with the ``[api]`` options; the
built-in server (``cellboot.api.server``) and the module other servers
load (``cellboot.api.wsgi_app``) both call it.
"""

import threading
import time

from oslo_log import log as logging

from cellboot.api import errors
from cellboot.conf import CONF

LOG = logging.getLogger(__name__)

# Methods whose requests carry a body in this API.
BODY_METHODS = frozenset(('POST', 'PUT', 'PATCH'))
# Seconds a client told 503 should wait before it tries again.
RETRY_AFTER_SECONDS = 1
# Seconds between two warnings about shed requests (each counts them).
_WARN_EVERY = 10.0


class LengthRequired:
    """411 for a POST, PUT or PATCH that does not say its body's length."""

    def __init__(self, application):
        self.application = application

    @staticmethod
    def _chunked(environ):
        # Transfer codings are HTTP/1.1's: a server reading an HTTP/1.0
        # request leaves them undecoded (and the body unread).
        return (environ.get('SERVER_PROTOCOL') == 'HTTP/1.1'
                and 'chunked' in environ.get('HTTP_TRANSFER_ENCODING',
                                             '').lower())

    def __call__(self, environ, start_response):
        if (environ.get('REQUEST_METHOD') in BODY_METHODS
                and not environ.get('CONTENT_LENGTH')
                and not self._chunked(environ)):
            response = errors.error_response(
                411, 'A request body is expected: send a Content-Length '
                     'header (0 for an empty body) or a chunked body.')
            return response(environ, start_response)
        return self.application(environ, start_response)


class _Releasing:
    """The application's response body; frees the slot once it is done.

    A WSGI response may be produced lazily while the server iterates
    it, so the slot is released in ``close()``, which every server
    calls at the end (PEP 3333), not when the application returns.
    """

    def __init__(self, body, release):
        self._body = body
        self._release = release

    def __iter__(self):
        return iter(self._body)

    def close(self):
        try:
            close = getattr(self._body, 'close', None)
            if close is not None:
                close()
        finally:
            release, self._release = self._release, None
            if release is not None:
                release()


class AdmissionLimit:
    """At most ``limit`` requests in ``application``; 503 beyond.

    ``waiting`` requests at most wait, each up to ``wait`` seconds (by
    default as many as may run: a burst the size of the pool is served,
    not refused). ``shed`` counts the requests answered 503.
    """

    def __init__(self, application, limit, wait, waiting=None):
        self.application = application
        self.limit = limit
        self.wait = wait
        self.max_waiting = limit if waiting is None else waiting
        self.shed = 0
        self._slots = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self._waiting = 0
        self._shed_unreported = 0
        self._last_warning = 0.0

    def _admit(self):
        if self._slots.acquire(blocking=False):
            return True
        with self._lock:
            if self._waiting >= self.max_waiting:
                return False
            self._waiting += 1
        try:
            return self._slots.acquire(timeout=self.wait)
        finally:
            with self._lock:
                self._waiting -= 1

    def _overloaded(self):
        now = time.monotonic()
        with self._lock:
            self.shed += 1
            self._shed_unreported += 1
            if now - self._last_warning < _WARN_EVERY:
                return
            count, self._shed_unreported = self._shed_unreported, 0
            self._last_warning = now
        LOG.warning('Answered 503 to %d request(s): all %d of [api] '
                    'wsgi_threads were busy for [api] shed_wait = %s s. '
                    'Raise wsgi_threads if the host has capacity to spare, '
                    'or add API servers.', count, self.limit, self.wait)

    def __call__(self, environ, start_response):
        if not self._admit():
            self._overloaded()
            response = errors.unavailable(
                f'cellboot-api is busy: all {self.limit} request slots are '
                f'in use. Retry in {RETRY_AFTER_SECONDS} second(s).',
                RETRY_AFTER_SECONDS)
            return response(environ, start_response)
        try:
            body = self.application(environ, start_response)
        except BaseException:
            self._slots.release()
            raise
        return _Releasing(body, self._slots.release)


def wrap(application, conf=None):
    """``application`` behind both guards, sized by ``[api]``."""
    conf = conf or CONF.api
    return LengthRequired(AdmissionLimit(
        application, conf.wsgi_threads, conf.shed_wait))
