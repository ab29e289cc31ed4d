"""The WSGI application: size limit, authentication, routing, faults.

``make_app()`` returns a plain WSGI callable that any WSGI server can
serve. The stack, outermost first:

1. ``errors.FaultWrapper`` — an unexpected exception becomes a logged 500
   (and is counted: the fuzzing test asserts that nothing reaches it);
2. keystonemiddleware's ``auth_token`` when ``[api] auth_strategy =
   keystone``;
3. ``API`` — refuses oversized bodies (413) before reading them, finds
   the route (404/405), builds the request context from the token
   (401), checks the route's policy rule (403), and calls the handler.
"""


import webob.dec

from cellboot.api import auth
from cellboot.api import errors
from cellboot.api import openapi
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
        path = request.path_info
        if len(path) > 1:
            path = path.rstrip('/') or '/'
        if path == self.prefix or path.startswith(self.prefix + '/'):
            return path[len(self.prefix):] or '/'
        if path in _ROOT_PATHS:
            return path
        raise errors.NotFound(f'No such path: {request.path_info}; the API '
                              f'is under {self.prefix}')

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
        self._limit_body(request)
        route, params = self.router.match(request.method,
                                          self._path(request))
        if schemas.has_nul(params):
            raise errors.NotFound(f'No such resource: {request.path_info}')
        if schemas.has_nul(dict(request.GET)):
            raise errors.BadRequest('A query parameter holds a NUL '
                                    'character.')
        context = None
        if route.authenticated:
            context = auth.context_from_request(request, self.strategy)
            if route.policy:
                auth.authorize(context, route.policy)
        request.environ[auth.CONTEXT_KEY] = context
        return route.handler(self, request, context, **params)


def make_app(scheduler, conductor=None, strategy=None):
    """The WSGI application, with the stack of the module docstring."""
    strategy = strategy or CONF.api.auth_strategy
    application = API(scheduler, conductor=conductor, strategy=strategy)
    wrapped = application
    if strategy == api_conf.KEYSTONE:
        wrapped = auth.wrap_keystone(application)
    fault_wrapper = errors.FaultWrapper(wrapped)
    fault_wrapper.api = application
    return fault_wrapper
