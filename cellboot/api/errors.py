"""Errors as the client sees them: nova-shaped JSON with an HTTP code.

Every error body has the shape ``{"badRequest": {"code": 400,
"message": "..."}}``; the key names the kind of error as Nova names it.
Handlers raise ``HTTPError`` (or a domain error whose ``code`` is a 4xx,
which is translated here); ``FaultWrapper`` is the last line: anything
else becomes a logged 500, which the fuzzing test proves no input
reaches.
"""

from oslo_log import log as logging
from oslo_serialization import jsonutils
import webob
import webob.dec

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


def from_domain(exc):
    """The HTTPError of a domain error whose code is a client error."""
    code = getattr(exc, 'code', 500)
    if (isinstance(exc, exception.CellbootException) and code in ERROR_KEYS
            and code != 500):
        return HTTPError(code, str(exc))
    return None


class FaultWrapper:
    """Catch-all: an unexpected exception becomes a logged 500.

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
