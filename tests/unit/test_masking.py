"""``mask_url``: no password of a database or transport URL is ever shown."""

from cellboot import masking
from tests import base

SECRET = 's3cret'


class MaskUrlTest(base.TestCase):

    def assertMasked(self, expected, url, secrets=(SECRET,)):
        masked = masking.mask_url(url)
        self.assertEqual(expected, masked)
        for secret in secrets:
            self.assertNotIn(secret, masked)

    def test_a_database_password_is_masked(self):
        self.assertMasked('mysql+pymysql://u:***@db/api',
                          f'mysql+pymysql://u:{SECRET}@db/api')

    def test_a_password_with_a_slash_is_masked_whole(self):
        self.assertMasked('rabbit://u:***@h:5672/vh',
                          'rabbit://u:s3/cr/et@h:5672/vh',
                          secrets=('s3/', '/et', 'cr'))

    def test_a_password_with_a_comma_is_masked_whole(self):
        self.assertMasked('rabbit://u:***@h1:5672,v:***@h2:5672/',
                          'rabbit://u:s3,cret@h1:5672,v:p2@h2:5672/',
                          secrets=('s3,', 'cret', 'p2'))

    def test_a_password_with_an_at_sign_is_masked_whole(self):
        self.assertMasked('mysql+pymysql://u:***@db/api?charset=utf8',
                          'mysql+pymysql://u:s3c@ret@db/api?charset=utf8',
                          secrets=('s3c', 'ret@'))

    def test_a_password_with_a_colon_or_a_question_mark_is_masked(self):
        self.assertMasked('mysql://u:***@h/db', 'mysql://u:a:b?c@h/db',
                          secrets=('a:b', '?c'))

    def test_every_host_of_a_multi_host_url_is_masked(self):
        self.assertMasked(
            'rabbit://u:***@h1:5672,v:***@h2:5672,w:***@h3:5672/vh',
            'rabbit://u:p1@h1:5672,v:p2@h2:5672,w:p3@h3:5672/vh',
            secrets=('p1', 'p2', 'p3'))

    def test_a_password_in_the_query_string_is_masked(self):
        self.assertMasked(
            'mysql+pymysql://u@db/api?password=***&charset=utf8',
            f'mysql+pymysql://u@db/api?password={SECRET}&charset=utf8')

    def test_query_secret_names_are_matched_in_any_case_and_encoding(self):
        self.assertMasked(
            'postgresql://db/api?sslmode=require&PASSWORD=***&pass%77d=***'
            '&token=***',
            f'postgresql://db/api?sslmode=require&PASSWORD={SECRET}'
            f'&pass%77d={SECRET}&token={SECRET}')

    def test_ipv6_hosts_keep_their_address(self):
        self.assertMasked('rabbit://u:***@[::1]:5672/vh',
                          f'rabbit://u:{SECRET}@[::1]:5672/vh')

    def test_a_url_without_a_password_is_unchanged(self):
        for url in ('sqlite:////tmp/x.sqlite', 'fake://',
                    'rabbit://guest@h:5672/', 'mysql+pymysql://db/api'):
            self.assertEqual(url, masking.mask_url(url))

    def test_an_unparseable_url_is_masked_all_the_same(self):
        self.assertMasked('mysql://u:***@db:notaport/api',
                          f'mysql://u:{SECRET}@db:notaport/api')

    def test_text_that_is_no_url_goes_through_oslo_utils(self):
        self.assertMasked('connect password=***',
                          f'connect password={SECRET}')

    def test_nothing_is_returned_as_it_is(self):
        self.assertIsNone(masking.mask_url(None))
        self.assertEqual('', masking.mask_url(''))

    def test_an_error_message_quoting_a_url_is_masked(self):
        url = f'mysql://u:{SECRET}@db/api'
        text = masking.mask_text(f"Could not parse URL from '{url}'", url)
        self.assertEqual("Could not parse URL from 'mysql://u:***@db/api'",
                         text)
