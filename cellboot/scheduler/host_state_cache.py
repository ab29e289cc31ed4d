"""A cell scheduler's host states: loaded from its cell, kept current.

A cell's scheduler holds the states of its own cell's hosts only. A full
load reads, from the cell's database, every resource provider with its
inventories, summed usages and traits (``usage.load_all``, streamed in chunks
into arrays) and the compute nodes with their compute services (one
query). A host is schedulable when its compute node and its resource
provider both exist: the node says what it is called and whether its
service is up, the provider what it holds.

Between loads the cache follows the scheduler's own writes (claims,
releases, provider updates pass through ``CellScheduler``), re-reads
single providers on demand (a failed claim means our copy is stale), and
is reloaded in full by ``refresh`` -- periodically by a background thread
every ``[scheduler] host_state_refresh_interval`` seconds -- to learn of
other schedulers' claims, new or dead hosts and disabled services. A
load that fails (the cell's database is down) keeps the states as they
were: the claims are checked in the database anyway. Every change bumps
``version``, which is how the cell's aggregate knows that it is due
(``cellboot.scheduler.aggregate``).

The cell is a ``CellScope``: its key in the states (and in the
selections, until the API level names the cell it asked), and how a
context reaches its database.
"""

import contextlib
import datetime
import threading
import time

from oslo_log import log as logging
import sqlalchemy as sa

from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models as cell_models
from cellboot import exception
from cellboot.scheduler import host_batch
from cellboot.scheduler import host_state
from cellboot.scheduler import periodic
from cellboot.scheduler.resources import provider_traits
from cellboot.scheduler.resources import providers
from cellboot.scheduler.resources import usage

LOG = logging.getLogger(__name__)

COMPUTE_BINARY = 'cellboot-compute'

_NODES = cell_models.ComputeNode.__table__
_SERVICES = cell_models.Service.__table__
_EPOCH = datetime.datetime(1970, 1, 1)

_CELL_HOSTS = sa.select(
    _NODES.c.uuid, _NODES.c.host, _NODES.c.hypervisor_hostname,
    _SERVICES.c.disabled, _SERVICES.c.last_seen_up,
).select_from(_NODES.outerjoin(_SERVICES, sa.and_(
    _SERVICES.c.host == _NODES.c.host,
    _SERVICES.c.binary == COMPUTE_BINARY)))


class CellScope:
    """Which cell a cell scheduler schedules, and how it reaches it.

    ``cell_mapping`` given (the API level, or a one-process deployment):
    contexts are targeted at that cell, and the states are keyed by its
    uuid. Without one (``cellboot-scheduler --cell NAME`` inside the
    cell): the service's own ``[database] connection``, keyed by the
    cell's ``name``, which is all a service inside a cell knows of it.
    """

    def __init__(self, name, cell_mapping=None):
        self.name = name
        self.cell_mapping = cell_mapping
        self.key = cell_mapping.uuid if cell_mapping is not None else name

    def context(self, context):
        """``context``, reaching this cell's database."""
        if self.cell_mapping is None:
            return context
        return cb_context.targeted_copy(context, self.cell_mapping)

    def __repr__(self):
        return f'<CellScope {self.name} ({self.key})>'


class _CellHosts:
    """The cell's compute nodes and their services, as compact lists.

    100,000 rows cost about 60 MB as SQLAlchemy rows: they are turned
    into lists as they are read.
    """

    def __init__(self, read_at, rows):
        self.read_at = read_at
        self.uuids, self.hosts, self.nodenames = [], [], []
        self.disabled, self.last_seen_up = [], []
        for uuid, host, nodename, disabled, seen in rows:
            self.uuids.append(uuid)
            self.hosts.append(host)
            # One string for both when the node is named like its host.
            self.nodenames.append(host if nodename == host else nodename)
            # No compute service row: the host never started; not up.
            self.disabled.append(disabled is None or bool(disabled))
            self.last_seen_up.append(_epoch(seen))


@cell_db.reader
def _read_cell(context):
    """The cell's compute hosts (``_CellHosts``), one query."""
    read_at = time.time()
    # Streamed (see usage.load_all): a driver that buffers would hold
    # every row at once.
    rows = context.session.execute(_CELL_HOSTS.execution_options(
        yield_per=usage.LOAD_CHUNK_ROWS))
    return _CellHosts(read_at, rows)


def _epoch(when):
    return None if when is None else (when - _EPOCH).total_seconds()


def _batch(table, cell_key, hosts):
    """A HostBatch of the cell's nodes that have a provider."""
    batch = host_batch.HostBatch(table)
    for uuid, host, nodename, disabled, seen in zip(
            hosts.uuids, hosts.hosts, hosts.nodenames, hosts.disabled,
            hosts.last_seen_up):
        column = table.index.get(uuid)
        if column is None:
            continue  # not reported yet: nothing to claim against
        batch.add_host(uuid, host, nodename, cell_key, table.zones[column],
                       disabled, seen, table.generations[column], column)
    return batch


class HostStateCache:
    """Thread-safe owner of the current ``HostStates`` of one cell."""

    def __init__(self, scope):
        self.scope = scope
        self._lock = threading.RLock()
        self._states = host_state.HostStates()
        # Provider updates not yet merged; merged in one batch (growing
        # the columns is O(hosts)) the next time the states are used.
        self._pending = {}
        # Providers changed while a full load was reading: re-read after.
        self._touched = None
        self.loaded_at = None
        # Moves on with every change of the states (see the docstring).
        self.version = 0
        self._periodic = periodic.Periodic(
            f'host-state-refresh-{scope.name}',
            lambda: self.refresh(cb_context.get_admin_context()),
            self._reload_failed)

    @contextlib.contextmanager
    def locked(self):
        """Yield the current states, holding them for the caller alone."""
        with self._lock:
            self._merge_pending()
            yield self._states

    def _merge_pending(self):
        if self._pending:
            self._states.upsert_hosts(list(self._pending.values()))
            self._pending = {}

    def _touch(self, uuids):
        self.version += 1
        if self._touched is not None:
            self._touched.update(uuids)

    # -- full loads ---------------------------------------------------

    def refresh(self, context):
        """Reload every host of the cell; returns a summary.

        Reads without holding the lock (scheduling goes on meanwhile),
        then swaps the new states in and re-reads the providers that
        changed during the read.
        """
        cctxt = self.scope.context(context)
        with self._lock:
            self._touched = set()
        try:
            # Providers first, streamed into arrays chunk by chunk: all
            # their rows at once would be the largest part of a load.
            table = host_batch.ProviderTable()
            usage.load_all(cctxt, table)
            hosts = _read_cell(cctxt)
            states = host_state.HostStates.from_batch(
                _batch(table, self.scope.key, hosts),
                {self.scope.key: hosts.read_at})
            del table, hosts
            with self._lock:
                old = self._states
                self._states = states
                touched, self._touched = self._touched, None
                self._carry_build_failures(old, states)
                self.loaded_at = time.time()
                self.version += 1
        finally:
            with self._lock:
                self._touched = None
        if touched:
            self.refresh_providers(context, touched)
        summary = {'cell': self.scope.name, 'hosts': len(states)}
        LOG.info('Host states of cell %(cell)s loaded: %(hosts)d hosts',
                 summary)
        return summary

    @staticmethod
    def _carry_build_failures(old, new):
        """Failure counts live only in memory; keep them across loads."""
        for pos in old.failed_builds.nonzero()[0]:
            new_pos = new.position(old.uuids[pos])
            if new_pos is not None:
                new.failed_builds[new_pos] = old.failed_builds[pos]

    def ensure_loaded(self, context):
        """Load once, the first time host states are needed."""
        if self.loaded_at is None:
            self.refresh(context)

    # -- single providers ---------------------------------------------

    def refresh_providers(self, context, uuids):
        """Re-read inventories, usages and traits of known providers."""
        uuids = list(uuids)
        if not uuids:
            return
        cctxt = self.scope.context(context)
        inventories = usage.get_inventories(cctxt, uuids)
        usages = usage.get_usages(cctxt, uuids)
        traits = provider_traits.get_traits(cctxt, uuids)
        with self._lock:
            self._touch(uuids)
            states = self._states
            for uuid in uuids:
                pos = states.position(uuid)
                if pos is None:
                    continue
                if uuid not in inventories:
                    states.remove_host(uuid)  # deleted meanwhile
                    continue
                states.set_resources(pos, inventories[uuid],
                                     usages.get(uuid, {}),
                                     traits=traits.get(uuid, ()))

    def refresh_host(self, context, provider_uuid):
        """Re-read one provider; learn it if it is new to the cache."""
        cctxt = self.scope.context(context)
        try:
            provider = providers.get_provider(cctxt, provider_uuid)
        except exception.ResourceProviderNotFound:
            self.remove_host(provider_uuid)
            return
        used = usage.get_usages(cctxt, [provider_uuid]).get(
            provider_uuid, {})
        self.update_host(provider, used)

    def update_host(self, provider, usages):
        """Take a provider's current record (``providers.get_provider``)."""
        host = {
            'uuid': provider['uuid'], 'service_host': provider['name'],
            'cell_uuid': self.scope.key,
            'availability_zone': provider.get('availability_zone'),
            'generation': provider.get('generation'),
            'inventories': provider.get('inventories') or {},
            'traits': provider.get('traits') or (),
            'usages': usages,
        }
        with self._lock:
            self._touch([provider['uuid']])
            pos = self._states.position(provider['uuid'])
            if pos is not None:
                # Keep the node name read from the cell.
                host['nodename'] = self._states.nodenames[pos]
            self._pending[provider['uuid']] = host

    def remove_host(self, provider_uuid):
        with self._lock:
            self._touch([provider_uuid])
            self._pending.pop(provider_uuid, None)
            self._states.remove_host(provider_uuid)

    def add_usage(self, provider_uuid, resources, sign=1):
        """Follow a claim (sign 1) or a release (sign -1) of
        ``resources`` ({rc: amount}).

        Returns False, changing nothing, when the states have no row for
        one of the classes: the provider's inventory of it is news, which
        the caller learns by re-reading the provider.
        """
        with self.locked() as states:
            if not states.knows_classes(resources):
                return False
            self._touch([provider_uuid])
            pos = states.position(provider_uuid)
            if pos is not None:
                states.add_usage(pos, resources, sign)
            return True

    def record_build_result(self, provider_uuid, succeeded):
        """Count a build's outcome; returns the host's failure count."""
        with self.locked() as states:
            if succeeded:
                states.clear_build_failures(provider_uuid)
            else:
                states.record_build_failure(provider_uuid)
            return states.build_failures(provider_uuid)

    def set_build_failures(self, provider_uuid, count):
        """Take another scheduler's failure count of a host."""
        with self.locked() as states:
            states.set_build_failures(provider_uuid, count)

    def knows(self, provider_uuid):
        with self._lock:
            return (provider_uuid in self._pending
                    or self._states.position(provider_uuid) is not None)

    def host_dicts(self):
        """Every live host as plain values."""
        with self.locked() as states:
            down_time = CONF.scheduler.service_down_time
            return [states.host_dict(pos, down_time)
                    for pos in states.live.nonzero()[0]]

    # -- periodic reloads ---------------------------------------------

    def start_periodic_refresh(self, interval=None):
        """Reload in a daemon thread every ``interval`` seconds."""
        self._periodic.start(CONF.scheduler.host_state_refresh_interval
                             if interval is None else interval)

    def _reload_failed(self, exc, interval):
        # A database that is down now may be back next time; meanwhile
        # the scheduler works from what it has.
        LOG.exception('Host states of cell %s: periodic reload failed; '
                      'keeping the previous states', self.scope.name)

    def stop_periodic_refresh(self):
        self._periodic.stop()
