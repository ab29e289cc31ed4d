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
    cfg.IntOpt('cell_load_timeout',
               default=30,
               min=1,
               help='Seconds to wait for each cell database when loading '
                    'host states. A cell that does not answer in time is '
                    'skipped (its hosts are not scheduled to) and is asked '
                    'again at the next reload.'),
    cfg.FloatOpt('cell_check_interval',
                 default=2.0,
                 min=0.0,
                 help='Seconds between two checks that every enabled cell '
                      'database answers (SELECT 1), by a background thread '
                      'of each scheduler. A cell that fails or does not '
                      'answer within cell_check_timeout has its hosts taken '
                      'out of the host states at once, rather than at the '
                      'next full reload, so that boots go to the cells that '
                      'can take them instead of waiting for a partitioned '
                      'one; once it answers again the host states are '
                      'reloaded. One query per cell: 2 s keeps the boots '
                      'sent to a cell that just went silent to a few '
                      'seconds\' worth. 0 disables the checks, and so '
                      'does host_state_refresh_interval = 0 (host states '
                      'that are never reloaded are not checked either).'),
    cfg.FloatOpt('cell_check_timeout',
                 default=2.0,
                 min=0.1,
                 help='Seconds a cell check waits for a cell database '
                      'before taking the cell for silent. A cell that is '
                      'already silent is not waited for again: one call '
                      'to it at a time finds out when it is back.'),
    cfg.IntOpt('service_down_time',
               default=60,
               min=1,
               help='Seconds after its last heartbeat at which a compute '
                    'service counts as down for the ComputeFilter, '
                    'measured at the time its cell was last loaded. Keep '
                    'it above the compute report interval.'),
]

scheduler_opts = claim_opts + selection_opts


def register_opts(conf):
    conf.register_group(scheduler_group)
    conf.register_opts(scheduler_opts, group=scheduler_group)


def list_opts():
    return {scheduler_group: scheduler_opts}
