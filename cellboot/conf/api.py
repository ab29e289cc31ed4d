"""The ``[api]`` group: how ``cellboot-api`` listens and who it trusts."""

from oslo_config import cfg

NOAUTH2 = 'noauth2'
KEYSTONE = 'keystone'

api_group = cfg.OptGroup(
    'api',
    title='REST API',
    help='The cellboot-api WSGI application and its built-in server.')

api_opts = [
    cfg.IntOpt('cast_retries',
               default=1,
               min=0,
               help='How many times cellboot-api reconnects to a message '
                    'broker that does not answer before its cast of a '
                    'boot to the super conductors gives up (each retry '
                    'pauses about 2 s, then longer). The request is '
                    'answered 202 either way: its rows are committed '
                    'first, and the super conductors\' sweep starts a '
                    'boot whose cast was lost after [conductor] '
                    'unstarted_build_request_timeout. Keep it small: the '
                    'HTTP request waits for these retries.'),
    cfg.StrOpt('auth_strategy',
               default=NOAUTH2,
               choices=[(NOAUTH2, 'Trust "X-Auth-Token: USER:PROJECT"; '
                                  'user "admin" is an admin. For the '
                                  'embedded mode and tests only.'),
                        (KEYSTONE, 'Validate tokens with keystonemiddleware '
                                   '(install cellboot[keystone]; configure '
                                   'it in [keystone_authtoken]).')],
               help='How requests are authenticated. noauth2 needs no '
                    'identity service, which is why it is the default of '
                    'the embedded mode; never expose it to untrusted '
                    'clients.'),
    cfg.HostAddressOpt('listen',
                       default='127.0.0.1',
                       help='Address the built-in server of cellboot-api '
                            'listens on. Loopback by default, so that a '
                            'noauth2 API is not reachable from elsewhere '
                            'by accident.'),
    cfg.PortOpt('listen_port',
                default=8774,
                help='TCP port of the built-in server (8774, the port of '
                     'the compute API it imitates).'),
    cfg.IntOpt('max_request_body_size',
               default=114688,
               min=1024,
               help='Largest request body accepted, in bytes; a bigger one '
                    'is answered 413 before it is read (112 KiB, as '
                    'oslo.middleware sizes its limit).'),
    cfg.FloatOpt('list_cell_timeout',
                 default=10.0,
                 min=0.1,
                 help='Seconds a server listing waits for each cell. A cell '
                      'that has not answered by then has its servers '
                      'listed with status UNKNOWN rather than failing the '
                      'whole listing.'),
    cfg.FloatOpt('cell_timeout',
                 default=10.0,
                 min=0.1,
                 help='Seconds the API waits for one cell database when it '
                      'reads or deletes one server, or looks for flows. A '
                      'cell that has not answered by then is reported: a '
                      'server answers 503 with Retry-After, a flow listing '
                      'names the cell in "unreachable", so that one silent '
                      'cell never holds every API thread. As long as a '
                      'listing waits (list_cell_timeout) by default.'),
    cfg.IntOpt('cell_read_timeout',
               default=30,
               min=0,
               help='Seconds a database read of a cell reached through its '
                    'cell mapping may wait for the server (the DB-API '
                    'driver\'s read timeout: PyMySQL read_timeout; '
                    'PostgreSQL bounds the connection with connect_timeout '
                    'only). Applies to every process that reaches cells '
                    'through their mappings (the API, super conductors). '
                    'A cell that accepts connections and never answers '
                    'keeps a thread at most this long after cell_timeout '
                    'gave up on it; 0 leaves reads unbounded. 30 s is '
                    'longer than any read of one cell takes.'),
    cfg.IntOpt('max_count',
               default=1000,
               min=1,
               help='Most servers one POST /servers may ask for '
                    '(max_count); bounds the size of one API-database '
                    'transaction.'),
    cfg.IntOpt('max_limit',
               default=1000,
               min=1,
               help='Most items one page of a listing holds (GET /servers, '
                    '/flavors, /os-flows, ...): a larger or missing '
                    '"limit" gets this many, with a "next" link to the '
                    'rest. 1000, as Nova\'s osapi_max_limit: a page stays '
                    'one bounded query and one bounded response.'),
    cfg.IntOpt('max_boot_payload_size',
               default=4 * 1024 * 1024,
               min=64 * 1024,
               max=12 * 1024 * 1024,
               help='Most bytes of JSON one POST /servers may make the boot '
                    'carry: its servers\' build requests and request specs '
                    '(metadata and hints escaped as stored), which go into '
                    'one row of the boot flow\'s store and one RPC message. '
                    'A request over it is answered 413 before anything is '
                    'written, instead of being accepted and then failing to '
                    'be stored. 4 MiB is a quarter of the largest statement '
                    'MariaDB accepts by default (max_allowed_packet, 16 '
                    'MiB); at most 12 MiB, which one MEDIUMTEXT column '
                    'holds with room to spare.'),
    cfg.IntOpt('wsgi_threads',
               default=16,
               min=1,
               help='Requests the application runs at the same time, under '
                    'any WSGI server (an admission limit in front of it). '
                    'A request that finds them all busy waits up to '
                    'shed_wait seconds for a turn, then is answered 503. '
                    'The built-in server runs 2 x wsgi_threads + 2 worker '
                    'threads: these, as many waiting for a turn, and two '
                    'that answer 503 at once. 16 is more requests at once '
                    'than two cores and the database pools serve in '
                    'parallel, so only a real overload is shed.'),
    cfg.FloatOpt('shed_wait',
                 default=1.0,
                 min=0.0,
                 help='Seconds a request waits for one of wsgi_threads '
                      'before it is answered 503 with Retry-After. One '
                      'second absorbs a burst (requests take milliseconds) '
                      'while a client under a flood still gets its answer '
                      'at once.'),
    cfg.IntOpt('max_connections',
               default=500,
               min=1,
               help='Client connections the built-in server holds open at '
                    'once; further clients wait in the listen backlog '
                    'until one closes. Connections cost a socket, not a '
                    'thread, so 500 is cheap; it stays well under the '
                    'usual limit of 1024 open files per process, which the '
                    'database pools share.'),
    cfg.FloatOpt('request_timeout',
                 default=30.0,
                 min=0.1,
                 help='Seconds a client has to send one whole request '
                      '(request line, headers and body), counted from its '
                      'first byte, or from the opening of a connection that '
                      'has sent nothing yet. A request still incomplete '
                      'then is answered 408 and its connection closed. 30 '
                      'seconds carry the largest body '
                      '(max_request_body_size) over any working link, and '
                      'bound how long a slow client holds a connection.'),
    cfg.FloatOpt('idle_timeout',
                 default=75.0,
                 min=0.1,
                 help='Seconds a kept-alive connection may wait for its next '
                      'request before the built-in server closes it. 75 '
                      'seconds outlast the 60 seconds a typical proxy keeps '
                      'an idle upstream connection, so that the proxy, not '
                      'this server, closes it (a server closing first races '
                      'the proxy\'s next request).'),
    cfg.IntOpt('max_request_header_size',
               default=65536,
               min=1024,
               help='Largest request line plus headers, in bytes; a bigger '
                    'one is answered 431. 64 KiB leaves room for large '
                    'tokens and a proxy\'s added headers, and bounds what '
                    'max_connections clients can make the server buffer.'),
    cfg.FloatOpt('shutdown_timeout',
                 default=5.0,
                 min=0.0,
                 help='Seconds the built-in server lets requests in flight '
                      'finish after SIGTERM before it closes every '
                      'connection. It stops accepting and closes idle '
                      'connections at once; 5 seconds finish any normal '
                      'request while a stop still takes seconds, not '
                      'minutes.'),
]


def register_opts(conf):
    conf.register_group(api_group)
    conf.register_opts(api_opts, group=api_group)


def list_opts():
    return {api_group: api_opts}
