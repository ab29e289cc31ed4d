"""The client side of one versioned RPC interface.

Each interface (super conductor, cell conductor, scheduler, compute) is a
small class over ``RPCClient``: it names the topic and turns its method's
arguments into a call or a cast. Two things are done here, once:

* a cellboot error raised by the remote service is re-raised as itself,
  with its own message: oslo.messaging rebuilds it as a ``<Name>_Remote``
  subclass whose ``str()`` carries the remote traceback, which must never
  reach a fault message or an operator's screen (it is logged at DEBUG);
* a call that gets no reply becomes ``RPCTimeout``, which says which
  service to look for;
* a cast is sent with a bounded ``retry``: oslo.messaging's default
  (None) makes a publisher whose broker is down reconnect for ever,
  which would hang the API's request, or a conductor's flow, for as
  long as the broker is away. ``retry=N`` reconnects N times (pausing
  ``[oslo_messaging_rabbit] rabbit_retry_interval`` s, then longer each
  time) and then raises ``MessageDeliveryFailure``: the caller, whose
  rows are the source of truth, leaves the message to a sweep that
  sends it again (docs/reliability.md, "A broker restart").
"""

import oslo_messaging
from oslo_log import log as logging

from cellboot import exception
from cellboot import metrics
from cellboot import rpc
from cellboot.rpc import serializer as rpc_serializer

LOG = logging.getLogger(__name__)

# Every interface is at its first version; a change that old servers
# cannot handle bumps it (and the endpoint's target) together.
VERSION = '1.0'

_REMOTE_SUFFIX = '_Remote'

# Errors of a remote service's database that mean it could not reach it;
# they cross the bus as oslo.messaging's RemoteError naming them.
REMOTE_OUTAGES = frozenset({'DBConnectionError'})


def is_remote_outage(exc):
    """A service called over RPC could not reach its own database."""
    return (isinstance(exc, oslo_messaging.RemoteError)
            and exc.exc_type in REMOTE_OUTAGES)


def _as_local(exc):
    """``exc`` with oslo.messaging's ``_Remote`` wrapper class removed."""
    cls = type(exc)
    if cls.__name__.endswith(_REMOTE_SUFFIX):
        LOG.debug('Remote %s', exc)
        exc.__class__ = cls.__mro__[1]
    return exc


class RPCClient:
    """Calls and casts to ``topic`` on ``transport`` at ``version``."""

    def __init__(self, transport, topic, version=VERSION):
        self.transport = transport
        self.topic = topic
        target = oslo_messaging.Target(topic=topic, version=version)
        self._client = oslo_messaging.get_rpc_client(
            transport, target,
            serializer=rpc_serializer.RequestContextSerializer())

    def _prepare(self, server, timeout, retry=None):
        options = {}
        if server is not None:
            options['server'] = server
        if timeout is not None:
            options['timeout'] = timeout
        if retry is not None:
            options['retry'] = retry
        return self._client.prepare(**options) if options else self._client

    def call(self, ctxt, method, server=None, timeout=None, **kwargs):
        """Run ``method`` remotely and return its result."""
        cctxt = self._prepare(server, timeout)
        try:
            return cctxt.call(ctxt, method, **kwargs)
        except exception.CellbootException as exc:
            raise _as_local(exc) from None
        except oslo_messaging.MessagingTimeout:
            raise exception.RPCTimeout(
                method=method, topic=self.topic,
                timeout=timeout or self.transport.conf.rpc_response_timeout,
                url=rpc.describe(self.transport)) from None

    def cast(self, ctxt, method, server=None, reconnects=None, **kwargs):
        """Send ``method`` without waiting for it to run.

        ``reconnects``: how many times to reconnect to a broker that does
        not answer before raising (oslo.messaging's ``retry``; None: for
        ever, see the module doc). Not called ``retry``: that is an
        argument of the build casts themselves.
        """
        try:
            self._prepare(server, None, reconnects).cast(ctxt, method,
                                                         **kwargs)
        except Exception:
            metrics.CAST_FAILURES.labels(method=method).inc()
            raise
