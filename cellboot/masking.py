"""URLs with their secrets hidden, fit to print or to log.

Database and transport URLs carry passwords: in the user information of
every host (``rabbit://u1:p1@h1,u2:p2@h2/vhost``) and sometimes in the
query string (``mysql+pymysql://db/api?password=...``). ``mask_url`` is
the one function that hides them, used wherever cellboot prints, logs or
raises with a URL.

A password is not always percent-encoded: operators paste ``/``, ``,``,
``@`` or ``?`` into them, which makes the URL ambiguous for a generic
parser. Masking therefore errs on the side of hiding: the user
information runs to the *last* ``@`` of the URL, and whatever stands
between ``user:`` and the ``@`` that is followed by a host is masked. A
URL whose query string holds an ``@`` may lose more than its password
to the mask; it never shows the password.
"""

import re
from urllib import parse

from oslo_utils import strutils

MASK = '***'

# ``user:password@host`` entries of an authority (several for a
# multi-host transport URL, separated by commas). The password is the
# shortest text that is followed by ``@`` and a host that runs to the
# next comma or the end: ``,`` and ``@`` inside a password stay inside.
_CREDENTIALS = re.compile(
    r'(?:^|(?<=,))(?P<user>[^:@,/]*):(?P<password>.*?)@(?=[^@,]*(?:,|$))')

# Query parameter names that hold secrets besides oslo.utils' own list.
_SECRET_KEYS = ('passwd', 'pwd')


def _is_secret_key(key):
    key = key.lower()
    if key in _SECRET_KEYS:
        return True
    return strutils.mask_dict_password({key: ''}, secret=MASK)[key] == MASK


def _mask_query(query):
    """``query`` with the values of secret-holding parameters masked.

    Every other parameter is kept as written (no re-encoding).
    """
    pieces = []
    for piece in query.split('&'):
        key, sep, _value = piece.partition('=')
        if sep and _is_secret_key(parse.unquote_plus(key)):
            piece = f'{key}={MASK}'
        pieces.append(piece)
    return '&'.join(pieces)


def _mask_authority(authority):
    return _CREDENTIALS.sub(lambda found: f'{found["user"]}:{MASK}@',
                            authority)


def mask_url(url):
    """``url`` with every password in it shown as ``***``.

    Handles one or several hosts with credentials, passwords holding
    ``/``, ``,``, ``@``, ``:`` or ``?``, and secret query parameters
    (``password``, ``token``, ... as ``oslo_utils.strutils`` knows them).
    Anything that is not a URL is passed through
    ``strutils.mask_password``. ``None`` and ``''`` are returned as
    they are.
    """
    if not url or not isinstance(url, str):
        return url
    scheme, sep, rest = url.partition('://')
    if not sep:
        return strutils.mask_password(url, secret=MASK)
    last_at = rest.rfind('@')
    end = len(rest)
    for stop in '/?#':
        found = rest.find(stop, last_at + 1)
        if found != -1:
            end = min(end, found)
    authority, tail = rest[:end], rest[end:]
    path, qsep, query = tail.partition('?')
    query, fsep, fragment = query.partition('#')
    if qsep:
        query = _mask_query(query)
    path = strutils.mask_password(path, secret=MASK)
    return (f'{scheme}://{_mask_authority(authority)}{path}{qsep}{query}'
            f'{fsep}{fragment}')


def mask_text(text, url):
    """``text`` (an error message) with ``url`` in it masked."""
    text = str(text)
    if url and isinstance(url, str):
        text = text.replace(url, mask_url(url))
    return text
