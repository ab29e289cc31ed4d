"""The REST API: a WSGI application in the shape of Nova's, under /v2.1.

``cellboot.api.wsgi.make_app()`` builds it; ``cellboot-api`` serves it
with a built-in threaded server, and any WSGI server can serve it too.
The routes, their handlers and their request schemas are listed once in
``cellboot.api.routes``; the OpenAPI document is generated from that
list, so the two cannot disagree.
"""
