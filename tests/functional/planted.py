"""Flow rows a compromised cell could plant, and proof nothing of them ran.

Not a test module. Each planted row names code that TaskFlow's
``flow_from_detail`` would import and call with the row's arguments:

* ``os.system``, touching a marker file;
* ``os.mkdir`` (a real module function with arguments), making a marker
  directory;
* an unknown kind, naming ``os.mkdir`` too.

The rows are unfinished (RUNNING), about one instance, started a day ago
by this host's conductor (a process that is gone): every path that
reads flows (by id, by instance) or runs them (a conductor resuming its
host's flows, the sweeps) finds them. ``ran()`` lists the markers that
exist: it must stay empty.
"""

import datetime
import os

from oslo_utils import timeutils
from oslo_utils import uuidutils
from taskflow.persistence import models
from taskflow import states

from cellboot.conf import CONF
from cellboot.flowrun import backend as flow_db
from tests.functional.sweepers import base as sweep_base

UNKNOWN_KIND = 'exfiltrate'

# Seconds since the planted flows "started": older than every timeout.
AGE = 86400


class Plants:
    """The planted rows of one database, their markers in ``directory``.

    ``kind``: the kind of that database's flows ('boot' in the flow
    database, 'reschedule' in a cell's), which the first two rows claim.
    ``owner``: the dead conductor process they name (``HOST:PID``).
    """

    LABELS = ('os.system', 'os.mkdir', 'unknown kind')

    def __init__(self, directory, kind, instance_uuid=None, owner=None):
        self.kind = kind
        self.instance_uuid = instance_uuid or uuidutils.generate_uuid()
        self.owner = owner or f'{CONF.host}:{sweep_base.dead_pid()}'
        self.markers = {label: os.path.join(
            directory, f'{kind}-{label.replace(" ", "-")}-ran')
            for label in self.LABELS}
        self.uuids = {}

    def metas(self):
        """``{label: flow meta}`` of the rows to plant."""
        system, mkdir, unknown = (self.markers[label]
                                  for label in self.LABELS)
        return {
            'os.system': {'kind': self.kind, 'factory': {
                'name': 'os.system', 'args': [f'touch {system}'],
                'kwargs': {}}},
            'os.mkdir': {'kind': self.kind, 'factory': {
                'name': 'os.mkdir', 'args': [mkdir], 'kwargs': {}}},
            'unknown kind': {'kind': UNKNOWN_KIND, 'factory': {
                'name': 'os.mkdir', 'args': [unknown], 'kwargs': {}}},
        }

    def plant(self, url):
        """Write the rows into the TaskFlow tables at ``url``; their uuids."""
        for label, meta in self.metas().items():
            self.plant_meta(url, label, meta)
        return dict(self.uuids)

    def plant_meta(self, url, label, meta):
        """Write one more row, of ``meta`` (unfinished, old, this host's)."""
        started = (timeutils.utcnow() -
                   datetime.timedelta(seconds=AGE)).isoformat()
        flow_uuid = uuidutils.generate_uuid()
        book = models.LogBook(f'planted {label}', uuid=flow_uuid)
        flow_detail = models.FlowDetail(self.kind, flow_uuid)
        flow_detail.state = states.RUNNING
        flow_detail.meta = dict(
            meta, instance_uuids=[self.instance_uuid], conductor=CONF.host,
            owner=self.owner, started_at=started, owned_since=started,
            request_id='req-planted')
        book.add(flow_detail)
        flow_db.get_connection(url).save_logbook(book)
        self.uuids[label] = flow_uuid
        return flow_uuid

    def ran(self):
        """The labels of the planted rows whose code ran (must be [])."""
        return [label for label, path in self.markers.items()
                if os.path.exists(path)]

    def state(self, url, label):
        """The stored state and meta of a planted row (untouched?)."""
        flow_detail = flow_db.get_connection(url).get_flow_details(
            self.uuids[label])
        return flow_detail.state, flow_detail.meta
