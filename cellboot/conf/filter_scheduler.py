"""The ``[filter_scheduler]`` group: which filters and weighers run, and how.

Filters remove hosts that cannot take the request; weighers order the
rest. Each weigher's raw values are normalized to 0..1 across the hosts
that passed the filters, then multiplied by its multiplier and summed: the
sign of a multiplier decides between spreading (positive: prefer the host
with the most free) and packing (negative: fill the fullest host first).
"""

from oslo_config import cfg

filter_scheduler_group = cfg.OptGroup(
    'filter_scheduler',
    title='Filter scheduler',
    help='Host filters and weighers used by select_destinations.')

ALL_FILTERS = ['CellFilter', 'AvailabilityZoneFilter', 'ComputeFilter',
               'ResourceFilter', 'TraitsFilter', 'SameHostFilter',
               'DifferentHostFilter',
               'ServerGroupAntiAffinityFilter', 'ServerGroupAffinityFilter']

ALL_WEIGHERS = ['RAMWeigher', 'CPUWeigher', 'DiskWeigher',
                'BuildFailureWeigher']

filter_scheduler_opts = [
    cfg.ListOpt('enabled_filters',
                default=ALL_FILTERS,
                help='Host filters to run, by class name, in this order. '
                     'Cheap filters that remove many hosts belong first. '
                     'When no host is left, NoValidHost names the filter '
                     'that removed the last ones. Available: ' +
                     ', '.join(ALL_FILTERS) + '.'),
    cfg.ListOpt('enabled_weighers',
                default=ALL_WEIGHERS,
                help='Host weighers to apply, by class name. Available: ' +
                     ', '.join(ALL_WEIGHERS) + '.'),
    cfg.FloatOpt('ram_weight_multiplier',
                 default=1.0,
                 help='Multiplier of the RAMWeigher (free MEMORY_MB). '
                      'Positive spreads instances over the hosts with the '
                      'most free memory, negative packs them onto the '
                      'fullest hosts, 0 ignores memory. Default 1.0: '
                      'spreading keeps room for large flavors everywhere '
                      'and limits the blast radius of one host.'),
    cfg.FloatOpt('cpu_weight_multiplier',
                 default=1.0,
                 help='Multiplier of the CPUWeigher (free VCPU). Same '
                      'sign convention as ram_weight_multiplier.'),
    cfg.FloatOpt('disk_weight_multiplier',
                 default=1.0,
                 help='Multiplier of the DiskWeigher (free DISK_GB). Same '
                      'sign convention as ram_weight_multiplier.'),
    cfg.FloatOpt('build_failure_weight_multiplier',
                 default=1000000.0,
                 help='How strongly hosts with recent build failures are '
                      'avoided. The weigher scores a host by minus its '
                      'count of consecutive failed builds, so a positive '
                      'multiplier moves failing hosts to the back; the '
                      'large default outweighs every resource weigher, '
                      'so a host that keeps failing builds is only used '
                      'when nothing else fits. 0 disables it.'),
    cfg.IntOpt('host_subset_size',
               default=1,
               min=1,
               help='The chosen host is picked at random among the best '
                    'N hosts. 1 always takes the best host; a larger value '
                    'lets several schedulers that see the same host states '
                    'choose different hosts and so collide less on claims, '
                    'at the price of a slightly worse fit.'),
]


def register_opts(conf):
    conf.register_group(filter_scheduler_group)
    conf.register_opts(filter_scheduler_opts, group=filter_scheduler_group)


def list_opts():
    return {filter_scheduler_group: filter_scheduler_opts}
