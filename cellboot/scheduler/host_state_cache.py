"""The scheduler's host states: loaded from every cell, kept current.

A full load reads, from the API database, every resource provider with
its inventories and summed usages (``usage.load_all``, streamed in
chunks into arrays), then, in parallel, each enabled cell's compute nodes
with their compute services (one query per cell, through a context
targeted at the cell). A host is
schedulable when its compute node and its resource provider both exist:
the node says where it is (cell, host name), the provider what it holds.
A cell that fails or does not answer within ``[scheduler]
cell_load_timeout`` is logged and contributes no hosts until a later
load reaches it: scheduling to a cell we cannot read would only fail
later.

Between loads the cache follows the scheduler's own writes (claims,
releases, provider updates pass through ``SchedulerAPI``), re-reads
single providers on demand (a failed claim means our copy is stale), and
is reloaded in full by ``refresh`` — periodically by a background thread
every ``[scheduler] host_state_refresh_interval`` seconds — to learn of
other schedulers' claims, new or dead hosts and disabled services. A
cell that stops answering between loads has its hosts dropped within
seconds, and is skipped by loads until it answers again
(``cell_checks``).
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
from cellboot.objects import cell_mapping
from cellboot.scheduler import cell_checks
from cellboot.scheduler import host_batch
from cellboot.scheduler import host_state
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


class _CellHosts:
    """One cell's compute nodes and their services, as compact lists.

    Built in the cell's loading thread so that the database rows are
    freed there: 100,000 rows cost about 60 MB as SQLAlchemy rows.
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
    """The targeted cell's compute hosts (``_CellHosts``), one query."""
    read_at = time.time()
    # Streamed (see usage.load_all): the cells are read in parallel, and
    # a driver that buffers would hold every cell's rows at once.
    rows = context.session.execute(_CELL_HOSTS.execution_options(
        yield_per=usage.LOAD_CHUNK_ROWS))
    return _CellHosts(read_at, rows)


def _epoch(when):
    return None if when is None else (when - _EPOCH).total_seconds()


def _schedulable_cells(context):
    return [cell for cell in cell_mapping.CellMapping.get_enabled(context)
            if not cell.is_cell0]


def _batch(table, cells):
    """A HostBatch of the nodes that have a provider, cell by cell."""
    batch = host_batch.HostBatch(table)
    for cell_uuid, hosts in cells.items():
        for uuid, host, nodename, disabled, seen in zip(
                hosts.uuids, hosts.hosts, hosts.nodenames, hosts.disabled,
                hosts.last_seen_up):
            column = table.index.get(uuid)
            if column is None:
                continue  # not reported yet: nothing to claim against
            batch.add_host(uuid, host, nodename, cell_uuid,
                           table.zones[column], disabled, seen,
                           table.generations[column], column)
    return batch


class HostStateCache:
    """Thread-safe owner of the current ``HostStates``."""

    def __init__(self):
        self._lock = threading.RLock()
        self._states = host_state.HostStates()
        # Provider updates not yet merged; merged in one batch (growing
        # the columns is O(hosts)) the next time the states are used.
        self._pending = {}
        # Providers changed while a full load was reading: re-read after.
        self._touched = None
        self.loaded_at = None
        self.unanswered_cells = []
        # Cells the checks found silent: {uuid: name}; their hosts are
        # out of the states until a check finds them back.
        self.down_cells = {}
        self.checks = cell_checks.CellChecks(self)
        self._stop = threading.Event()
        self._thread = None

    @contextlib.contextmanager
    def locked(self):
        """Yield the current states, holding them for the caller alone."""
        with self._lock:
            self._merge_pending()
            yield self._states

    def _merge_pending(self):
        if self._pending:
            self._states.upsert_hosts(
                [host for host in self._pending.values()
                 if host['cell_uuid'] not in self.down_cells])
            self._pending = {}

    def set_down_cells(self, cells):
        """Take the cells found silent (``{uuid: name}``) now.

        The hosts of a newly silent cell are no longer scheduled to.
        Returns the names of the cells no longer silent: the caller
        reloads (``refresh``) to bring their hosts back.
        """
        with self.locked() as states:
            newly = set(cells) - set(self.down_cells)
            back = [name for uuid, name in self.down_cells.items()
                    if uuid not in cells]
            self.down_cells = dict(cells)
            for cell_uuid in newly:
                LOG.warning('Host states: cell %s (%s) does not answer; '
                            'its hosts are not scheduled to until it does',
                            cells[cell_uuid], cell_uuid)
            # Every silent cell, not only the new ones: a load that read
            # a cell just before it went silent may have brought its
            # hosts back.
            for cell_uuid in cells:
                code = states.cell_code(cell_uuid)
                if code is None:
                    continue
                for pos in (states.live & (states.cell == code)).nonzero()[0]:
                    states.remove_host(states.uuids[pos])
        return back

    def _touch(self, uuids):
        if self._touched is not None:
            self._touched.update(uuids)

    # -- full loads ---------------------------------------------------

    def refresh(self, context):
        """Reload every host of every enabled cell; returns a summary.

        Reads without holding the lock (scheduling goes on meanwhile),
        then swaps the new states in and re-reads the providers that
        changed during the read.
        """
        with self._lock:
            self._touched = set()
        try:
            # Providers first, streamed into arrays chunk by chunk: all
            # their rows at once would be the largest part of a load.
            table = host_batch.ProviderTable()
            usage.load_all(context, table)
            cells = _schedulable_cells(context)
            # A cell found silent is not waited for (nor read: its hosts
            # stay out until a check finds it back).
            results = cb_context.scatter_gather_cells(
                context, cells, CONF.scheduler.cell_load_timeout, _read_cell,
                skip_down_cells=True)
            answered = {uuid: result for uuid, result in results.items()
                        if not cb_context.is_cell_failure(result) and
                        uuid not in self.down_cells}
            unanswered = [cell for cell in cells if cell.uuid not in answered]
            for cell in unanswered:
                if not cb_context.is_cell_failure(results[cell.uuid]):
                    LOG.info('Host states: cell %s (%s) answered, but the '
                             'cell checks still take it for silent; its '
                             'hosts come back with their next check.',
                             cell.name, cell.uuid)
                    continue
                LOG.warning('Host states: cell %s (%s) did not answer (%s); '
                            'its hosts are not scheduled to until a later '
                            'load reaches it.', cell.name, cell.uuid,
                            results[cell.uuid])
            states = host_state.HostStates.from_batch(
                _batch(table, answered),
                {uuid: hosts.read_at for uuid, hosts in answered.items()})
            del table, results
            with self._lock:
                old = self._states
                self._states = states
                touched, self._touched = self._touched, None
                self._carry_build_failures(old, states)
                self.loaded_at = time.time()
                self.unanswered_cells = [cell.uuid for cell in unanswered]
        finally:
            with self._lock:
                self._touched = None
        if touched:
            self.refresh_providers(context, touched)
        summary = {'hosts': len(states), 'cells': len(answered),
                   'unanswered_cells': self.unanswered_cells}
        LOG.info('Host states loaded: %(hosts)d hosts in %(cells)d cells; '
                 'cells not answering: %(unanswered_cells)s', summary)
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
        """Re-read inventories and usages of known providers."""
        uuids = list(uuids)
        if not uuids:
            return
        inventories = usage.get_inventories(context, uuids)
        usages = usage.get_usages(context, uuids)
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
                                     usages.get(uuid, {}))

    def refresh_host(self, context, provider_uuid):
        """Re-read one provider; learn it if it is new to the cache."""
        try:
            provider = providers.get_provider(context, provider_uuid)
        except exception.ResourceProviderNotFound:
            self.remove_host(provider_uuid)
            return
        used = usage.get_usages(context, [provider_uuid]).get(
            provider_uuid, {})
        self.update_host(provider, used)

    def update_host(self, provider, usages):
        """Take a provider's current record (``providers.get_provider``)."""
        host = {
            'uuid': provider['uuid'], 'service_host': provider['name'],
            'cell_uuid': provider['cell_uuid'],
            'availability_zone': provider.get('availability_zone'),
            'generation': provider.get('generation'),
            'inventories': provider.get('inventories') or {},
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
        """Follow a claim (sign 1) or a release (sign -1) we wrote."""
        with self.locked() as states:
            self._touch([provider_uuid])
            pos = states.position(provider_uuid)
            if pos is not None:
                states.add_usage(pos,
                                 sign * host_state.resource_vector(resources))

    def record_build_result(self, provider_uuid, succeeded):
        with self.locked() as states:
            if succeeded:
                states.clear_build_failures(provider_uuid)
            else:
                states.record_build_failure(provider_uuid)

    def host_dicts(self, cell_uuid=None):
        """Every live host as plain values, optionally of one cell."""
        with self.locked() as states:
            down_time = CONF.scheduler.service_down_time
            return [states.host_dict(pos, down_time)
                    for pos in states.live.nonzero()[0]
                    if cell_uuid is None
                    or states.cell_uuid(pos) == cell_uuid]

    # -- periodic reloads ---------------------------------------------

    def start_periodic_refresh(self, interval=None):
        """Reload in a daemon thread every ``interval`` seconds.

        The cell checks start with it (``[scheduler] cell_check_interval``):
        they keep the states current between reloads, so states that are
        never reloaded (0) are not checked either.
        """
        interval = (CONF.scheduler.host_state_refresh_interval
                    if interval is None else interval)
        if not interval or self._thread is not None:
            return
        self.checks.start()
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run_periodic, args=(interval,),
            name='host-state-refresh', daemon=True)
        self._thread.start()

    def _run_periodic(self, interval):
        context = cb_context.get_admin_context()
        while not self._stop.wait(interval):
            try:
                self.refresh(context)
            except Exception:
                # A database that is down now may be back next time;
                # meanwhile the scheduler works from what it has.
                LOG.exception('Host states: periodic reload failed; '
                              'keeping the previous states')

    def stop_periodic_refresh(self):
        self.checks.stop()
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
