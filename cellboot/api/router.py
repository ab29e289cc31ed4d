"""A tiny router: path templates with ``{name}`` segments, per method.

Routes (the Routes library) would do, but a table of our own routes is
also what the OpenAPI document is made from, and matching it takes a
few lines. A path that matches no template answers 404; a template that
matches with another method answers 405.
"""

import dataclasses
import re

from cellboot.api import errors

_PARAM = re.compile(r'\{(\w+)\}')


@dataclasses.dataclass(frozen=True)
class Route:
    """One method on one path, and what the API documents about it.

    ``policy`` names the oslo.policy rule (``cellboot.policies``) that
    the caller must pass, with its own project as the target, before the
    handler runs; handlers of one resource check its rule again against
    the resource's own project.
    """

    method: str
    path: str
    handler: object
    summary: str
    policy: str = None
    authenticated: bool = True
    body_schema: dict = None
    query: tuple = ()
    status: int = 200

    @property
    def pattern(self):
        regex = _PARAM.sub(r'(?P<\1>[^/]+)', re.escape(self.path).replace(
            r'\{', '{').replace(r'\}', '}'))
        return re.compile(f'^{regex}$')

    @property
    def params(self):
        return _PARAM.findall(self.path)


class Router:
    """Finds the route of a method and path."""

    def __init__(self, routes):
        self.routes = list(routes)
        self._compiled = [(route, route.pattern) for route in self.routes]

    def match(self, method, path):
        """``(route, params)``; HTTPError 404 or 405 when none fits."""
        allowed = []
        for route, pattern in self._compiled:
            found = pattern.match(path)
            if found is None:
                continue
            if route.method == method:
                return route, found.groupdict()
            allowed.append(route.method)
        if allowed:
            raise errors.HTTPError(
                405, f'Method {method} is not allowed on {path}; use '
                     f'{", ".join(sorted(set(allowed)))}.')
        raise errors.NotFound(f'No such path: {path}')
