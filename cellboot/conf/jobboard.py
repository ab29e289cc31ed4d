"""The ``[jobboard]`` group: how several conductors share their flows.

Without a jobboard (``backend = none``, the embedded default) each
conductor runs the flows of the requests it receives and, when it
starts, resumes the ones a conductor of its own ``[DEFAULT] host`` left
unfinished. With ``backend = redis`` every request becomes a job on a
TaskFlow Redis jobboard: any conductor of the same kind claims it, and
the claim of a conductor that died expires, so a survivor resumes its
flows from their persisted atoms.
"""

from oslo_config import cfg

NONE = 'none'
REDIS = 'redis'

jobboard_group = cfg.OptGroup(
    'jobboard',
    title='Jobboard',
    help='Work sharing between conductors through a TaskFlow jobboard. '
         'Super conductors share one board for boot flows; the conductors '
         'of each cell share a board of that cell for reschedule flows.')

jobboard_opts = [
    cfg.StrOpt('backend',
               default=NONE,
               choices=[(NONE, 'No jobboard: each conductor runs what it '
                               'receives and resumes its own host\'s '
                               'unfinished flows when it starts.'),
                        (REDIS, 'A TaskFlow Redis jobboard at [jobboard] '
                                'url: conductors claim jobs, and a dead '
                                'conductor\'s jobs are resumed by another '
                                'once its claim expires.')],
               help='Where conductors find their work.'),
    cfg.StrOpt('url',
               secret=True,
               default='redis://127.0.0.1:6379/0',
               help='Redis URL of the jobboard (backend = redis), '
                    'redis://[[USER]:PASSWORD@]HOST:PORT/DB. With Redis 6+ '
                    'ACLs, give the conductors of each cell a USER whose '
                    'keys are limited to their cell\'s (see the '
                    'namespace), so that a compromised cell cannot reach '
                    'the super conductors\' jobs or another cell\'s.'),
    cfg.StrOpt('namespace',
               default='cellboot',
               help='Prefix of every Redis key of the boards, so that '
                    'several deployments can share one Redis server. The '
                    'super conductors use the boot board NAMESPACE.boot '
                    'and the sweep lock NAMESPACE.sweeper.boot; every key '
                    'of cell C (its board NAMESPACE.cell.C.reschedule, '
                    'its sweep lock NAMESPACE.cell.C.sweeper) starts with '
                    'NAMESPACE.cell.C. (C: the cell\'s name, any '
                    'character but ASCII letters, digits, - and _ written '
                    '%XX).'),
    cfg.FloatOpt('claim_expiry',
                 default=30.0,
                 min=1.0,
                 help='Seconds a conductor\'s claim on a job lasts unless '
                      'renewed. A running conductor renews the claims of '
                      'its running flows every third of this; a conductor '
                      'that died loses them after at most this long, and '
                      'another conductor resumes those flows.'),
    cfg.IntOpt('max_simultaneous_jobs',
               default=16,
               min=1,
               help='Flows one conductor runs at the same time.'),
]


def register_opts(conf):
    conf.register_group(jobboard_group)
    conf.register_opts(jobboard_opts, group=jobboard_group)


def list_opts():
    return {jobboard_group: jobboard_opts}
