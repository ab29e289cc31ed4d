"""``limit`` and ``marker`` of a listing, and its ``*_links``, as Nova.

Every list takes ``?limit=N`` (at most ``[api] max_limit``, which is
also the page size when ``limit`` is not given) and ``?marker=ID``, the
id of the last item of the previous page. When more items may follow a
page, the answer carries a link to the next one, Nova's shape::

    "servers_links": [{"rel": "next",
                       "href": ".../v2.1/servers?limit=2&marker=ID"}]

The link keeps the request's other query parameters (filters), so
following links walks the whole filtered list, each item once.
"""

import urllib.parse

from cellboot.api import errors
from cellboot.conf import CONF
from cellboot import exception

QUERY = ('limit', 'marker')

# Longest marker accepted: an id is a uuid or a flavor id (255).
MAX_MARKER_LENGTH = 255

# A ``limit`` with more digits than this is no count of items.
_MAX_LIMIT_DIGITS = 10
_LARGEST_LIMIT = 2 ** 31 - 1

# What the OpenAPI document says of ``QUERY``.
QUERY_SCHEMAS = {
    'limit': {'type': 'integer', 'minimum': 1, 'maximum': _LARGEST_LIMIT,
              'description': 'a whole number of items from 1 to '
                             f'{_LARGEST_LIMIT} (a page holds at most [api] '
                             'max_limit of them)'},
    'marker': {'type': 'string', 'minLength': 1,
               'maxLength': MAX_MARKER_LENGTH,
               'description': 'the id of the last item of the previous '
                              f'page (1 to {MAX_MARKER_LENGTH} characters)'},
}


class Page:
    """What one request asked for: ``limit`` (capped) and ``marker``."""

    def __init__(self, limit, marker):
        self.limit = limit
        self.marker = marker

    def split(self, items):
        """``(page, more)`` of ``limit + 1`` items fetched for this page."""
        return items[:self.limit], len(items) > self.limit


def _limit(value):
    text = value.strip()
    if (not text.isdigit() or not text.isascii()
            or len(text) > _MAX_LIMIT_DIGITS or int(text) > _LARGEST_LIMIT):
        raise errors.BadRequest(
            f'limit must be a whole number from 1 to {_LARGEST_LIMIT} '
            f'(pages hold at most {CONF.api.max_limit} items), not '
            f'{value[:40]!r}.')
    limit = int(text)
    if limit < 1:
        raise errors.BadRequest('limit must be at least 1.')
    return min(limit, CONF.api.max_limit)


def from_request(request):
    """The Page of a request; 400 for a bad ``limit`` or ``marker``."""
    limit = CONF.api.max_limit
    if 'limit' in request.GET:
        limit = _limit(request.GET['limit'])
    marker = request.GET.get('marker')
    if marker is not None and not 0 < len(marker) <= MAX_MARKER_LENGTH:
        raise errors.BadRequest(
            f'marker must be the id of an item (1 to {MAX_MARKER_LENGTH} '
            f'characters).')
    return Page(limit, marker)


def links(request, collection, page, last_id, more):
    """``{"<collection>_links": [next]}`` when ``more``, else ``{}``.

    ``last_id`` is the marker of the next page: the id of the last item
    this page was made of.
    """
    if not more or last_id is None:
        return {}
    query = [(name, value) for name, value in request.GET.items()
             if name not in QUERY]
    query += [('limit', str(page.limit)), ('marker', last_id)]
    href = f'{request.path_url}?{urllib.parse.urlencode(query)}'
    return {f'{collection}_links': [{'rel': 'next', 'href': href}]}


def of_list(items, key, ident, page):
    """``(items, more)``: a page of a list held in memory.

    For lists the API already holds whole (the scheduler's host
    states): sorted by ``key(item)`` (total), the items after the one
    whose ``ident(item)`` is the marker (MarkerNotFound if none is).
    """
    items = sorted(items, key=key)
    if page.marker is not None:
        marks = [key(item) for item in items if ident(item) == page.marker]
        if not marks:
            raise exception.MarkerNotFound(marker=page.marker)
        items = [item for item in items if key(item) > marks[0]]
    return page.split(items[:page.limit + 1])
