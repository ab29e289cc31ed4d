"""What a request carries, checked before a handler sees it (``inputs``),
and a body made what its schema says (``schemas``)."""

import webob

from cellboot.api import errors
from cellboot.api import inputs
from cellboot.api import schemas
from tests import base


def request(path='/', query='', body=None, media_type='application/json'):
    """A request whose path and query are raw latin-1, as WSGI has them."""
    req = webob.Request.blank('/')
    req.environ['PATH_INFO'] = path
    req.environ['QUERY_STRING'] = query
    if body is not None:
        if media_type is not None:
            req.headers['Content-Type'] = media_type
        req.body = body
    return req


class StorableTest(base.TestCase):

    def test_text_astral_characters_included_is_storable(self):
        self.assertTrue(inputs.storable('vm-\U0001F600 é'))

    def test_nul_and_lone_surrogates_are_not(self):
        for text in ('a\x00', '\ud800', 'x\udfffy', '\udcff'):
            self.assertFalse(inputs.storable(text), repr(text))


class PathTest(base.TestCase):

    def test_utf8_is_decoded(self):
        self.assertEqual('/servers/é', inputs.path(request(
            '/servers/é'.encode('utf-8').decode('latin-1'))))

    def test_a_byte_that_is_not_utf8_becomes_a_lone_surrogate(self):
        path = inputs.path(request('/servers/\xff'))
        self.assertEqual('/servers/\udcff', path)
        self.assertFalse(inputs.storable(path))

    def test_printable_gives_back_the_bytes_percent_encoded(self):
        self.assertEqual('/servers/%FF%C3%A9',
                         inputs.printable('/servers/\udcffé'))


class QueryTest(base.TestCase):

    def test_utf8_and_percent_escapes_pass(self):
        inputs.check_query(request(query='state=r%C3%A9&x=\xc3\xa9&flag'))

    def test_bad_bytes_and_nul_are_400(self):
        for query in ('a=%ff', 'a=\xff', '%ff=1', 'a=%ed%a0%80', 'a=%00',
                      '\x00=1'):
            error = self.assertRaises(errors.HTTPError, inputs.check_query,
                                      request(query=query))
            self.assertEqual(400, error.code, query)


class MediaTypeTest(base.TestCase):

    def test_json_in_any_case_with_utf8_passes(self):
        for media_type in ('application/json', 'Application/JSON',
                           'application/json; charset=UTF-8',
                           'application/json;charset="utf8"'):
            inputs.check_media_type(request(body=b'{}',
                                            media_type=media_type))

    def test_anything_else_with_a_body_is_415(self):
        for media_type in (None, '', 'text/plain', 'application/jsonx',
                           'application/json; charset=latin-1'):
            error = self.assertRaises(
                errors.HTTPError, inputs.check_media_type,
                request(body=b'{}', media_type=media_type))
            self.assertEqual(415, error.code, media_type)

    def test_no_body_needs_no_media_type(self):
        inputs.check_media_type(request(body=b'', media_type='text/plain'))


class ParseJSONTest(base.TestCase):

    def parse(self, body):
        return inputs.parse_json(request(body=body))

    def assertRefused(self, body, words):
        error = self.assertRaises(errors.HTTPError, self.parse, body)
        self.assertEqual(400, error.code)
        self.assertIn(words, error.message)

    def test_depth_up_to_the_limit_is_parsed(self):
        depth = inputs.MAX_DEPTH
        self.assertEqual(1, len(self.parse(b'[' * depth + b']' * depth)))

    def test_one_level_more_is_refused(self):
        depth = inputs.MAX_DEPTH + 1
        self.assertRefused(b'[' * depth + b']' * depth, 'deeper than')

    def test_deeper_than_the_parser_goes_is_refused(self):
        self.assertRefused(b'[' * 100000 + b']' * 100000, 'deeper than')
        self.assertRefused(b'{"a":' * 5000 + b'1' + b'}' * 5000,
                           'deeper than')

    def test_lone_surrogates_anywhere_are_refused(self):
        for body in (b'"\\ud800"', b'{"\\udfff": 1}', b'[["a\\udc00"]]'):
            self.assertRefused(body, 'surrogate')

    def test_a_surrogate_pair_is_one_character(self):
        self.assertEqual('\U0001F600', self.parse(b'"\\ud83d\\ude00"'))

    def test_nan_and_infinity_are_refused(self):
        for body in (b'NaN', b'[Infinity]', b'{"a": -Infinity}'):
            self.assertRefused(body, 'not valid JSON')

    def test_bytes_that_are_not_utf8_are_refused(self):
        self.assertRefused(b'"\xed\xa0\x80"', 'not valid JSON')


class AsDeclaredTest(base.TestCase):

    def test_whole_floats_become_ints_where_the_schema_says_integer(self):
        body = schemas.validate(schemas.FLAVOR_CREATE, {'flavor': {
            'name': 'f', 'vcpus': 2.0, 'ram': 64.0, 'disk': 0.0,
            'description': '1.0'}})
        flavor = body['flavor']
        self.assertEqual((2, 64, 0), (flavor['vcpus'], flavor['ram'],
                                      flavor['disk']))
        self.assertTrue(all(type(flavor[key]) is int
                            for key in ('vcpus', 'ram', 'disk')))
        self.assertEqual('1.0', flavor['description'])

    def test_a_fraction_is_not_an_integer(self):
        self.assertRaises(errors.HTTPError, schemas.validate,
                          schemas.FLAVOR_CREATE, {'flavor': {
                              'name': 'f', 'vcpus': 2.5, 'ram': 64}})

    def test_counts_are_bounded_by_the_configured_maximum(self):
        self.flags(max_count=5, group='api')
        body = {'server': {'name': 'vm', 'flavorRef': 'f', 'max_count': 5.0}}
        self.assertEqual(5, schemas.validate(
            schemas.server_create(), body)['server']['max_count'])
        body['server']['max_count'] = 6
        self.assertRaises(errors.HTTPError, schemas.validate,
                          schemas.server_create(), body)
