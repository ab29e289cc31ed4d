"""Request handlers, one module per resource.

A handler is ``fn(api, request, context, **path_params)`` and returns a
webob Response: it checks who may ask, validates, calls one object or
record function, and serializes. ``api`` (``wsgi.API``) carries the
shared collaborators: the conductor client and the scheduler.
"""

import math

from cellboot.api import errors
from cellboot.conf import CONF


def unavailable(exc):
    """503 for a cell that did not answer, saying when to try again.

    ``Retry-After`` is ``[api] cell_timeout``, rounded up: a client that
    retries sooner would only wait as long again.
    """
    return errors.unavailable(str(exc),
                              max(1, math.ceil(CONF.api.cell_timeout)))
