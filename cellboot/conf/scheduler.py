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

scheduler_opts = claim_opts


def register_opts(conf):
    conf.register_group(scheduler_group)
    conf.register_opts(scheduler_opts, group=scheduler_group)


def list_opts():
    return {scheduler_group: scheduler_opts}
