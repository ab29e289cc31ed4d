"""Every cellboot option, registered on the global ``cfg.CONF``.

One module per option group; each has ``register_opts(conf)`` and
``list_opts()``. The global object is used (not a private ConfigOpts)
because oslo.messaging registers its own options there.
"""

from oslo_config import cfg

from cellboot.conf import api
from cellboot.conf import api_database
from cellboot.conf import compute
from cellboot.conf import conductor
from cellboot.conf import database
from cellboot.conf import default
from cellboot.conf import fake_driver
from cellboot.conf import filter_scheduler
from cellboot.conf import flow_persistence
from cellboot.conf import jobboard
from cellboot.conf import metrics
from cellboot.conf import notifications
from cellboot.conf import nova
from cellboot.conf import quota
from cellboot.conf import scheduler

CONF = cfg.CONF

MODULES = (default, api_database, database, flow_persistence, scheduler,
           filter_scheduler, conductor, jobboard, compute, fake_driver,
           api, quota, nova, notifications, metrics)

for _module in MODULES:
    _module.register_opts(CONF)
