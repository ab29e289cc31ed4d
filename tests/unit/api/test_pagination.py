"""``limit`` and ``marker`` as every list reads them, and its links."""

import urllib.parse

import webob

from cellboot.api import errors
from cellboot.api import pagination
from cellboot import exception
from tests import base


def request(query=''):
    return webob.Request.blank('/v2.1/servers/detail' +
                               (f'?{query}' if query else ''),
                               base_url='http://api.test')


class FromRequestTest(base.TestCase):

    def test_without_limit_a_page_is_max_limit_long(self):
        self.flags(max_limit=7, group='api')
        page = pagination.from_request(request())
        self.assertEqual((7, None), (page.limit, page.marker))

    def test_a_limit_over_max_limit_is_capped(self):
        self.flags(max_limit=7, group='api')
        self.assertEqual(7, pagination.from_request(
            request('limit=5000')).limit)

    def test_a_limit_and_a_marker_are_taken(self):
        page = pagination.from_request(request('limit=3&marker=abc'))
        self.assertEqual((3, 'abc'), (page.limit, page.marker))

    def test_bad_limits_answer_400(self):
        for value in ('-1', '0', 'x', '1.5', '', '1e3', '99999999999',
                      str(2 ** 31), '\u0663', ' '):
            error = self.assertRaises(
                errors.HTTPError, pagination.from_request,
                request(urllib.parse.urlencode({'limit': value})))
            self.assertEqual(400, error.code, value)
            self.assertIn('limit', error.message)

    def test_an_empty_or_oversized_marker_answers_400(self):
        for value in ('', 'm' * 256):
            error = self.assertRaises(
                errors.HTTPError, pagination.from_request,
                request(urllib.parse.urlencode({'marker': value})))
            self.assertEqual(400, error.code)


class LinksTest(base.TestCase):

    def test_no_link_when_nothing_follows(self):
        page = pagination.Page(2, None)
        self.assertEqual({}, pagination.links(request(), 'servers', page,
                                              'x', False))

    def test_the_next_link_keeps_the_filters_and_moves_the_marker(self):
        page = pagination.Page(2, 'old')
        links = pagination.links(
            request('reservation_id=r-1&limit=2&marker=old'), 'servers',
            page, 'new', True)
        (link,) = links['servers_links']
        self.assertEqual('next', link['rel'])
        parsed = urllib.parse.urlsplit(link['href'])
        self.assertEqual('http://api.test/v2.1/servers/detail',
                         f'{parsed.scheme}://{parsed.netloc}{parsed.path}')
        self.assertEqual({'reservation_id': ['r-1'], 'limit': ['2'],
                          'marker': ['new']},
                         urllib.parse.parse_qs(parsed.query))


class OfListTest(base.TestCase):

    ITEMS = [{'id': 'c', 'host': 'h3'}, {'id': 'a', 'host': 'h1'},
             {'id': 'b', 'host': 'h2'}]

    def page(self, limit, marker=None):
        return pagination.of_list(self.ITEMS, lambda item: item['host'],
                                  lambda item: item['id'],
                                  pagination.Page(limit, marker))

    def test_pages_follow_the_sort_key(self):
        items, more = self.page(2)
        self.assertEqual((['a', 'b'], True), ([i['id'] for i in items], more))
        items, more = self.page(2, marker='b')
        self.assertEqual((['c'], False), ([i['id'] for i in items], more))

    def test_an_unknown_marker_is_refused(self):
        self.assertRaises(exception.MarkerNotFound, self.page, 2, 'zz')
