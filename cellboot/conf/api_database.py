"""The ``[api_database]`` group: the API database (docs/architecture.md).

It takes the same options as oslo.db's ``[database]`` group, with the
same defaults (``cellboot.conf.database``, imported first, sets them),
so that pool sizes and retries are tuned the same way for both.
"""

import copy

from oslo_config import cfg
from oslo_db import options as oslo_db_options

from cellboot.conf import database  # noqa: F401 (the defaults, first)

api_db_group = cfg.OptGroup(
    'api_database',
    title='API database',
    help='The API database holds cell, host and instance mappings, build '
         'requests, request specs, flavors, server groups and the '
         'scheduler\'s resource tables.')


def _api_db_opts():
    opts = []
    for opt in oslo_db_options.database_opts:
        opt = copy.deepcopy(opt)
        if opt.dest == 'connection':
            opt.default = 'sqlite:///$state_path/cellboot_api.sqlite'
            opt.help = ('SQLAlchemy URL of the API database. The default is '
                        'an SQLite file in the state directory (embedded '
                        'mode); use mysql+pymysql:// or '
                        'postgresql+psycopg2:// URLs for real deployments.')
        opts.append(opt)
    return opts


api_db_opts = _api_db_opts()


def register_opts(conf):
    conf.register_group(api_db_group)
    conf.register_opts(api_db_opts, group=api_db_group)


def list_opts():
    return {api_db_group: api_db_opts}
