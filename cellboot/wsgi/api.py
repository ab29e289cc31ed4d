"""cellboot-api for a WSGI server: ``cellboot.wsgi.api:application``.

Importing this module configures the process (see
``cellboot.api.wsgi_app``); point uWSGI's ``module``, mod_wsgi's
``WSGIScriptAlias`` (this file's path) or gunicorn at it, never import
it from cellboot itself. docs/deployment-api.md has working examples.
"""

from cellboot.api import wsgi_app

application = wsgi_app.init_application()
