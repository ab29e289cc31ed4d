"""Options of the ``[DEFAULT]`` group shared by every cellboot service."""

import os
import socket

from oslo_config import cfg


def _default_state_path():
    """The per-user state directory (XDG), so an unconfigured run works."""
    base = os.environ.get('XDG_STATE_HOME') or os.path.join(
        os.path.expanduser('~'), '.local', 'state')
    return os.path.join(base, 'cellboot')


default_opts = [
    cfg.StrOpt('state_path',
               default=_default_state_path(),
               sample_default='<XDG state directory>/cellboot',
               help='Directory where cellboot keeps its local state: the '
                    'embedded SQLite databases and lock files. Defaults to '
                    'the current user\'s XDG state directory so that an '
                    'unconfigured all-in-one run needs no root rights.'),
    cfg.StrOpt('host',
               default=socket.gethostname(),
               sample_default='<current hostname>',
               help='Name of this node, as recorded in the services and '
                    'compute_nodes tables and used as the host mapping key. '
                    'Must be unique within the deployment.'),
    cfg.StrOpt('cell_name',
               help='Name of the cell this service lives in, as listed by '
                    '`cellboot-manage cell_v2 list_cells`. Compute hosts '
                    'and cell conductors need it (`cellboot-conductor '
                    '--cell NAME` sets it): it is part of every topic '
                    'inside a cell, so that cells sharing one transport '
                    'never receive each other\'s messages. Unset for '
                    'API-level services, which belong to no cell.'),
]


def register_opts(conf):
    conf.register_opts(default_opts)


def list_opts():
    return {'DEFAULT': default_opts}
