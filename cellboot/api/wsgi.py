"""The WSGI application: size limit, authentication, routing, faults.

``make_app()`` returns a plain WSGI callable that any WSGI server can
serve. The stack, outermost first:

1. ``errors.FaultWrapper`` — an unexpected exception becomes a logged 500
   (and is counted: the fuzzing test asserts that nothing reaches it);
2. ``operator_paths.HealthPath`` — ``/healthcheck``, unauthenticated
   (``health``);
3. keystonemiddleware's ``auth_token`` when ``[api] auth_strategy =
   keystone``;
4. ``operator_paths.MetricsPath`` — ``/metrics``, for administrators;
5. ``API`` — refuses oversized bodies (413) before reading them, finds
   the route (404/405; ``OPTIONS`` answers the path's methods), builds
   the request context from the token (401) and checks the route's
   policy rule (403), and only then looks at what the request carries
   (path parameters, query, body media type: ``inputs``) before calling
   the handler, which validates the body itself.
"""


import webob.dec

from cellboot.api import auth
from cellboot.api import errors
from cellboot.api import health
from cellboot.api import inputs
from cellboot.api import openapi
from cellboot.api import operator_paths
from cellboot.api import router
from cellboot.api import routes
from cellboot.api import schemas
from cellboot.conf import api as api_conf
from cellboot.conf import CONF
from cellboot.conductor import rpcapi as conductor_rpcapi

# Paths served both at the root and under the prefix.
_ROOT_PATHS = ('/', '/openapi.json')


class API:
    """Routes a request to its handler; holds what handlers share.

    ``scheduler``: the scheduler library (or any object with its
    methods), used to release a deleted server's claims and to read the
    host states; ``conductor``: the super conductor's client.
    """

    def __init__(self, scheduler, conductor=None, strategy=None):
        self.scheduler = scheduler
        self.conductor = conductor or conductor_rpcapi.ConductorAPI()
        self.strategy = strategy or CONF.api.auth_strategy
        self.prefix = routes.PREFIX
        self.routes = routes.ROUTES
        self.router = router.Router(self.routes)
        self.openapi = openapi.document(self.routes, self.prefix)

    def _path(self, request):
        path = inputs.path(request)
        if len(path) > 1:
            path = path.rstrip('/') or '/'
        if path == self.prefix or path.startswith(self.prefix + '/'):
            return path[len(self.prefix):] or '/'
        if path in _ROOT_PATHS:
            return path
        raise errors.NotFound(f'No such path: {inputs.printable(path)}; '
                              f'the API is under {self.prefix}')

    @staticmethod
    def _limit_body(request):
        """413 for a body over ``[api] max_request_body_size`` bytes."""
        limit = CONF.api.max_request_body_size
        too_big = errors.HTTPError(
            413, f'The request body is over the limit of {limit} bytes.')
        length = request.content_length
        if length is not None:
            if length > limit:
                raise too_big
            return
        if request.method in ('POST', 'PUT', 'PATCH'):
            body = request.body_file_raw.read(limit + 1)
            if len(body) > limit:
                raise too_big
            request.body = body

    @webob.dec.wsgify
    def __call__(self, request):
        """Authenticate, then authorize, then validate, then handle."""
        self._limit_body(request)
        path = self._path(request)
        if request.method == 'OPTIONS':
            return self._options(path)
        route, params = self.router.match(request.method, path)
        context = None
        if route.authenticated:
            context = auth.context_from_request(request, self.strategy)
            if route.policy:
                auth.authorize(context, route.policy)
        if not all(inputs.storable(value) for value in params.values()):
            raise errors.NotFound(
                f'No such resource: {inputs.printable(path)}')
        if route.query:
            inputs.check_query(request)
            schemas.validate_query(route.query_schemas, request.GET)
        if route.body_schema is not None:
            inputs.check_media_type(request)
        request.environ[auth.CONTEXT_KEY] = context
        return route.handler(self, request, context, **params)

    def _options(self, path):
        """204 with the path's methods; 404 for a path that has none."""
        allowed = self.router.allowed(path)
        if not allowed:
            raise errors.NotFound(f'No such path: {inputs.printable(path)}')
        return errors.json_response(204, headers={'Allow': ', '.join(
            allowed)})


def make_app(scheduler, conductor=None, strategy=None):
    """The WSGI application, with the stack of the module docstring."""
    strategy = strategy or CONF.api.auth_strategy
    application = API(scheduler, conductor=conductor, strategy=strategy)
    wrapped = operator_paths.MetricsPath(application, strategy)
    if strategy == api_conf.KEYSTONE:
        wrapped = auth.wrap_keystone(wrapped)
    wrapped = operator_paths.HealthPath(wrapped, health.application(wrapped))
    fault_wrapper = errors.FaultWrapper(wrapped)
    fault_wrapper.api = application
    return fault_wrapper
