"""Request handlers, one module per resource.

A handler is ``fn(api, request, context, **path_params)`` and returns a
webob Response: it checks who may ask, validates, calls one object or
record function, and serializes. ``api`` (``wsgi.API``) carries the
shared collaborators: the conductor client and the scheduler.
"""
