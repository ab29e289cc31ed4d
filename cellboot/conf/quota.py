"""The ``[quota]`` group: how much one project may have at once.

Quotas are counted from what exists (Nova's "counting quotas"): a
server counts from the moment its boot is accepted until it is deleted,
whatever its state (BUILD, ACTIVE or ERROR). These are the defaults of
every project; ``PUT /os-quota-sets/{project}`` and ``cellboot-manage
quota update`` override them per project.
"""

from oslo_config import cfg

# A limit of -1 lets a project have any amount.
UNLIMITED = -1

quota_group = cfg.OptGroup(
    'quota',
    title='Quotas',
    help='Default per-project limits, checked when a boot is accepted. '
         '-1 means unlimited.')

quota_opts = [
    cfg.IntOpt('instances',
               default=10,
               min=UNLIMITED,
               help='Servers a project may have at once (Nova\'s default, '
                    '10, so that one project cannot fill cell0 or the '
                    'API database by accident).'),
    cfg.IntOpt('cores',
               default=20,
               min=UNLIMITED,
               help='Virtual CPUs, summed over the flavors of a '
                    'project\'s servers (Nova\'s default, 20: ten servers '
                    'of two VCPUs).'),
    cfg.IntOpt('ram',
               default=51200,
               min=UNLIMITED,
               help='Memory in MiB, summed over the flavors of a '
                    'project\'s servers (Nova\'s default, 51200: 50 GiB).'),
    cfg.IntOpt('allocation_class_default',
               default=UNLIMITED,
               min=UNLIMITED,
               help='The limit of each resource class (DISK_GB, '
                    'CUSTOM_...) a project may hold through allocation '
                    'requests (/os-allocations), summed over them, where '
                    'no limit of that class was set for the project. '
                    '-1 (the default): unlimited.'),
]


def register_opts(conf):
    conf.register_group(quota_group)
    conf.register_opts(quota_opts, group=quota_group)


def list_opts():
    return {quota_group: quota_opts}
