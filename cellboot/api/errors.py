"""Errors as the client sees them: nova-shaped JSON with an HTTP code.

Every error body has the shape ``{"badRequest": {"code": 400,
"message": "..."}}``; the key names the kind of error as Nova names it.
Handlers raise ``HTTPError`` (or a domain error whose ``code`` is a 4xx,
which is translated here); ``FaultWrapper`` is the last line: a
database that cannot be reached becomes a 503 with ``Retry-After`` (see
``database_unavailable``), anything else a logged 500, which the fuzzing
test proves no input reaches.
"""

from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_serialization import jsonutils
import webob
import webob.dec

from cellboot.db import refusals
from cellboot.db import unstorable
from cellboot import exception

LOG = logging.getLogger(__name__)

# Nova's name of the error body's key, per status code.
ERROR_KEYS = {
    400: 'badRequest',
    401: 'unauthorized',
    403: 'forbidden',
    404: 'itemNotFound',
    405: 'badMethod',
    408: 'requestTimeout',
    409: 'conflictingRequest',
    411: 'lengthRequired',
    413: 'overLimit',
    415: 'badMediaType',
    431: 'requestHeaderFieldsTooLarge',
    500: 'computeFault',
    503: 'serviceUnavailable',
}


class HTTPError(Exception):
    """An answer other than success, with a message for the client."""

    def __init__(self, code, message, headers=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.headers = dict(headers or {})


def BadRequest(message):
    return HTTPError(400, message)


def Unauthorized(message='Authentication required: send the header '
                         'X-Auth-Token.'):
    return HTTPError(401, message)


def Forbidden(message='Only an administrator may do this.'):
    return HTTPError(403, message)


def NotFound(message):
    return HTTPError(404, message)


def json_response(status, body=None, headers=None):
    """A JSON response (no body for 204)."""
    response = webob.Response(status=status)
    response.headers.update(headers or {})
    if body is not None:
        response.content_type = 'application/json'
        response.charset = 'utf-8'
        response.text = jsonutils.dumps(body)
    else:
        response.content_type = None
        response.body = b''
    return response


def _plain_text(message):
    """``message`` without lone surrogates (escaped as ``\\udXXX``).

    A message may quote what the client sent; a lone surrogate in it
    would make the answer invalid UTF-8 for strict JSON parsers.
    """
    return message.encode('utf-8', 'backslashreplace').decode('utf-8')


def error_response(code, message, headers=None):
    key = ERROR_KEYS.get(code, 'computeFault')
    response = json_response(code, {key: {'code': code,
                                          'message': _plain_text(message)}},
                             headers=headers)
    if code == 401:
        response.headers['WWW-Authenticate'] = 'X-Auth-Token'
    return response


def unavailable(message, retry_after):
    """503 with ``Retry-After``: try again in ``retry_after`` seconds.

    The one shape of every "not now" answer (a busy server, a silent
    cell, a database that is down), so that a client can retry them all
    the same way.
    """
    return error_response(503, message,
                          headers={'Retry-After': str(retry_after)})


# Seconds a client should wait after a database did not answer: a
# restart or a failover of a database server takes a few seconds, and
# the next request reconnects (oslo.db's pool pre-ping) by itself.
DATABASE_RETRY_AFTER = 2

DATABASE_UNAVAILABLE = ('A database of the cloud did not answer; nothing was '
                        'changed. Try again in a few seconds.')


def database_unavailable(request, exc):
    """The answer to a request whose database could not be reached.

    oslo.db raises DBConnectionError for a refused or timed-out
    connection and for one lost inside a transaction (rolled back, so
    the request wrote nothing). It is an outage of the infrastructure,
    not a bug: one WARNING line for the operator, without a traceback
    (and without the SQL and its parameters, which may hold user data),
    and a 503 the client may retry.
    """
    inner = getattr(exc, 'inner_exception', None)
    reason = getattr(inner, 'orig', None) or inner or exc
    # A server at its connection limit: which limit to raise, once.
    refusals.warn(exc, 'requests that meet it are answered 503')
    # libpq's messages run over several lines.
    LOG.warning('%s %s: a database did not answer (%s: %s); answered 503',
                request.method, request.environ.get('PATH_INFO'),
                type(reason).__name__, ' '.join(str(reason).split()))
    return unavailable(DATABASE_UNAVAILABLE, DATABASE_RETRY_AFTER)


def from_domain(exc):
    """The HTTPError of a domain error whose code is a client error."""
    code = getattr(exc, 'code', 500)
    if (isinstance(exc, exception.CellbootException) and code in ERROR_KEYS
            and code != 500):
        return HTTPError(code, str(exc))
    return None


class FaultWrapper:
    """Catch-all: an unexpected exception becomes a logged 500.

    A database that cannot be reached is no unexpected error: 503.

    ``unexpected`` counts them, so that tests can assert that no request
    reached this path.
    """

    def __init__(self, application):
        self.application = application
        self.unexpected = 0

    @webob.dec.wsgify
    def __call__(self, request):
        try:
            return request.get_response(self.application)
        except HTTPError as exc:
            return error_response(exc.code, exc.message, exc.headers)
        except db_exc.DBConnectionError as exc:
            return database_unavailable(request, exc)
        except db_exc.DBDataError:
            return error_response(400, unstorable.MESSAGE)
        except Exception as exc:
            known = from_domain(exc)
            if known is not None:
                return error_response(known.code, known.message)
            self.unexpected += 1
            # The raw path: WebOb's decoded one raises on bad UTF-8.
            LOG.exception('Unexpected error in %s %s', request.method,
                          request.environ.get('PATH_INFO'))
            return error_response(
                500, 'Unexpected API error; the operator can find it in '
                     'the cellboot-api log.')
