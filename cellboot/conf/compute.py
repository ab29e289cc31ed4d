"""The ``[compute]`` group: how a compute host agent runs and reports.

A compute host reports its capacity to the scheduler as a resource
provider; the totals come from its virt driver (the fake driver reads
them from this group), the allocation ratios from here, whatever the
driver, because over-commit is an operator's decision, not the
hypervisor's.
"""

from oslo_config import cfg

compute_group = cfg.OptGroup(
    'compute',
    title='Compute host',
    help='The compute host agent (cellboot-compute): its virt driver, the '
         'capacity it reports to the scheduler, and its heartbeat.')

compute_opts = [
    cfg.StrOpt('driver',
               default='fake',
               help='Virt driver that builds the servers: a registered name '
                    '(fake) or the dotted path of a '
                    'cellboot.compute.virt.driver.ComputeDriver subclass, '
                    'e.g. mypackage.virt.MyDriver. The default, fake, '
                    'builds nothing and is configured by [fake_driver]; it '
                    'is what the embedded mode, tests and demos use.'),
    cfg.StrOpt('availability_zone',
               default='nova',
               help='Availability zone of this host, sent with its resource '
                    'provider report; servers that ask for a zone are only '
                    'scheduled to hosts that report it. The default is '
                    'Nova\'s default zone, so that nova-style clients that '
                    'ask for "nova" find every host.'),
    cfg.IntOpt('vcpus',
               default=16,
               min=1,
               help='Virtual CPUs that the fake driver reports as the '
                    'host\'s total (VCPU inventory). Real drivers read the '
                    'hardware instead.'),
    cfg.IntOpt('memory_mb',
               default=32768,
               min=1,
               help='Memory in MiB that the fake driver reports as the '
                    'host\'s total (MEMORY_MB inventory).'),
    cfg.IntOpt('local_gb',
               default=1000,
               min=0,
               help='Local disk in GiB that the fake driver reports as the '
                    'host\'s total (DISK_GB inventory). 0 reports no disk '
                    'inventory, so only flavors without a root disk fit.'),
    cfg.FloatOpt('cpu_allocation_ratio',
                 default=16.0,
                 min=0.0001,
                 help='Over-commit ratio of virtual CPUs: the scheduler '
                      'places up to vcpus x ratio of them on this host. '
                      '16.0 is Nova\'s historical default; CPU time is '
                      'shared, so idle guests make it safe.'),
    cfg.FloatOpt('ram_allocation_ratio',
                 default=1.5,
                 min=0.0001,
                 help='Over-commit ratio of memory (MEMORY_MB). 1.5 is '
                      'Nova\'s historical default; set 1.0 where guests '
                      'use all of their memory.'),
    cfg.FloatOpt('disk_allocation_ratio',
                 default=1.0,
                 min=0.0001,
                 help='Over-commit ratio of local disk (DISK_GB). 1.0, no '
                      'over-commit, because a full disk breaks every guest '
                      'on the host.'),
    cfg.ListOpt('extra_inventories',
                default=[],
                help='Resource classes this host has besides VCPU, '
                     'MEMORY_MB and DISK_GB, each CLASS:TOTAL, e.g. '
                     'CUSTOM_FPGA:2,VGPU:4. CLASS is a standard class of '
                     'os-resource-classes or CUSTOM_ followed by A-Z, 0-9 '
                     'and _; TOTAL a whole number of at least 1. Reported '
                     'with the other inventories; a flavor asks for them '
                     'with the extra spec resources:CLASS=N. Checked when '
                     'the service starts: a bad entry stops it.'),
    cfg.ListOpt('traits',
                default=[],
                help='Traits of this host, e.g. HW_CPU_X86_AVX2,CUSTOM_SSD: '
                     'standard traits of os-traits or CUSTOM_ followed by '
                     'A-Z, 0-9 and _. Reported with the inventories, they '
                     'are the host\'s traits: any set otherwise is '
                     'replaced at the next report. Unset, the host keeps '
                     'the traits an operator set (cellboot-manage '
                     'provider trait). A flavor requires or '
                     'forbids them with the extra spec '
                     'trait:NAME=required|forbidden. Checked when the '
                     'service starts: a bad name stops it.'),
    cfg.IntOpt('report_interval',
               default=10,
               min=1,
               help='Seconds between two heartbeats of the compute service '
                    '(last_seen_up in its cell database). The scheduler '
                    'treats a host as down after [scheduler] '
                    'service_down_time (60 s by default), so keep this '
                    'well below that.'),
]


def register_opts(conf):
    conf.register_group(compute_group)
    conf.register_opts(compute_opts, group=compute_group)


def list_opts():
    return {compute_group: compute_opts}
