"""A long-running RPC server: endpoints answering one topic on one bus.

Every cellboot service (super and cell conductors, compute hosts, the
scheduler) is one or more ``RPCService`` objects plus, for some, a
background loop of its own; ``cellboot.service_runner`` starts them,
waits for SIGTERM/SIGINT and stops them. Requests are handled by
oslo.messaging's threading executor (a pool of
``[DEFAULT] executor_thread_pool_size`` threads): endpoints must be
thread-safe, and they are, because all their state is in the databases
and the scheduler's locked host states.
"""

import oslo_messaging
from oslo_log import log as logging

from cellboot.rpc import serializer as rpc_serializer

LOG = logging.getLogger(__name__)


class RPCService:
    """Serve ``endpoints`` on ``topic`` (and ``topic.host``) on a transport.

    ``start()`` connects and begins dispatching; ``stop()`` stops taking
    new messages; ``wait()`` returns once the requests in flight are done.
    Calls to a topic reach one of its servers; a cast or call with
    ``server=host`` reaches this one only. Only endpoint methods marked
    with ``oslo_messaging.expose`` can be called from the bus, so an
    endpoint's helpers (start, stop, resume...) never become remote
    procedures by being public.
    """

    def __init__(self, host, topic, endpoints, transport, exchange=None):
        self.host = host
        self.topic = topic
        self.endpoints = list(endpoints)
        self.transport = transport
        # None: the transport's ([DEFAULT] control_exchange); the Nova
        # door serves nova-api's exchange instead.
        self.exchange = exchange
        self._server = None

    def __repr__(self):
        return f'<RPCService topic={self.topic} host={self.host}>'

    def start(self):
        target = oslo_messaging.Target(topic=self.topic, server=self.host,
                                       exchange=self.exchange)
        self._server = oslo_messaging.get_rpc_server(
            self.transport, target, self.endpoints,
            serializer=rpc_serializer.RequestContextSerializer(),
            access_policy=oslo_messaging.ExplicitRPCAccessPolicy)
        self._server.start()
        LOG.info('Serving %s as %s (%s)', self.topic, self.host,
                 ', '.join(type(e).__name__ for e in self.endpoints))

    def stop(self):
        if self._server is not None:
            self._server.stop()

    def wait(self):
        """Wait for the requests in flight; the service can start again."""
        if self._server is not None:
            self._server.wait()
            self._server = None
            LOG.info('Stopped serving %s as %s', self.topic, self.host)
