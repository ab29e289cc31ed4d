"""The ``[metrics]`` group: Prometheus metrics and the API's health check.

Every cellboot process keeps its metrics in memory
(``cellboot.metrics``); these options say where they can be read.

oslo.middleware's own ``[healthcheck]`` options (its plugins, whether
answers are detailed) are registered here too, so that they can be set
before the API builds its healthcheck (``cellboot.api.health``).
"""

from oslo_config import cfg
from oslo_middleware import opts as middleware_opts

metrics_group = cfg.OptGroup(
    'metrics',
    title='Metrics and health',
    help='Prometheus metrics of this process (docs/operations.md lists '
         'them and what to alert on), and the bounds of the API\'s '
         '/healthcheck.')

metrics_opts = [
    cfg.PortOpt('port',
                default=0,
                help='TCP port of a separate, unauthenticated HTTP server '
                     'serving this process\'s metrics at /metrics (any '
                     'cellboot service: conductors, schedulers, compute '
                     'hosts, the API). 0, the default, starts none. Every '
                     'process of a host needs a port of its own.'),
    cfg.HostAddressOpt('host',
                       default='127.0.0.1',
                       help='Address the separate metrics server listens '
                            'on ([metrics] port). Unauthenticated: keep it '
                            'on a loopback or management network.'),
    cfg.BoolOpt('api_endpoint',
                default=True,
                help='Serve GET /metrics on cellboot-api\'s own port, '
                     'outside /v2.1, to administrators only (policy rule '
                     'cellboot:metrics:show). A scraper that cannot send '
                     'a token uses [metrics] port instead.'),
    cfg.FloatOpt('health_check_timeout',
                 default=3.0,
                 min=0.1,
                 help='Seconds each check of /healthcheck (the API '
                      'database, the message broker) may take before it is '
                      'reported as not answering. The checks run at once, '
                      'so an answer takes at most this long.'),
]


healthcheck_group = cfg.OptGroup(
    'healthcheck',
    title='Health check',
    help='oslo.middleware\'s healthcheck, which answers cellboot-api\'s '
         'GET /healthcheck. cellboot adds its checks of the API database '
         'and the message broker to the backends named here; keep '
         'detailed off on an API that users reach (detailed answers show '
         'every thread\'s stack).')


def _healthcheck_opts():
    """oslo.middleware's healthcheck options, its plugins' included."""
    (_group, opts), = middleware_opts.list_opts_healthcheck()
    return opts


def register_opts(conf):
    conf.register_group(metrics_group)
    conf.register_opts(metrics_opts, group=metrics_group)
    conf.register_group(healthcheck_group)
    conf.register_opts(_healthcheck_opts(), group=healthcheck_group)


def list_opts():
    return {metrics_group: metrics_opts,
            healthcheck_group: _healthcheck_opts()}
