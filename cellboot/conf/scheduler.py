"""The ``[scheduler]`` group: how the scheduler places and claims.

Options come in blocks, one per part of the scheduler, so that each part's
owner keeps its options together; ``scheduler_opts`` is their union.
"""

from oslo_config import cfg

scheduler_group = cfg.OptGroup(
    'scheduler',
    title='Scheduler',
    help='Placement of servers on compute hosts and the atomic claims of '
         'their resources (resource providers, inventories, allocations).')

# -- claims (cellboot.scheduler.resources) --------------------------------

claim_opts = [
    cfg.IntOpt('claim_retries',
               default=10,
               min=0,
               help='How many times a claim is retried against fresh data '
                    'when another claim changed the same resource provider '
                    '(its generation) between the capacity check and the '
                    'write. Each retry means some other claim on that host '
                    'succeeded, so 10 is ample unless many schedulers aim '
                    'at very few hosts; after the last retry the claim '
                    'fails with ClaimConflict and the scheduler tries '
                    'another host. 0 disables retries.'),
]

# -- host states and selection (cellboot.scheduler.host_state, manager) ---

selection_opts = [
    cfg.IntOpt('max_attempts',
               default=3,
               min=1,
               help='How many hosts a server may be tried on: the chosen '
                    'host plus max_attempts - 1 alternates from the same '
                    'cell, handed to the cell conductor for reschedules. '
                    '1 disables rescheduling.'),
    cfg.IntOpt('host_state_refresh_interval',
               default=60,
               min=0,
               help='Seconds between two full reloads of the in-memory '
                    'host states (hosts, service liveness, inventories and '
                    'usages of every enabled cell) by a background thread. '
                    'The scheduler keeps its own claims current between '
                    'reloads, so this only bounds how long it takes to see '
                    'new, disabled or dead hosts and the claims of other '
                    'schedulers. 0 disables the periodic reload.'),
    cfg.FloatOpt('cell_check_interval',
                 default=1.0,
                 min=0.0,
                 help='Seconds between two reads, by the API level\'s '
                      'scheduler, of the aggregate that each enabled '
                      'cell\'s schedulers publish in the cell\'s database '
                      '(one small query per cell). A cell that fails or '
                      'does not answer within cell_check_timeout is taken '
                      'for silent and sent no request until it answers '
                      'again, so that boots go to the cells that can take '
                      'them instead of waiting for a partitioned one. This '
                      'also bounds how long the API level takes to see '
                      'the claims of other API-level schedulers (each '
                      'takes its own at once). 0 reads the aggregates only '
                      'when the scheduler starts and after each answer of '
                      'a cell.'),
    cfg.FloatOpt('cell_check_timeout',
                 default=2.0,
                 min=0.1,
                 help='Seconds a read of a cell\'s aggregate waits for the '
                      'cell database before taking the cell for silent. A '
                      'cell that is already silent is not waited for '
                      'again: one call to it at a time finds out when it '
                      'is back.'),
    cfg.IntOpt('service_down_time',
               default=60,
               min=1,
               help='Seconds after its last heartbeat at which a compute '
                    'service counts as down for the ComputeFilter, '
                    'measured at the time its cell was last loaded. Keep '
                    'it above the compute report interval.'),
]

# -- the two levels (cellboot.scheduler.cells, aggregate) -----------------

level_opts = [
    cfg.IntOpt('max_cells_per_request',
               default=3,
               min=1,
               help='How many cells the API level asks, best first, before '
                    'a request ends in NoValidHost: a cell whose aggregate '
                    'said it might fit and whose scheduler found no host '
                    '(or did not answer) hands the request to the next. '
                    'Each extra cell costs one round trip to its '
                    'scheduler; 3 rides out a stale aggregate or a cell '
                    'scheduler that just died without turning a large '
                    'cloud\'s full cells into a long search.'),
    cfg.IntOpt('cell_call_timeout',
               default=30,
               min=1,
               help='Seconds the API level waits for a cell\'s scheduler '
                    'to answer a placement before it tries the next cell. '
                    'A cell scheduler that stopped publishing its '
                    'aggregate (aggregate_max_age) is not asked at all.'),
    cfg.FloatOpt('aggregate_publish_interval',
                 default=0.5,
                 min=0.0,
                 help='Seconds between two writes, by a cell\'s scheduler, '
                      'of the cell\'s aggregate after claims moved what '
                      'the API level schedules cells by (the largest free '
                      'room on one host, hosts up, zones, capacity, or the '
                      'free room by more than 1 percent of capacity; room '
                      'given back is written at once). Bounds how '
                      'stale the API level\'s figures of a cell can be '
                      'for other schedulers\' claims. 0 disables the '
                      'background writes (tests).'),
    cfg.FloatOpt('aggregate_heartbeat_interval',
                 default=5.0,
                 min=0.1,
                 help='Seconds after which a cell\'s scheduler writes its '
                      'aggregate again even when nothing changed: the '
                      'API level takes a cell whose aggregate is older than '
                      'aggregate_max_age for one without a live '
                      'scheduler.'),
    cfg.FloatOpt('aggregate_max_age',
                 default=30.0,
                 min=1.0,
                 help='Seconds after which the API level takes a cell '
                      'whose newest aggregate is older for a cell whose '
                      'schedulers are all down, and sends it nothing. '
                      'Keep it several aggregate_heartbeat_interval '
                      'above.'),
]

# -- schedulers of one level kept in sync (cellboot.scheduler.sync) -------

SYNC_DATABASE = 'database'
SYNC_REDIS = 'redis'
SYNC_NONE = 'none'

sync_opts = [
    cfg.StrOpt('sync_backend',
               default=SYNC_DATABASE,
               choices=[
                   (SYNC_DATABASE, 'a change feed table in the cell\'s own '
                                   'database, written in the claim\'s '
                                   'transaction: no new service, and a '
                                   'cell can only disturb its own '
                                   'schedulers'),
                   (SYNC_REDIS, 'a Redis stream per cell (sync_redis_url), '
                                'written after the claim commits'),
                   (SYNC_NONE, 'no feed: other schedulers\' claims are '
                               'learnt at the periodic reload or after a '
                               'failed claim'),
               ],
               help='Where the schedulers of one cell announce their '
                    'claims, releases, provider updates and build-failure '
                    'counts to each other. Each scheduler pulls what is new '
                    'before every decision and re-reads only the providers '
                    'named, so it sees the others\' claims within about '
                    'sync_pull_interval instead of host_state_refresh_'
                    'interval. While the backend is unreachable the '
                    'schedulers rely on the periodic reload (claims are '
                    'still checked in the database), and reload in full '
                    'once it is back.'),
    cfg.StrOpt('sync_redis_url',
               default='redis://127.0.0.1:6379/0',
               secret=True,
               help='Redis URL of the change feed (sync_backend = redis), '
                    'redis://[[USER]:PASSWORD@]HOST:PORT/DB.'),
    cfg.FloatOpt('sync_pull_interval',
                 default=0.01,
                 min=0.0,
                 help='Seconds during which a scheduler makes decisions '
                      'without pulling the change feed again. Bounds the '
                      'cost of the pull under load (one cheap query per '
                      'this interval, not per decision) and adds at most '
                      'this much to how stale a decision can be. 0 pulls '
                      'before every decision.'),
    cfg.FloatOpt('sync_gap_wait',
                 default=5.0,
                 min=0.0,
                 help='Seconds a scheduler keeps looking for a change that '
                      'is missing from the database feed (a lower sequence '
                      'number becomes visible after a higher one when its '
                      'transaction commits later, or never when it rolled '
                      'back). A transaction longer than this is seen at the '
                      'next periodic reload.'),
    cfg.FloatOpt('sync_retry_interval',
                 default=1.0,
                 min=0.1,
                 help='Seconds between two attempts to reach the feed while '
                      'it is down; decisions meanwhile do not wait for it.'),
    cfg.IntOpt('sync_retention',
               default=600,
               min=10,
               help='Seconds a change stays in the feed before it is '
                    'trimmed (database: deleted once a minute by one of '
                    'the schedulers; redis: the stream is capped at about '
                    'sync_max_entries). A scheduler that fell further '
                    'behind reloads in full.'),
    cfg.IntOpt('sync_max_entries',
               default=1000,
               min=10,
               help='Most changes taken in one pull. A scheduler that finds '
                    'more waiting reloads its host states in full instead, '
                    'which is cheaper than re-reading that many providers '
                    'one pull at a time; for redis also the approximate '
                    'length of the stream, times ten.'),
]

scheduler_opts = claim_opts + selection_opts + level_opts + sync_opts


def register_opts(conf):
    conf.register_group(scheduler_group)
    conf.register_opts(scheduler_opts, group=scheduler_group)


def list_opts():
    return {scheduler_group: scheduler_opts}
