"""The ``[flow_persistence]`` group: where API-level flows are persisted."""

from oslo_config import cfg

flow_group = cfg.OptGroup(
    'flow_persistence',
    title='Flow persistence',
    help='TaskFlow persistence of the API-level conductors\' flows '
         '(logbooks, flow details, atom details). Kept apart from the API '
         'database because TaskFlow runs its own migrations.')

flow_opts = [
    cfg.StrOpt('connection',
               secret=True,
               default='sqlite:///$state_path/cellboot_flows.sqlite',
               help='SQLAlchemy URL of the flow database. The default is an '
                    'SQLite file in the state directory (embedded mode).'),
]


def register_opts(conf):
    conf.register_group(flow_group)
    conf.register_opts(flow_opts, group=flow_group)


def list_opts():
    return {flow_group: flow_opts}
