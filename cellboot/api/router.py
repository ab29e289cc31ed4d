"""A tiny router: path templates with ``{name}`` segments, per method.

Routes (the Routes library) would do, but a table of our own routes is
also what the OpenAPI document is made from, and matching it takes a
few lines. A path that matches no template answers 404; a template that
matches with another method answers 405.
"""

import dataclasses
import re

from cellboot.api import errors
from cellboot.api import inputs

_PARAM = re.compile(r'\{(\w+)\}')


@dataclasses.dataclass(frozen=True)
class Route:
    """One method on one path, and what the API documents about it.

    ``policy`` names the oslo.policy rule (``cellboot.policies``) that
    the caller must pass, with its own project as the target, before the
    handler runs; handlers of one resource check its rule again against
    the resource's own project. ``response_schema`` describes the
    success body (None: no body); ``failures`` are error statuses the
    handler answers besides those every route of its kind answers (e.g.
    409); ``query`` names the query parameters, ``query_schemas`` the
    schema of those that are not any string; ``links`` are OpenAPI links
    of the success response; ``also`` other success statuses, answered
    without a body (a PUT that finds what it would create: 204).
    ``database``: the handler reads or writes
    a database, so it answers 503 with ``Retry-After`` when one does not
    answer (every route but the static documents).
    """

    method: str
    path: str
    handler: object
    summary: str
    policy: str = None
    authenticated: bool = True
    body_schema: object = None
    query: tuple = ()
    status: int = 200
    response_schema: dict = None
    failures: tuple = ()
    query_schemas: dict = dataclasses.field(default_factory=dict)
    links: dict = dataclasses.field(default_factory=dict)
    database: bool = True
    also: tuple = ()

    @property
    def pattern(self):
        regex = _PARAM.sub(r'(?P<\1>[^/]+)', re.escape(self.path).replace(
            r'\{', '{').replace(r'\}', '}'))
        return re.compile(f'^{regex}$')

    def body(self):
        """The body's schema under this configuration, or None.

        ``body_schema`` is a schema, or a function returning one where
        the schema depends on configuration read after import.
        """
        if callable(self.body_schema):
            return self.body_schema()
        return self.body_schema

    @property
    def params(self):
        return _PARAM.findall(self.path)


class Router:
    """Finds the route of a method and path.

    Where a literal segment and a ``{name}`` segment both match (``GET
    /servers/detail`` and ``DELETE /servers/{server_id}``), the literal
    one wins, so that the methods of a path are those of one resource.
    ``HEAD`` is answered by the ``GET`` route (WebOb sends no body);
    ``OPTIONS`` is answered by the application from ``allowed()``.
    """

    def __init__(self, routes):
        self.routes = list(routes)
        self._compiled = [(route, route.pattern) for route in self.routes]

    def _candidates(self, path):
        """``[(route, params)]`` of the most literal templates matching."""
        found = []
        for route, pattern in self._compiled:
            match = pattern.match(path)
            if match is not None:
                found.append((route, match.groupdict()))
        if not found:
            return []
        fewest = min(len(route.params) for route, _params in found)
        return [(route, params) for route, params in found
                if len(route.params) == fewest]

    def allowed(self, path):
        """The methods of ``path`` as an ``Allow`` header lists them."""
        methods = {route.method for route, _params in self._candidates(path)}
        if not methods:
            return []
        if 'GET' in methods:
            methods.add('HEAD')
        methods.add('OPTIONS')
        return sorted(methods)

    def match(self, method, path):
        """``(route, params)``; HTTPError 404 or 405 when none fits."""
        candidates = self._candidates(path)
        if not candidates:
            raise errors.NotFound(f'No such path: {inputs.printable(path)}')
        wanted = 'GET' if method == 'HEAD' else method
        for route, params in candidates:
            if route.method == wanted:
                return route, params
        allow = ', '.join(self.allowed(path))
        raise errors.HTTPError(
            405, f'Method {method} is not allowed on '
                 f'{inputs.printable(path)}; use {allow}.',
            headers={'Allow': allow})
