"""A cell's aggregate: what the API level schedules cells by.

The API level holds no host. For each cell it keeps one summary of the
cell's hosts, computed by the cell's scheduler from its host states
(``of_states``)::

    {'hosts': 4,            # hosts with a resource provider
     'up_hosts': 3,         # of them, enabled and heartbeating
     'resources': {'VCPU': {'capacity': 64.0, 'free': 40.0,
                            'max_free': 16.0}, ...},
     'zones': ['nova'],     # availability zones of the up hosts
     'traits': {'HW_CPU_X86_AVX2': 3, 'CUSTOM_SSD': 1},  # up hosts with it
     'computed_at': 1764620000.0}

``resources`` has every resource class a host of the cell reports
(VGPU, CUSTOM_FPGA, ...), so a cell without a class is pruned for a
request naming it. ``traits`` counts the up hosts having each trait: a
cell where no host has a required trait is pruned, and so is one where
every up host has a forbidden one. Whether one host has two required
traits at once is not known here: the cell may still refuse.

``capacity`` and ``free`` sum the cell's up hosts, ``max_free`` is the
most any one of them has free: a request whose amount of some class is
above it fits no host of the cell, which is how the API level prunes
cells without ever saying no to a request a host could take (it may say
yes to one no host can take: the cell then refuses, and the next cell is
asked).

The cell's schedulers publish it in the cell's own database, one row
each in ``scheduler_aggregates`` (``publish``): at once after a change
that gives room back (a release, a new or larger host), so that no
request is refused on an aggregate that has not seen it; at most
every ``[scheduler] aggregate_publish_interval`` seconds after claims
that moved what the API level schedules by (``moved``: largest free
room, hosts up, zones, capacity, or free room by more than 1 % of
capacity);
and every ``aggregate_heartbeat_interval`` seconds whatever happened,
which tells the API level that the scheduler is alive. The API level
reads those rows (``read_latest``) -- it has every cell's database, no
cell needs anything of the API level -- and also takes the aggregate
that comes back with every placement a cell answers.

What a cell writes is what the least trusted part of the deployment
says, so ``validated`` checks every field before the API level uses it:
a cell that publishes nonsense is skipped, and can in any case only
attract or repel the requests sent to itself.
"""

import json
import math
import threading
import time

import numpy as np
from oslo_log import log as logging
from oslo_utils import timeutils
import sqlalchemy as sa

from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models as cell_models
from cellboot.db import retry
from cellboot import exception
from cellboot.scheduler import host_batch
from cellboot.scheduler import periodic
from cellboot.scheduler.resources import classes as class_names
from cellboot.scheduler.resources import traits as trait_names

LOG = logging.getLogger(__name__)

_ROWS = cell_models.SchedulerAggregate.__table__

# Bounds of what a cell may publish: far above any real cell, far below
# what would cost the API level anything to hold.
MAX_ZONES = 1000
MAX_NAME = 255
MAX_AMOUNT = 1e15
MAX_HOSTS = 10 ** 9
MAX_DOCUMENT = 256 * 1024
MAX_CLASSES = 500
MAX_TRAITS = 2000

# After claims, free room is written again once it moved by more than
# this share of the capacity (see ``moved``).
FREE_SLACK = 0.01


def _up_figures(states, down_time):
    """What of the aggregate depends on liveness and inventories only.

    ``(positions of the up hosts or None for all of them, hosts, up
    hosts, capacities, zones, traits)``; memoized on ``states`` (dropped when
    inventories or liveness change), so that the aggregate a cell
    answers with every placement sums only the free room anew.
    """
    live = states.live
    up = live & states.enabled & states.up_mask(down_time)
    up_hosts = int(np.count_nonzero(up))
    pick = None if up_hosts == len(up) else np.flatnonzero(up)
    capacity = states.capacity if pick is None else states.capacity[:, pick]
    zones = sorted({states.zones.names[code]
                    for code in np.unique(states.az[up]).tolist()} - {None})
    having = (states.has_trait if pick is None
              else states.has_trait[:, pick]).sum(axis=1).tolist()
    traits = {trait: count for trait, count in zip(states.traits, having)
              if count}
    return (pick, int(np.count_nonzero(live)), up_hosts,
            capacity.sum(axis=1).tolist(), zones, traits)


def of_states(states, down_time):
    """The aggregate of a cell scheduler's ``HostStates``."""
    pick, hosts, up_hosts, capacity, zones, traits = states.memoized(
        ('aggregate', down_time), lambda: _up_figures(states, down_time))
    free = states.free if pick is None else states.free[:, pick]
    if free.shape[1]:
        # An over-committed host (its inventory shrank) has less than
        # nothing free: it takes nothing.
        total_free = np.maximum(free, 0.0).sum(axis=1).tolist()
        max_free = np.maximum(free.max(axis=1), 0.0).tolist()
    else:
        total_free = max_free = [0.0] * len(states.classes)
    # A class only some down host has is left out: no request fits it.
    resources = {
        rc: {'capacity': capacity[i], 'free': total_free[i],
             'max_free': max_free[i]}
        for i, rc in enumerate(states.classes)
        if i < len(host_batch.BASE_CLASSES) or capacity[i]}
    return {'hosts': hosts, 'up_hosts': up_hosts,
            'resources': resources, 'zones': list(zones),
            'traits': dict(traits), 'computed_at': time.time()}


def _amount(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or not 0 <= value <= MAX_AMOUNT:
        raise exception.Invalid(reason=f'{where} is not an amount')
    return float(value)


def _count(value, where):
    if isinstance(value, bool) or not isinstance(value, int) \
            or not 0 <= value <= MAX_HOSTS:
        raise exception.Invalid(reason=f'{where} is not a host count')
    return value


def _traits(traits, up_hosts):
    """The aggregate's ``traits``: names that are no trait are left
    out, counts bounded by the up hosts. None (not known: never prune
    on traits) from a cell that publishes none."""
    if traits is None:
        return None
    if not isinstance(traits, dict) or len(traits) > MAX_TRAITS:
        raise exception.Invalid(reason=f'aggregate traits is not a mapping '
                                       f'of at most {MAX_TRAITS} traits')
    return {trait: min(_count(count, 'aggregate trait count'), up_hosts)
            for trait, count in traits.items()
            if trait_names.is_valid(trait)}


def validated(document):
    """An aggregate as a cell sent it, checked; Invalid when it is not one.

    Names that are no resource class or trait (``resources.classes``,
    ``resources.traits``) are left out; a class must be complete, and
    there are at most ``MAX_CLASSES`` classes and ``MAX_TRAITS`` traits.
    The message names the field, never the value.
    """
    if not isinstance(document, dict):
        raise exception.Invalid(reason='an aggregate is a mapping')
    resources = document.get('resources')
    if not isinstance(resources, dict) or len(resources) > MAX_CLASSES:
        raise exception.Invalid(reason=f'aggregate resources is not a '
                                       f'mapping of at most {MAX_CLASSES} '
                                       f'classes')
    checked = {}
    for rc, figures in resources.items():
        if not isinstance(rc, str) or not class_names.is_valid(rc):
            continue
        if not isinstance(figures, dict):
            raise exception.Invalid(reason=f'aggregate {rc} is not a '
                                           f'mapping')
        checked[rc] = {key: _amount(figures.get(key), f'aggregate {rc} '
                                                      f'{key}')
                       for key in ('capacity', 'free', 'max_free')}
    zones = document.get('zones')
    if not isinstance(zones, list) or len(zones) > MAX_ZONES or not all(
            isinstance(zone, str) and 0 < len(zone) <= MAX_NAME
            for zone in zones):
        raise exception.Invalid(reason='aggregate zones is not a list of '
                                       'zone names')
    up_hosts = _count(document.get('up_hosts'), 'aggregate up_hosts')
    return {'hosts': _count(document.get('hosts'), 'aggregate hosts'),
            'up_hosts': up_hosts,
            'resources': checked, 'zones': list(zones),
            'traits': _traits(document.get('traits'), up_hosts),
            'computed_at': _amount(document.get('computed_at'),
                                   'aggregate computed_at')}


@retry.on_contention
@cell_db.writer
def _write(context, scheduler, document, now):
    values = {'aggregate': document, 'published_at': now,
              'sequence': _ROWS.c.sequence + 1}
    updated = context.session.execute(sa.update(_ROWS).where(
        _ROWS.c.scheduler == scheduler).values(**values))
    if not updated.rowcount:
        context.session.execute(sa.insert(_ROWS).values(
            scheduler=scheduler, aggregate=document, published_at=now,
            sequence=1))


def publish(context, scheduler, aggregate):
    """Write ``scheduler``'s row of the cell's aggregates."""
    _write(context, scheduler, json.dumps(aggregate, sort_keys=True),
           timeutils.utcnow())


@cell_db.reader
def _latest(context):
    return context.session.execute(sa.select(
        _ROWS.c.aggregate, _ROWS.c.published_at, _ROWS.c.sequence,
    ).order_by(_ROWS.c.published_at.desc(), _ROWS.c.id.desc()).limit(
        1)).first()


def read_latest(context):
    """``(aggregate, published_at)`` most recently published in the cell
    of ``context``; None when none was. Raises Invalid when the row is
    not an aggregate."""
    row = _latest(context)
    if row is None:
        return None
    if len(row.aggregate) > MAX_DOCUMENT:
        raise exception.Invalid(reason='the aggregate row is too large')
    try:
        document = json.loads(row.aggregate)
    except ValueError:
        raise exception.Invalid(reason='the aggregate row is not JSON')
    return validated(document), row.published_at


def moved(before, after, slack=FREE_SLACK):
    """Whether ``after`` says something the API level would act on that
    ``before`` did not.

    Cells are filtered and weighed by their hosts up, zones and largest
    free room on one host: any change to those counts, as does one to
    capacity, and so does free room (which sizes the chunks of a split
    multi-create) once it moved by more than ``slack`` of the class's
    capacity.
    """
    if before is None or any(before.get(key) != after.get(key)
                             for key in ('hosts', 'up_hosts', 'zones',
                                         'traits')):
        return True
    for rc, figures in after['resources'].items():
        was = before['resources'].get(rc)
        if was is None or was['capacity'] != figures['capacity'] \
                or was['max_free'] != figures['max_free'] \
                or abs(was['free'] - figures['free']) \
                > slack * figures['capacity']:
            return True
    return False


class Publisher:
    """A cell scheduler's publishing of its aggregate.

    ``compute`` returns the aggregate and the cache version it was
    computed from; ``publish_now`` writes at once (room given back);
    ``run``'s thread, at the bounded rate, writes what claims changed
    when it ``moved`` the figures, and every heartbeat interval anyway.
    Claims alone move a cell's free room a little at a time: writing
    every change cost as much CPU as a fifth of the placements (50
    cells, 500 placements a second), for figures that no API level's
    choice depends on.
    """

    def __init__(self, name, cache, context=None, follower=None):
        self.name = name
        self.cache = cache
        # The cell's change feed (``sync``): followed before each
        # heartbeat, so that what reached the cell's database behind
        # every scheduler (an operator's new trait, another scheduler's
        # release) reaches the API level within a heartbeat even when
        # no decision pulled it.
        self._follower = follower
        self._context = context or cb_context.get_admin_context()
        self._lock = threading.Lock()
        self._published = None
        self._seen_version = None
        self._published_at = 0.0
        self._periodic = periodic.Periodic(
            f'aggregate-{cache.scope.name}', self.publish_if_due,
            self._publish_failed)

    def compute(self):
        with self.cache.locked() as states:
            return (of_states(states, CONF.scheduler.service_down_time),
                    self.cache.version)

    def publish_now(self):
        """Compute and write the aggregate; returns it."""
        with self._lock:
            return self._publish(*self.compute())

    def _publish(self, aggregate, version):
        publish(self.cache.scope.context(self._context), self.name,
                aggregate)
        self._published = aggregate
        self._seen_version = version
        self._published_at = time.monotonic()
        return aggregate

    def publish_if_due(self):
        """Write when the figures moved since, or the heartbeat is due."""
        due = (time.monotonic() - self._published_at
               >= CONF.scheduler.aggregate_heartbeat_interval)
        if due and self._follower is not None:
            self._follower.catch_up(
                self.cache.scope.context(self._context), measured=False)
        if not due and self.cache.version == self._seen_version:
            return
        with self._lock:
            aggregate, version = self.compute()
            if due or moved(self._published, aggregate):
                self._publish(aggregate, version)
            else:
                self._seen_version = version

    def start(self):
        self._periodic.start(CONF.scheduler.aggregate_publish_interval)

    def _publish_failed(self, exc, interval):
        # The cell's database may be down: the API level sees the
        # aggregate grow old and stops sending requests here.
        LOG.warning('Could not publish the aggregate of cell %s (%s); '
                    'trying again in %s s', self.cache.scope.name, exc,
                    interval)

    def stop(self):
        self._periodic.stop()
