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
               choices=[(LOCAL, 'Run the scheduler library inside the '
                                'super conductor (no scheduler service '
                                'needed; one scheduler per conductor).'),
                        (RPC, 'Call the cellboot-scheduler service over '
                              '[DEFAULT] transport_url.')],
               help='Where the super conductor finds the scheduler. '
                    '"local" needs no extra service and is the embedded '
                    'default; "rpc" shares one scheduler (and its '
                    'in-memory host states) between several conductors. '
                    'Cell conductors always use RPC: they hold no API '
                    'database credentials.'),
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
               help='Seconds after which a build request that no flow has '
                    'taken up is an orphan: the cast that should have '
                    'started its boot flow was lost (the API died after '
                    'its commit, or the broker dropped the message). The '
                    'super conductors\' sweeper then starts its flow, '
                    'once. It also hands flows left unfinished this long '
                    'without an owner to a conductor.'),
    cfg.IntOpt('build_timeout',
               default=600,
               min=1,
               help='Seconds an instance may stay in BUILD on a compute '
                    'host before the cell conductors\' check sets it ERROR '
                    'with a fault and gives back its claim (the host died '
                    'after it got the build). Keep it well above the '
                    'longest spawn and above [jobboard] claim_expiry.'),
    cfg.IntOpt('cast_retries',
               default=3,
               min=0,
               help='How many times a conductor reconnects to a message '
                    'broker that does not answer before a cast to a '
                    'compute host (build_and_run_instance) gives up; '
                    'with oslo.messaging\'s pauses (1, 3, 5 s... plus '
                    'kombu_reconnect_delay) 3 retries wait about 12 s. '
                    'A cast that still cannot be sent is not an error: '
                    'the instance stays building, untaken, and the cell '
                    'conductors\' check sends it again after '
                    'build_not_taken_timeout.'),
    cfg.IntOpt('sweep_interval',
               default=60,
               min=1,
               help='Seconds between two runs of the periodic checks of a '
                    'conductor (orphan build requests in a super '
                    'conductor, BUILD timeouts in a cell conductor). With '
                    'a jobboard, a super conductor holds the sweep lock '
                    'for max(30, 3 x this) seconds, renewed at each step, '
                    'and a sweep does at most this long of work.'),
]


def register_opts(conf):
    conf.register_group(conductor_group)
    conf.register_opts(conductor_opts, group=conductor_group)


def list_opts():
    return {conductor_group: conductor_opts}
