"""The API database's transaction context (one per process).

Functions that touch the API database are decorated with ``reader`` or
``writer`` and take the request context first; the context manager is
built from ``[api_database]`` the first time it is needed.
"""

import threading

from cellboot.conf import CONF
from cellboot.db import facade

_LOCK = threading.Lock()
_manager = None


def get_context_manager(context=None):
    """The API database's transaction context manager."""
    global _manager
    if _manager is None:
        with _LOCK:
            if _manager is None:
                opts = dict(CONF.api_database.items())
                connection = opts.pop('connection')
                # Every request reads this database: one that cannot
                # be reached is answered 503 within seconds.
                opts['connection_parameters'] = facade.bounded_waits(
                    connection, opts.get('connection_parameters'))
                _manager = facade.new_context_manager(connection, **opts)
    return _manager


reader = facade.transactional(get_context_manager, 'reader')
writer = facade.transactional(get_context_manager, 'writer')


def get_engine():
    """The API database's writer engine."""
    return get_context_manager().writer.get_engine()


def reset():
    """Drop the engine so the next use reads ``[api_database]`` again.

    Used by tests and by commands that change the configuration after
    start-up.
    """
    global _manager
    with _LOCK:
        if _manager is not None and _manager.is_started:
            _manager.dispose_pool()
        _manager = None
