"""nova-api's bus, declared as Nova declares it.

RabbitMQ refuses to declare an exchange or a queue again with other
properties (``PRECONDITION_FAILED``, and the channel is closed).
cellboot's own buses make durable queues and exchanges
(``[oslo_messaging_rabbit] amqp_durable_queues``, on by default here);
Nova's default is off. On nova-api's bus, whoever declares exchange
``nova`` or queue ``conductor`` first would make the other fail: the
door could not start, or every ``POST /servers`` of nova-api would fail
to cast. So the door's transport is made with Nova's settings: a
configuration object of its own that copies cellboot's
``[oslo_messaging_rabbit]`` options (TLS, heartbeats, retries), takes
``amqp_durable_queues`` and the exchange from ``[nova]``, which must say
what nova-api's configuration says, and reads any other group from
cellboot's.
"""

import threading

from oslo_config import cfg
from oslo_messaging._drivers import amqp as om_amqp
from oslo_messaging._drivers import impl_rabbit
from oslo_messaging import transport as om_transport

from cellboot.conf import CONF

RABBIT_GROUP = 'oslo_messaging_rabbit'

_LOCK = threading.Lock()
_confs = {}


class _NovaBusConf(cfg.ConfigOpts):
    """Nova's settings for the bus, cellboot's for everything else.

    oslo.messaging reads more of its transport's configuration than the
    driver's group (tracing, metrics, options it registers on the global
    object when imported): a group this object does not hold is read
    from cellboot's configuration.
    """

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except cfg.NoSuchOptError:
            return getattr(CONF, name)


def _rabbit_opts():
    return list(impl_rabbit.rabbit_opts) + list(om_amqp.amqp_opts)


def nova_conf():
    """A ConfigOpts for nova-api's bus (one per ``[nova]`` settings)."""
    key = (CONF.nova.exchange, CONF.nova.amqp_durable_queues)
    with _LOCK:
        conf = _confs.get(key)
        if conf is not None:
            return conf
        conf = _NovaBusConf()
        conf([], project='cellboot', default_config_files=[],
             default_config_dirs=[])
        conf.register_opts(om_transport._transport_opts)
        opts = _rabbit_opts()
        conf.register_opts(opts, group=RABBIT_GROUP)
        # cellboot's values of the driver's options, registered on the
        # global object too (oslo.messaging registers them only when a
        # rabbit transport is first made).
        CONF.register_opts(opts, group=RABBIT_GROUP)
        for opt in opts:
            conf.set_override(opt.dest,
                              getattr(CONF.oslo_messaging_rabbit, opt.dest),
                              group=RABBIT_GROUP)
        conf.set_override('amqp_durable_queues',
                          CONF.nova.amqp_durable_queues, group=RABBIT_GROUP)
        conf.set_override('control_exchange', CONF.nova.exchange)
        _confs[key] = conf
        return conf
