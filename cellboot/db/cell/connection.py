"""Transaction contexts for cell databases, cached per connection URL.

A service inside a cell uses its own ``[database] connection``; API-level
services reach a cell through ``context.target_cell``, which puts the
cell's context manager on a copy of the request context. ``reader`` and
``writer`` pick the targeted cell when there is one, the local cell
database otherwise. Engines are cached per URL so that targeting the same
cell twice reuses its connection pool.
"""

import threading

from cellboot import exception
from cellboot.conf import CONF
from cellboot.db import facade

_LOCK = threading.Lock()
_managers = {}


def get_context_manager(connection):
    """The (cached) transaction context manager for a cell database URL."""
    manager = _managers.get(connection)
    if manager is None:
        with _LOCK:
            manager = _managers.get(connection)
            if manager is None:
                opts = dict(CONF.database.items())
                opts.pop('connection', None)
                if connection != CONF.database.connection:
                    # A cell reached through its mapping fails at once when
                    # its server is down, instead of sleeping through
                    # oslo.db's start-up retries (10 x 10 s by default)
                    # with the engine's start lock held: scatter-gather
                    # then reports it as failed, not as silent, and the
                    # next request tries it again.
                    opts['max_retries'] = 0
                    # A cell reached through its mapping may be
                    # partitioned or compromised: its server may accept a
                    # connection and never answer. The read timeout bounds
                    # how long a thread that reads it (one the API's
                    # cell_timeout gave up on) stays blocked there.
                    opts['connection_parameters'] = facade.bounded_waits(
                        connection, opts.get('connection_parameters'),
                        CONF.api.cell_read_timeout)
                manager = facade.new_context_manager(connection, **opts)
                _managers[connection] = manager
    return manager


def pick_context_manager(context):
    """The targeted cell's context manager, or the local cell's."""
    manager = getattr(context, 'db_connection', None)
    if manager is not None:
        return manager
    if not CONF.database.connection:
        raise exception.ConfigurationError(
            reason='this service has no [database] connection and the '
                   'request is not targeted at a cell')
    return get_context_manager(CONF.database.connection)


reader = facade.transactional(pick_context_manager, 'reader')
writer = facade.transactional(pick_context_manager, 'writer')


def get_engine(connection):
    """The writer engine of the cell database at ``connection``."""
    return get_context_manager(connection).writer.get_engine()


def reset():
    """Dispose of every cached engine (tests and long-lived commands)."""
    with _LOCK:
        for manager in _managers.values():
            if manager.is_started:
                manager.dispose_pool()
        _managers.clear()
