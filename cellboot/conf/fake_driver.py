"""The ``[fake_driver]`` group: how the fake virt driver builds, or fails.

The fake driver builds nothing; these options make its builds slow or
make them fail on purpose, so that tests, demos and benchmarks exercise
the reschedule and error paths of the boot workflow without a
hypervisor.
"""

from oslo_config import cfg

RESCHEDULE = 'reschedule'
ABORT = 'abort'

fake_driver_group = cfg.OptGroup(
    'fake_driver',
    title='Fake virt driver',
    help='Behaviour of the fake virt driver ([compute] driver = fake).')

fake_driver_opts = [
    cfg.FloatOpt('spawn_time',
                 default=0.0,
                 min=0.0,
                 help='Seconds each build takes (the driver sleeps). 0, the '
                      'default, builds instantly, which is what benchmarks '
                      'of the control plane want; a few seconds make '
                      'deletes during a build easy to demonstrate.'),
    cfg.ListOpt('fail_hosts',
                default=[],
                help='Compute hosts (their [DEFAULT] host / --host names) on '
                     'which every build fails, as fail_mode says. Empty by '
                     'default: every build succeeds.'),
    cfg.FloatOpt('fail_rate',
                 default=0.0,
                 min=0.0,
                 max=1.0,
                 help='Probability, from 0 to 1, that a build on any other '
                      'host fails, as fail_mode says. 0 by default.'),
    cfg.StrOpt('fail_mode',
               default=RESCHEDULE,
               choices=[(RESCHEDULE, 'the failure is reschedulable: the '
                                     'host gives up its claim and the cell '
                                     'conductor tries the next alternate'),
                        (ABORT, 'the failure is final: the instance goes '
                                'to ERROR with a fault')],
               help='What kind of failure a failing build raises.'),
]


def register_opts(conf):
    conf.register_group(fake_driver_group)
    conf.register_opts(fake_driver_opts, group=fake_driver_group)


def list_opts():
    return {fake_driver_group: fake_driver_opts}
