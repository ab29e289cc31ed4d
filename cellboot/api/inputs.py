"""What a request carries, decoded and checked before a handler sees it.

WSGI hands the path and the query string over as raw bytes (in
``latin-1`` strings); WebOb decodes them as UTF-8 when ``path_info`` or
``GET`` is first read and raises ``UnicodeDecodeError`` on bytes that
are not UTF-8. Here they are decoded with ``surrogateescape`` instead,
so that a bad byte becomes a lone surrogate, and one rule covers every
way in:

* a string is **storable** when it holds no NUL (PostgreSQL refuses it
  in text) and no lone surrogate (no database driver can encode it, and
  JSON Schema patterns let it through). JSON escapes (``"\\ud800"``),
  bytes that are not UTF-8 in the path or query, and NUL from anywhere
  all end as a clear 4xx here, before anything is written;
* a JSON body nests at most ``MAX_DEPTH`` levels. Python's parser
  accepts about a thousand, and recursive walkers over the result
  (jsonschema among them) then run out of stack: the walk here is
  iterative, and nothing deeper reaches the validators.
"""

import json
import re
import urllib.parse

from cellboot.api import errors

# Deepest JSON body accepted. Every valid body nests three or four
# levels; 32 leaves room for error messages that name the path, and
# keeps any recursive walk far from Python's recursion limit.
MAX_DEPTH = 32

# The media type of every request body.
JSON_MEDIA_TYPE = 'application/json'

_UNSTORABLE = re.compile('[\x00\ud800-\udfff]')

# Characters shown as they are when a path is quoted in a message.
_PATH_SAFE = "/:@!$&'()*+,;=-._~"


def storable(text):
    """Whether ``text`` can be written to every database we support."""
    return _UNSTORABLE.search(text) is None


def _raw(text):
    """The bytes of a WSGI native string (PEP 3333: latin-1)."""
    return text.encode('latin-1')


def _decode(data):
    return data.decode('utf-8', 'surrogateescape')


def printable(text):
    """``text`` fit for an error message: bad bytes percent-encoded."""
    return urllib.parse.quote(text.encode('utf-8', 'surrogateescape'),
                              safe=_PATH_SAFE)


def path(request):
    """The request's path within the application, decoded.

    Bytes that are not UTF-8 become lone surrogates (see the module
    docstring), so that the path can still be routed; a parameter that
    holds one is then not ``storable`` and answers 404.
    """
    return _decode(_raw(request.environ.get('PATH_INFO', '')))


def check_query(request):
    """400 when a query parameter is not UTF-8 or holds a NUL.

    Once this passed, WebOb's own (strict) decoding of ``request.GET``
    cannot fail.
    """
    # Parsed as latin-1 (one character per byte), then decoded as UTF-8.
    query = request.environ.get('QUERY_STRING', '')
    for name, value in urllib.parse.parse_qsl(
            query, keep_blank_values=True, encoding='latin-1'):
        name, value = _decode(_raw(name)), _decode(_raw(value))
        if not (storable(name) and storable(value)):
            raise errors.BadRequest(
                f'The query parameter {printable(name)!r} is not UTF-8 '
                f'text without NUL characters.')


def all_tenants(request):
    """Whether a list asks for every project's items (``all_tenants``).

    ``1``/``true`` or ``0``/``false`` (any case, or empty); anything
    else answers 400 rather than being taken for either.
    """
    value = (request.GET.get('all_tenants') or '').strip().lower()
    if value not in ('', '0', '1', 'true', 'false'):
        raise errors.BadRequest('all_tenants is 1 (true) or 0 (false).')
    return value in ('1', 'true')


def check_media_type(request):
    """415 unless a request with a body says that the body is JSON.

    Without a ``Content-Type`` too: some WSGI servers fill a missing one
    in as ``text/plain``, so the application cannot tell the two apart,
    and one rule for every server is better than a guess.
    """
    if not request.body:
        return
    media_type, *params = request.headers.get('Content-Type', '').split(';')
    charset = 'utf-8'
    for param in params:
        name, _, value = param.partition('=')
        if name.strip().lower() == 'charset':
            charset = value.strip().strip('"').lower()
    if (media_type.strip().lower() != JSON_MEDIA_TYPE
            or charset not in ('utf-8', 'utf8')):
        raise errors.HTTPError(
            415, f'The request body must be {JSON_MEDIA_TYPE} (UTF-8); '
                 f'send the header Content-Type: {JSON_MEDIA_TYPE}.')


def _refuse_constant(name):
    raise ValueError(f'{name} is not a JSON value')


def problem(value):
    """What makes a parsed JSON ``value`` unacceptable, or None.

    Too deep a nesting, or a key or string that is not ``storable``.
    Iterative, so that no depth of input can exhaust the stack.
    """
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, str):
            if not storable(item):
                return ('a string holds a NUL character or a lone '
                        'surrogate (\\ud800-\\udfff)')
            continue
        if isinstance(item, dict):
            children = [key for key in item] + list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            return f'it nests deeper than {MAX_DEPTH} levels'
        pending.extend((child, depth + 1) for child in children)
    return None


def parse_json(request):
    """The request body as JSON; 400 when it is not acceptable JSON.

    Acceptable: UTF-8, standard JSON (no ``NaN`` or ``Infinity``), at
    most ``MAX_DEPTH`` levels deep, every string ``storable``.
    """
    try:
        body = json.loads(request.body.decode('utf-8'),
                          parse_constant=_refuse_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        reason = str(exc)
        if isinstance(exc, RecursionError):
            reason = f'it nests deeper than {MAX_DEPTH} levels'
        raise errors.BadRequest(f'The request body is not valid JSON: '
                                f'{reason}')
    found = problem(body)
    if found is not None:
        raise errors.BadRequest(f'The request body is refused: {found}.')
    return body
