"""MySQL connections without TLS set-up unless TLS is asked for.

PyMySQL, given no TLS option, connects in its "preferred" mode: it builds
a new ``ssl.SSLContext`` (loading the system's CA store) for every
connection, about 21 ms of CPU against 0.3 ms for the whole connection
without it, even when the server has TLS disabled and the context is
never used. A service that opens connections under load spent a third of
its CPU there. So, for PyMySQL URLs:

* without a TLS option in the URL's query (oslo.db's
  ``connection_parameters`` included), connections are made with
  ``ssl_disabled=True``: no context, no handshake;
* with one, TLS is required, and ONE context is built per engine, when
  the engine is created, and given to every connection (PyMySQL accepts
  an ``SSLContext`` as ``ssl=``).

The options (booleans: true/false, 1/0, yes/no, on/off):

``ssl``
    true: TLS, with no other option needed (the server's certificate is
    then not verified; give ``ssl_ca`` for that).
``ssl_disabled``
    true: no TLS (the default); false: TLS, as ``ssl=true``.
``ssl_ca``, ``ssl_capath``
    the CA file or directory the server's certificate is verified with.
``ssl_cert``, ``ssl_key``, ``ssl_key_password``
    the client's certificate, its key (if not in the certificate's file)
    and the key's password.
``ssl_cipher``
    the OpenSSL cipher list.
``ssl_verify_cert``
    verify the server's certificate; true by default when a CA is given.
``ssl_verify_identity`` (or SQLAlchemy's ``ssl_check_hostname``)
    also check that the certificate names the host; implies the above.

A value that is not understood, an option we do not know, or a file that
cannot be loaded is an ``InvalidDatabaseURL`` naming it, raised when the
engine is created. Other MySQL drivers are left alone.

Both engine builders use this module: the facade's (oslo.db) engines get
it through SQLAlchemy's engine plugin ``cellboot_tls`` (``with_tls``
adds it to the URL, which is how a plugin reaches an engine oslo.db
creates), TaskFlow's persistence engine through ``plugins=[PLUGIN]``.
"""

import ssl

from sqlalchemy import dialects
from sqlalchemy.engine import CreateEnginePlugin

from cellboot import exception
from cellboot import masking

PLUGIN = 'cellboot_tls'

# The drivers this module configures.
DRIVERS = frozenset({'pymysql'})

_BOOLEANS = {
    'true': True, '1': True, 'yes': True, 'on': True,
    'false': False, '0': False, 'no': False, 'off': False,
}
_FLAGS = ('ssl', 'ssl_disabled', 'ssl_verify_cert', 'ssl_verify_identity',
          'ssl_check_hostname')
_VALUES = ('ssl_ca', 'ssl_capath', 'ssl_cert', 'ssl_key',
           'ssl_key_password', 'ssl_cipher')
TLS_KEYS = frozenset(_FLAGS + _VALUES)


def applies_to(url):
    """Whether connections to ``url`` (a parsed URL) are configured here."""
    return url.get_driver_name() in DRIVERS


def with_tls(connection, url):
    """``connection`` (a URL string) with the TLS plugin, when it applies.

    ``url`` is ``connection`` parsed. The plugin is only added to URLs of
    a driver in ``DRIVERS``; others come back unchanged.
    """
    if not applies_to(url) or PLUGIN in _values(url.query.get('plugin')):
        return connection
    url = url.update_query_dict({'plugin': PLUGIN}, append=True)
    return url.render_as_string(hide_password=False)


def connect_args(url):
    """The DB-API connect() arguments for TLS on ``url`` (parsed).

    ``{'ssl_disabled': True}`` when no TLS option is given, ``{'ssl':
    context}`` with a new context otherwise, ``{}`` for other drivers.
    Raises InvalidDatabaseURL for options that cannot be honoured.
    """
    if not applies_to(url):
        return {}
    options = _options(url)
    if not _asks_for_tls(url, options):
        return {'ssl_disabled': True}
    return {'ssl': _context(url, options)}


def _options(url):
    """The URL's TLS options, each a single string value."""
    options = {}
    for key, value in url.query.items():
        if not key.startswith('ssl'):
            continue
        if key not in TLS_KEYS:
            _invalid(url, f'{key} is not a TLS option we know (known: '
                          f'{", ".join(sorted(TLS_KEYS))})')
        if not isinstance(value, str):
            _invalid(url, f'{key} is given more than once')
        options[key] = value
    return options


def _asks_for_tls(url, options):
    disabled = _flag(url, options, 'ssl_disabled')
    if disabled:
        others = sorted(set(options) - {'ssl_disabled'})
        if others:
            _invalid(url, f'ssl_disabled=true contradicts {others[0]}')
        return False
    if 'ssl' in options and not _flag(url, options, 'ssl'):
        others = sorted(set(options) - {'ssl'})
        if others:
            _invalid(url, f'ssl=false contradicts {others[0]}')
        return False
    return bool(options)


def _context(url, options):
    """One client context from the options (see the module's docstring)."""
    ca = options.get('ssl_ca')
    capath = options.get('ssl_capath')
    identity = (_flag(url, options, 'ssl_verify_identity') or
                _flag(url, options, 'ssl_check_hostname'))
    verify = _flag(url, options, 'ssl_verify_cert')
    if verify is None:
        verify = bool(ca or capath)
    verify = verify or bool(identity)
    if options.get('ssl_key') and not options.get('ssl_cert'):
        _invalid(url, 'ssl_key is given without ssl_cert')
    try:
        context = ssl.create_default_context(cafile=ca, capath=capath)
        context.check_hostname = bool(identity)
        context.verify_mode = ssl.CERT_REQUIRED if verify else ssl.CERT_NONE
        if options.get('ssl_cert'):
            context.load_cert_chain(
                options['ssl_cert'], keyfile=options.get('ssl_key'),
                password=options.get('ssl_key_password'))
        if options.get('ssl_cipher'):
            context.set_ciphers(options['ssl_cipher'])
    except (OSError, ssl.SSLError, ValueError) as exc:
        _invalid(url, f'its TLS set-up failed: {exc}')
    return context


def _flag(url, options, key):
    """The boolean option ``key``: True, False, or None when not given."""
    value = options.get(key)
    if value is None:
        return None
    try:
        return _BOOLEANS[value.strip().lower()]
    except KeyError:
        _invalid(url, f'{key}={value!r} is not a boolean (true or false)')


def _values(value):
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def _invalid(url, reason):
    if 'ssl_key_password' in url.query:     # a secret, as the password
        url = url.update_query_dict({'ssl_key_password': '***'})
    url = url.difference_update_query(['plugin'])   # ours, not theirs
    rendered = url.render_as_string(hide_password=False)
    raise exception.InvalidDatabaseURL(
        url=masking.mask_url(rendered),
        reason=masking.mask_text(reason, rendered))


class TLSPlugin(CreateEnginePlugin):
    """Gives an engine's connections the arguments of ``connect_args``.

    Runs once per engine, as it is created, so its one SSL context is
    shared by every connection of the engine. Arguments the caller gives
    in ``connect_args`` win; the TLS options leave the URL, so the driver
    never sees them.
    """

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        args = connect_args(url)
        args.update(kwargs.get('connect_args') or {})
        kwargs['connect_args'] = args

    def update_url(self, url):
        if not applies_to(url):
            return url      # e.g. libpq's own sslmode, left to it
        return url.difference_update_query(TLS_KEYS)


dialects.plugins.register(PLUGIN, __name__, 'TLSPlugin')
