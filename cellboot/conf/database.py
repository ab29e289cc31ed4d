"""The ``[database]`` group: the cell database of services inside a cell.

These are oslo.db's own options. Compute hosts and cell conductors use this
connection; API-level services reach cell databases through
``cell_mappings.database_connection`` instead.

cellboot changes two of their defaults (``RECONNECT_DEFAULTS``) to ride
out a database blip (a restart, a failover), and leaves the pool sizes
unset (``POOL_DEFAULTS``) so that each service sizes them
(``cellboot.db.pools``); ``[api_database]`` copies these options and so
takes them too. Once an engine runs, oslo.db checks
each pooled connection before use (its pre-ping) and reconnects a dead
one, so a service needs no restart when its database is back; what the
defaults change is how a service that starts during an outage waits.
"""

from oslo_config import cfg
from oslo_db import options as oslo_db_options

# oslo.db waits 10 x 10 s at an engine's start, and sees a database that
# came back up to 10 s late. Trying every second for a documented outage
# of 30 s starts a service within a second of its database's return.
RECONNECT_DEFAULTS = {
    'max_retries': 30,
    'retry_interval': 1,
}

# Unset (None), a service sizes its pools to what it runs at once
# (``cellboot.db.pools``; oslo.db's 5 + 50 churned connections and made
# bursts exhaust the server); set, they are the operator's override.
POOL_DEFAULTS = {
    'max_pool_size': None,
    'max_overflow': None,
}

# On oslo.db's option objects themselves, at import, as oslo.db's own
# set_defaults() does: oslo.db's engine facade registers these very
# objects on the [database] group when it starts (a copy with other
# defaults would clash with them), and the sample configuration and
# [api_database] (copied at its import, after this one) show them.
cfg.set_defaults(oslo_db_options.database_opts, **RECONNECT_DEFAULTS,
                 **POOL_DEFAULTS)


outage_opts = [
    cfg.IntOpt('outage_retry_seconds',
               default=30,
               min=0,
               help='How long a conductor or compute host keeps running '
                    'again a write that could not reach its database '
                    '(connection refused, timed out or lost: a database '
                    'restart, failover or partition), from the first '
                    'failure, before the write fails as any other error '
                    'would (a flow step fails, a build may end in ERROR). '
                    'Applies to every database these services write to '
                    '(API, cell and flow databases). Pauses between '
                    'attempts grow from 0.1 s to 2 s. 0 disables these '
                    'retries. The cellboot-api service does not wait: it '
                    'answers 503 with Retry-After at once.'),
]


def register_opts(conf):
    oslo_db_options.set_defaults(conf)
    conf.register_opts(outage_opts, group='database')


def list_opts():
    return {'database': oslo_db_options.database_opts + outage_opts}
