"""The ``[nova]`` group: nova-api as a client of the super conductor.

A real nova-api casts ``schedule_and_build_instances`` to its
conductor's topic on its own bus. With ``enabled``, every super
conductor also serves that topic (the Nova door, docs/nova.md) and
builds what nova-api asked as cellboot builds its own API's requests.
Off by default: a super conductor that consumes Nova's conductor queue
takes builds away from any nova-conductor on the same bus.
"""

from oslo_config import cfg

nova_group = cfg.OptGroup(
    'nova',
    title='Nova door',
    help='Accepting builds cast by an unmodified nova-api (Nova 34).')

nova_opts = [
    cfg.BoolOpt('enabled',
                default=False,
                help='Serve nova-api\'s conductor topic (exchange '
                     '[nova] exchange, topic conductor, namespace '
                     'compute_task) in every super conductor. Only one '
                     'kind of conductor may consume that queue: stop '
                     'nova-conductor\'s super conductor role first '
                     '(docs/nova.md).'),
    cfg.StrOpt('transport_url',
               secret=True,
               help='nova-api\'s [DEFAULT] transport_url, the bus it casts '
                    'builds on. Default: cellboot\'s own [DEFAULT] '
                    'transport_url (nova-api and cellboot on one vhost).'),
    cfg.StrOpt('exchange',
               default='nova',
               help='nova-api\'s [DEFAULT] control_exchange.'),
    cfg.BoolOpt('amqp_durable_queues',
                default=False,
                help='nova-api\'s [oslo_messaging_rabbit] '
                     'amqp_durable_queues (Nova\'s default: false). The '
                     'door declares Nova\'s exchange and queue as Nova '
                     'does: RabbitMQ refuses a second declaration that '
                     'differs, and then either the door or nova-api\'s '
                     'casts fail. cellboot\'s own buses keep their own '
                     'setting.'),
    cfg.StrOpt('api_database_connection',
               secret=True,
               help='nova-api\'s [api_database] connection. With it, the '
                    'super conductors keep nova-api\'s view of the '
                    'builds of the door true (the Nova mirror, '
                    'docs/nova.md): instance mappings, build requests, '
                    'and the instances in Nova\'s cell databases, found '
                    'through Nova\'s cell mappings. Without it nova-api '
                    'shows those servers in BUILD for ever.'),
    cfg.DictOpt('cells',
                default={},
                help='Which Nova cell mirrors which cellboot cell, as '
                     'cellboot_cell_name:nova_cell_name pairs. A cellboot '
                     'cell not listed is mirrored by the Nova cell of '
                     'the same name (cell0 by Nova\'s cell0).'),
    cfg.IntOpt('lost_cast_after',
               default=120,
               min=10,
               help='Seconds after nova-api wrote a build request that '
                    'cellboot never got (its cast was lost: nova-api died '
                    'after its commit, the broker lost Nova\'s '
                    'non-durable queue, no door listened yet) before the '
                    'Nova mirror builds the request from nova-api\'s own '
                    'database. Longer than casts ever wait in the queue: '
                    'a late cast then finds the request accepted.'),
    cfg.FloatOpt('mirror_interval',
                 default=1.0,
                 min=0.1,
                 help='Seconds between two passes of the Nova mirror: '
                      'about how long nova-api lags behind cellboot.'),
]


def register_opts(conf):
    conf.register_group(nova_group)
    conf.register_opts(nova_opts, group=nova_group)


def list_opts():
    return {nova_group: nova_opts}
