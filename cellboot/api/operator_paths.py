"""The API's two paths outside ``/v2.1``: ``/metrics`` and ``/healthcheck``.

Both are for operators and their tools, not for the REST API's users,
so neither is in the OpenAPI document nor under the version prefix:

* ``GET /metrics`` (``MetricsPath``) — this process's Prometheus
  metrics (``cellboot.metrics``), for administrators only (policy rule
  ``cellboot:metrics:show``): they name the cells and count every
  project's boots. It sits behind the authentication middleware like
  the API. A scraper that cannot present a token reads the same metrics
  from the separate server on ``[metrics] port``, which an operator
  keeps on a management network. ``[metrics] api_endpoint = False``
  removes it (404, as any unknown path).
* ``GET /healthcheck`` (``HealthPath``) — oslo.middleware's healthcheck
  application, unauthenticated (load balancers probe it), in front of
  the authentication middleware: 200 when this API can reach its
  database and its broker, 503 naming what it cannot
  (``cellboot.api.health``), and whatever oslo's own plugins say
  (``[healthcheck] backends``, e.g. ``disable_by_file``).

Any other method on either path is answered 405 in the API's JSON error
shape, ``OPTIONS`` 204 with ``Allow``.
"""

import webob.dec

from cellboot.api import auth
from cellboot.api import errors
from cellboot.api import inputs
from cellboot.conf import CONF
from cellboot.metrics import exposition
from cellboot.policies import metrics as metrics_policies

METRICS_PATH = '/metrics'
HEALTH_PATH = '/healthcheck'

_READ_METHODS = ('GET', 'HEAD')
_ALLOW = 'GET, HEAD, OPTIONS'


def _is(request, path):
    found = inputs.path(request)
    return found == path or found == path + '/'


def _refuse_other_methods(request, path):
    """``OPTIONS``' answer, or None for GET and HEAD; 405 for the rest."""
    if request.method == 'OPTIONS':
        return errors.json_response(204, headers={'Allow': _ALLOW})
    if request.method not in _READ_METHODS:
        raise errors.HTTPError(
            405, f'Method {inputs.printable(request.method)} is not allowed '
                 f'on {path}; use {_ALLOW}.', headers={'Allow': _ALLOW})
    return None


class MetricsPath:
    """``/metrics`` for administrators; everything else to ``application``.

    ``strategy``: the API's authentication strategy (how the caller's
    context is made).
    """

    def __init__(self, application, strategy):
        self.application = application
        self.strategy = strategy

    @webob.dec.wsgify
    def __call__(self, request):
        if not CONF.metrics.api_endpoint or not _is(request, METRICS_PATH):
            return request.get_response(self.application)
        answer = _refuse_other_methods(request, METRICS_PATH)
        if answer is not None:
            return answer
        context = auth.context_from_request(request, self.strategy)
        auth.authorize(context, metrics_policies.SHOW)
        body, content_type = exposition.render(
            request.headers.get('Accept'))
        response = request.response
        response.headers['Content-Type'] = content_type
        response.body = body
        return response


class HealthPath:
    """``/healthcheck`` by ``health``; everything else to ``application``.

    ``health``: the healthcheck WSGI application (``health.application``).
    """

    def __init__(self, application, health):
        self.application = application
        self.health = health

    @webob.dec.wsgify
    def __call__(self, request):
        if not _is(request, HEALTH_PATH):
            return request.get_response(self.application)
        answer = _refuse_other_methods(request, HEALTH_PATH)
        if answer is not None:
            return answer
        return request.get_response(self.health)
