"""Modules that WSGI servers load (``module:application``); entry points
like ``cellboot.cmd``: nothing imports them."""
