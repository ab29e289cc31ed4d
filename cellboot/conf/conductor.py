"""The ``[conductor]`` group: how conductors run their flows."""

from oslo_config import cfg

LOCAL = 'local'
RPC = 'rpc'

conductor_group = cfg.OptGroup(
    'conductor',
    title='Conductor',
    help='The super conductor (API level), which runs the boot flow of '
         'each request, and the cell conductors (cellboot-conductor '
         '--cell NAME), which run the reschedule flows of their cell.')

conductor_opts = [
    cfg.StrOpt('scheduler',
               default=LOCAL,
               choices=[(LOCAL, 'Run the API level\'s scheduler inside '
                                'the super conductor (no API-level '
                                'scheduler service needed).'),
                        (RPC, 'Call the API level\'s cellboot-scheduler '
                              'service over [DEFAULT] transport_url.')],
               help='Where the super conductor finds the API level\'s '
                    'scheduler, which picks a cell from the cells\' '
                    'aggregates and asks that cell\'s scheduler '
                    '(cellboot-scheduler --cell NAME, on the cell\'s bus) '
                    'for hosts. It holds no host, so "local", the '
                    'default, costs a super conductor little; "rpc" '
                    'shares one. Cell conductors always call their own '
                    'cell\'s scheduler over their cell\'s bus.'),
    cfg.BoolOpt('persist_flows',
                default=True,
                help='Persist every flow (boot flows in [flow_persistence] '
                     'connection, reschedule flows in the cell database) '
                     'so that operators can inspect them and a restarted '
                     'conductor can finish them. Turning it off only '
                     'makes sense to measure what persistence costs.'),
    cfg.BoolOpt('resume_flows',
                default=True,
                help='When a conductor starts, finish the flows that a '
                     'conductor of the same [DEFAULT] host left unfinished '
                     '(it stopped or crashed while running them): each is '
                     'resumed from its last persisted atom and either '
                     'completes or reverts.'),
    cfg.IntOpt('orphan_build_request_timeout',
               default=300,
               min=1,
               help='Seconds after which a flow left unfinished without '
                    'an owner (its conductor died after saving it) is '
                    'handed to a conductor, and a build request whose boot '
                    'flow has ended is settled. Build requests with no '
                    'flow at all are started sooner, after '
                    'unstarted_build_request_timeout, and so are those of '
                    'a flow an operator abandoned (cellboot-manage flows '
                    'abandon) settled.'),
    cfg.IntOpt('unstarted_build_request_timeout',
               default=30,
               min=1,
               help='Seconds after which a build request whose request has '
                    'no boot flow at all counts as a lost cast (the API '
                    'could not send it, or the broker lost it): the super '
                    'conductors\' sweeper then starts its flow. Safe even '
                    'when the cast is only late: a flow\'s uuid is derived '
                    'from the request, so the late cast finds the flow '
                    'and starts nothing. Keep it above the time a cast '
                    'waits in a busy conductor\'s queue, or the sweeper '
                    'does the conductors\' work for them. At most '
                    'orphan_build_request_timeout.'),
    cfg.IntOpt('build_timeout',
               default=600,
               min=1,
               help='Seconds an instance may stay in BUILD on a compute '
                    'host before the cell conductors\' check sets it ERROR '
                    'with a fault and gives back its claim (the host died '
                    'after it got the build). Keep it well above the '
                    'longest spawn and above [jobboard] claim_expiry.'),
    cfg.IntOpt('build_not_taken_timeout',
               default=30,
               min=0,
               help='Seconds after which a build that its compute host '
                    'has not taken (the instance is building on the host, '
                    'with no task state) counts as a lost cast: the cell '
                    'conductors\' check then sends it again to the same '
                    'host if that host\'s compute service is up (at most '
                    'build_recasts times), or reschedules it to its '
                    'alternates if the service is down. Keep it above the '
                    'longest time a build may wait in a busy host\'s '
                    'queue; a re-send to a host that took the build after '
                    'all is dropped by the host. 0 turns the check off '
                    '(an untaken build then waits for build_timeout).'),
    cfg.IntOpt('build_recasts',
               default=3,
               min=0,
               help='How many times the cell conductors send an untaken '
                    'build again to a compute host whose service is up. '
                    'A build still untaken after that is left to '
                    'build_timeout, which ends it in ERROR. Each re-send '
                    'is recorded as a conductor_build_recast event of '
                    'the instance\'s create action.'),
    cfg.IntOpt('cast_retries',
               default=3,
               min=0,
               help='How many times a conductor reconnects to a message '
                    'broker that does not answer before a cast to a '
                    'compute host (build_and_run_instance) gives up, and '
                    'a compute host before its cast of a reschedule '
                    '(build_instances) to its cell conductors does; '
                    'with oslo.messaging\'s pauses (1, 3, 5 s... plus '
                    'kombu_reconnect_delay) 3 retries wait about 12 s. '
                    'A conductor\'s cast that still cannot be sent is '
                    'not an error: the instance stays building, untaken, '
                    'and the cell conductors\' check sends it again after '
                    'build_not_taken_timeout (a compute host whose '
                    'reschedule cannot be sent ends the build in ERROR).'),
    cfg.IntOpt('sweep_interval',
               default=15,
               min=1,
               help='Seconds between two runs of the periodic checks of a '
                    'conductor (orphan build requests in a super '
                    'conductor, untaken builds and BUILD timeouts in a '
                    'cell conductor): a lost cast is sent again at most '
                    'this long after its timeout. With '
                    'a jobboard, a super conductor holds the sweep lock '
                    'for max(30, 3 x this) seconds, renewed at each step, '
                    'and a sweep does at most this long of work.'),
    cfg.BoolOpt('cross_cell_reschedule',
                default=True,
                help='When a cell has run out of alternate hosts for a '
                     'build (or cannot place it at all), hand the build '
                     'back to the super conductors, which move it to '
                     'another cell (the cross-cell flow) instead of '
                     'ending it in ERROR. Read by the cell conductors '
                     '(whether to hand back) and by the super conductors '
                     '(whether to take a hand-back); off, a build whose '
                     'cell has no alternate left ends in ERROR there.'),
    cfg.IntOpt('max_cells',
               default=2,
               min=1,
               help='The most cells one build may try with '
                    'cross_cell_reschedule: the first cell counts. A '
                    'build that failed in this many cells ends in ERROR '
                    'with a fault naming every cell tried and the last '
                    'failure.'),
]


def register_opts(conf):
    conf.register_group(conductor_group)
    conf.register_opts(conductor_opts, group=conductor_group)


def list_opts():
    return {conductor_group: conductor_opts}
