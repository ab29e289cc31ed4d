"""MySQL connections make no TLS set-up unless TLS is asked for.

The connect arguments are read where the driver would get them (the
engine's ``do_connect`` event), for both engine builders: the facade's
(oslo.db) and TaskFlow's persistence engine. A listener stops the
connection there, so no server is needed.
"""

import ssl

import sqlalchemy as sa

from cellboot.db import facade
from cellboot.db import migration
from cellboot.db import tls
from cellboot import exception
from cellboot.flowrun import backend as flow_db
from tests import base

URL = 'mysql+pymysql://u:s3cret@db.example/api'


class Stop(Exception):
    """Raised instead of connecting: the arguments were seen."""


def seen_connect_args(engine, times=1):
    """The connect() keyword arguments of ``times`` new connections."""
    seen = []

    def capture(dialect, conn_rec, cargs, cparams):
        seen.append(dict(cparams))
        raise Stop()

    sa.event.listen(engine, 'do_connect', capture)
    for _ in range(times):
        try:
            engine.raw_connection()
        except Stop:
            pass
    return seen


def facade_engine(url, **options):
    # max_retries=0: oslo.db connects at once otherwise (its probe).
    manager = facade.new_context_manager(url, max_retries=0, **options)
    engine = manager.writer.get_engine()
    return manager, engine


class NoTLSUnlessAskedTest(base.TestCase):

    def _facade_args(self, url, **options):
        manager, engine = facade_engine(url, **options)
        self.addCleanup(manager.dispose_pool)
        return seen_connect_args(engine)[0]

    def test_facade_engine_connects_with_ssl_disabled(self):
        args = self._facade_args(URL)
        self.assertIs(True, args['ssl_disabled'])
        self.assertNotIn('ssl', args)

    def test_flow_engine_connects_with_ssl_disabled(self):
        engine = flow_db._create_engine(URL)
        self.addCleanup(engine.dispose)
        args = seen_connect_args(engine)[0]
        self.assertIs(True, args['ssl_disabled'])
        self.assertNotIn('ssl', args)
        self.assertEqual(facade.CONNECT_TIMEOUT_SECONDS,
                         args['connect_timeout'])

    def test_migration_engine_connects_with_ssl_disabled(self):
        engine = migration._create_engine(facade.parse_url(URL), 'x', {})
        self.addCleanup(engine.dispose)
        self.assertIs(True, seen_connect_args(engine)[0]['ssl_disabled'])

    def test_the_timeouts_are_still_given(self):
        args = self._facade_args(
            URL, connection_parameters=facade.bounded_waits(URL, None))
        self.assertEqual(str(facade.CONNECT_TIMEOUT_SECONDS),
                         str(args['connect_timeout']))
        self.assertIs(True, args['ssl_disabled'])

    def test_ssl_disabled_in_the_url_is_a_boolean_for_the_driver(self):
        # SQLAlchemy would give PyMySQL the string 'true'.
        args = self._facade_args(URL + '?ssl_disabled=true')
        self.assertIs(True, args['ssl_disabled'])

    def test_ssl_false_is_no_tls(self):
        self.assertIs(True,
                      self._facade_args(URL + '?ssl=false')['ssl_disabled'])

    def test_postgresql_urls_are_left_alone(self):
        url = 'postgresql+psycopg2://u:p@db.example/api?sslmode=require'
        engine = sa.create_engine(url, plugins=[tls.PLUGIN])
        self.addCleanup(engine.dispose)
        self.assertEqual('require', engine.url.query['sslmode'])
        self.assertEqual({}, tls.connect_args(engine.url))

    def test_the_plugin_is_added_once(self):
        once = tls.with_tls(URL, facade.parse_url(URL))
        self.assertEqual(once, tls.with_tls(once, facade.parse_url(once)))


class TLSWhenAskedTest(base.TestCase):

    def test_one_context_for_every_connection_of_a_facade_engine(self):
        manager, engine = facade_engine(URL + '?ssl=true')
        self.addCleanup(manager.dispose_pool)
        first, second, third = seen_connect_args(engine, times=3)
        self.assertIsInstance(first['ssl'], ssl.SSLContext)
        self.assertIs(first['ssl'], second['ssl'])
        self.assertIs(first['ssl'], third['ssl'])
        self.assertNotIn('ssl_disabled', first)

    def test_migration_engine_understands_the_same_options(self):
        engine = migration._create_engine(
            facade.parse_url(URL + '?ssl=true'), 'x', {})
        self.addCleanup(engine.dispose)
        self.assertIsInstance(seen_connect_args(engine)[0]['ssl'],
                              ssl.SSLContext)

    def test_one_context_per_flow_engine(self):
        engine = flow_db._create_engine(URL + '?ssl_verify_cert=false')
        self.addCleanup(engine.dispose)
        first, second = seen_connect_args(engine, times=2)
        self.assertIs(first['ssl'], second['ssl'])

    def test_asked_through_connection_parameters(self):
        manager, engine = facade_engine(
            URL, connection_parameters='ssl_verify_identity=true')
        self.addCleanup(manager.dispose_pool)
        context = seen_connect_args(engine)[0]['ssl']
        self.assertTrue(context.check_hostname)
        self.assertEqual(ssl.CERT_REQUIRED, context.verify_mode)

    def test_the_options_leave_the_url(self):
        manager, engine = facade_engine(URL + '?ssl=1&charset=utf8')
        self.addCleanup(manager.dispose_pool)
        self.assertEqual({'charset': 'utf8'}, dict(engine.url.query))
        args = seen_connect_args(engine)[0]
        self.assertEqual({'ssl'}, {k for k in args if k.startswith('ssl')})

    def test_without_a_ca_the_certificate_is_not_verified(self):
        context = tls.connect_args(facade.parse_url(URL + '?ssl=on'))['ssl']
        self.assertEqual(ssl.CERT_NONE, context.verify_mode)
        self.assertFalse(context.check_hostname)

    def test_a_new_engine_gets_a_new_context(self):
        url = facade.parse_url(URL + '?ssl=yes')
        self.assertIsNot(tls.connect_args(url)['ssl'],
                         tls.connect_args(url)['ssl'])


class HostileTLSOptionsTest(base.TestCase):
    """Options that cannot be honoured are a clear error, no traceback."""

    def assertInvalid(self, query, *words):
        url = facade.parse_url(URL + query)
        err = self.assertRaises(exception.InvalidDatabaseURL,
                                tls.connect_args, url)
        for word in words:
            self.assertIn(word, str(err))
        self.assertNotIn('s3cret', str(err))
        return err

    def test_a_flag_that_is_no_boolean(self):
        self.assertInvalid('?ssl_verify_cert=maybe', 'ssl_verify_cert',
                           'not a boolean')

    def test_an_unknown_option(self):
        self.assertInvalid('?ssl_mode=REQUIRED', 'ssl_mode', 'not a TLS')

    def test_an_option_given_twice(self):
        self.assertInvalid('?ssl_ca=/a&ssl_ca=/b', 'ssl_ca',
                           'more than once')

    def test_a_ca_file_that_does_not_exist(self):
        self.assertInvalid('?ssl_ca=/nonexistent/ca.pem', 'TLS set-up')

    def test_a_key_without_a_certificate(self):
        self.assertInvalid('?ssl_key=/k.pem', 'ssl_key', 'ssl_cert')

    def test_disabled_and_a_ca_contradict(self):
        self.assertInvalid('?ssl_disabled=true&ssl_ca=/a', 'contradicts')

    def test_a_bad_cipher_list(self):
        self.assertInvalid('?ssl=true&ssl_cipher=NOT-A-CIPHER', 'TLS set-up')

    def test_the_key_s_password_is_not_shown(self):
        err = self.assertInvalid('?ssl_cert=/nonexistent/c.pem'
                                 '&ssl_key_password=k3ysecret', 'TLS set-up')
        self.assertNotIn('k3ysecret', str(err))

    def test_the_engine_is_not_created(self):
        manager = facade.new_context_manager(URL + '?ssl=perhaps',
                                             max_retries=0)
        err = self.assertRaises(exception.InvalidDatabaseURL,
                                manager.writer.get_engine)
        self.assertIn('ssl=', str(err))
        self.assertNotIn('s3cret', str(err))
        self.assertNotIn(tls.PLUGIN, str(err))

    def test_the_flow_engine_is_not_created(self):
        self.assertRaises(exception.InvalidDatabaseURL,
                          flow_db._create_engine, URL + '?ssl_capath=1&ssl=x')
