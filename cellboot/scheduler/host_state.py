"""Every schedulable host, in memory, one numpy array per attribute.

Why columns and not one object per host: at 100,000 hosts a filter that
loops over Python objects costs tens of milliseconds per request, while
the same test on an array is one vectorized comparison (tens of
microseconds). So each attribute is an array indexed by host *position*;
filters answer with boolean masks over all positions, weighers with
float arrays. Python objects remain only where arrays do not pay: the
uuid and host-name lists (to turn a position into a Selection) and the
uuid -> position index (to apply a claim to the right row).

Resources are (classes, n) arrays, one row per resource class in the
order of ``classes``: VCPU, MEMORY_MB and DISK_GB are always rows 0 to 2
(so that ``free[MEMORY_MB]`` is one contiguous row), and any other class
a host reports (VGPU, CUSTOM_FPGA, ...) gets a row when it is first
seen. A request naming a class no host has fits no host. Traits are a
(traits, n) boolean array, one row per trait seen (``has_trait``), so
that requiring or forbidding a trait is one row test. Capacity follows
the rule of the claims (``resources.inventory.capacity``), so that the
scheduler never picks a host that its claim would refuse; a provider
without an inventory of a class has capacity 0 (and max_unit 0) for it.
Each cell
keeps the sum of its hosts' free resources so that cells that cannot fit
a request are pruned before any per-host work.

A ``HostStates`` is not thread-safe: ``HostStateCache`` serializes its
users. Positions are stable until the next full reload, which builds a
new ``HostStates`` and swaps it in.
"""

import sys
import time

import numpy as np

from cellboot.scheduler import host_batch
from cellboot.scheduler import host_rows

# The rows of the classes every flavor names (``host_batch``).
VCPU, MEMORY_MB, DISK_GB = range(len(host_batch.BASE_CLASSES))

_RESOURCE_COLUMNS = host_batch.RESOURCE_COLUMNS + ('free',)
_HOST_COLUMNS = ('cell', 'az', 'enabled', 'last_seen_up', 'live',
                 'generation', 'failed_builds', 'has_trait')


class _Names:
    """Interned strings with a small integer code each (cells, zones)."""

    def __init__(self):
        self.names = []
        self.codes = {}

    def code(self, name):
        code = self.codes.get(name)
        if code is None:
            code = self.codes[name] = len(self.names)
            self.names.append(name)
        return code


class HostStates(host_rows.NamedRows):
    """The columnar state of every host of the loaded cells.

    Build with ``from_hosts``; each host is a dict with ``uuid``,
    ``service_host``, ``nodename``, ``cell_uuid``, ``availability_zone``,
    ``disabled``, ``last_seen_up`` (epoch seconds or None), ``generation``,
    ``inventories`` ({rc: {total, reserved, allocation_ratio, min_unit,
    max_unit, step_size}}), ``usages`` ({rc: used}) and ``traits``
    (names).
    """

    def __init__(self):
        self.uuids = []
        self.service_hosts = []
        self.nodenames = []
        self.index = {}
        self.cells = _Names()
        self.zones = _Names()
        # When each cell's rows were read: liveness is judged as of then.
        self.cell_read_at = np.zeros(0)
        self._by_host = None
        # Masks that depend on inventories and liveness only, not on
        # usage (unit checks, "up"): computed once, dropped on change.
        self._memo = {}
        self._init_rows()
        for name in _RESOURCE_COLUMNS:
            setattr(self, name, np.zeros((len(self.classes), 0)))
        self.cell = np.zeros(0, dtype=np.int32)
        self.az = np.zeros(0, dtype=np.int32)
        self.enabled = np.zeros(0, dtype=bool)
        self.last_seen_up = np.zeros(0)
        self.live = np.zeros(0, dtype=bool)
        self.generation = np.zeros(0, dtype=np.int64)
        self.failed_builds = np.zeros(0, dtype=np.int32)
        self.cell_free = np.zeros((len(self.classes), 0))
        self.cell_hosts = np.zeros(0, dtype=np.int64)

    # -- building -----------------------------------------------------

    @classmethod
    def from_hosts(cls, hosts, cell_read_at=None):
        """Columns for ``hosts``; ``cell_read_at`` = {cell_uuid: epoch}."""
        batch = host_batch.HostBatch()
        for host in hosts:
            batch.add_host_dict(host)
        return cls.from_batch(batch, cell_read_at)

    @classmethod
    def from_batch(cls, batch, cell_read_at=None):
        """Columns for a ``host_batch.HostBatch`` (what loads build)."""
        states = cls()
        states._extend(batch, cell_read_at or {})
        return states

    def _extend(self, batch, cell_read_at):
        start = len(self.uuids)
        self.uuids.extend(batch.uuids)
        self.index.update(zip(batch.uuids, range(start, start + len(batch))))
        self.service_hosts.extend(batch.service_hosts)
        self.nodenames.extend(batch.nodenames)
        res = self._aligned(batch.resource_columns())
        res['free'] = res['capacity'] - res['used']
        for name in _RESOURCE_COLUMNS:
            setattr(self, name, self._grown(name, res.pop(name), axis=1))
        names, matrix = batch.trait_columns()
        self.has_trait = self._grown(
            'has_trait', self._trait_rows(names, matrix, len(batch)),
            axis=1)
        seen = np.array([np.nan if t is None else t
                         for t in batch.last_seen_up], dtype=float)
        added = {
            'cell': np.array([self.cells.code(c) for c in batch.cell_uuids],
                             dtype=np.int32),
            'az': np.array([self.zones.code(z) for z in batch.zones],
                           dtype=np.int32),
            'enabled': ~np.array(batch.disabled, dtype=bool),
            'last_seen_up': seen,
            'live': np.ones(len(batch), dtype=bool),
            'generation': np.array(batch.generations, dtype=np.int64),
            'failed_builds': np.zeros(len(batch), dtype=np.int32),
        }
        for name, values in added.items():
            setattr(self, name, self._grown(name, values))
        self._by_host = None
        self._memo.clear()
        self._grow_cells(cell_read_at)
        self._sum_cells()

    def _grown(self, name, added, axis=0):
        """Column ``name`` with ``added`` appended.

        A full load starts from empty columns: taking the new arrays as
        they are spares a copy of every column (12 MB at 100,000 hosts)
        at the peak of the load. They must still be C-ordered (each
        resource class a contiguous row): the provider columns picked
        per host by fancy indexing come out Fortran-ordered, which makes
        every filter a strided pass (a third slower per decision).
        """
        current = getattr(self, name)
        if not current.shape[axis]:
            return np.ascontiguousarray(added)
        return np.concatenate([current, added], axis=axis)

    def _grow_cells(self, cell_read_at):
        known = len(self.cell_read_at)
        for cell_uuid in cell_read_at:
            self.cells.code(cell_uuid)
        added = len(self.cells.names) - known
        if added:
            self.cell_read_at = np.concatenate(
                [self.cell_read_at, np.full(added, time.time())])
        for cell_uuid, read_at in cell_read_at.items():
            self.cell_read_at[self.cells.codes[cell_uuid]] = read_at

    def _sum_cells(self):
        """Recompute the per-cell sums from the host columns."""
        ncells = len(self.cells.names)
        live = self.live
        self.cell_hosts = np.bincount(self.cell[live], minlength=ncells)
        clipped = np.maximum(self.free[:, live], 0.0)
        self.cell_free = np.stack([
            np.bincount(self.cell[live], weights=row, minlength=ncells)
            for row in clipped]) if ncells else np.zeros(
                (len(self.classes), 0))

    # -- lookups ------------------------------------------------------

    def __len__(self):
        return len(self.uuids)

    def position(self, uuid):
        """The position of the live host with this provider uuid, or None."""
        pos = self.index.get(uuid)
        if pos is None or not self.live[pos]:
            return None
        return pos

    def positions(self, uuids):
        """Positions of the live hosts among ``uuids`` (unknown skipped)."""
        found = (self.position(uuid) for uuid in uuids)
        return np.array([p for p in found if p is not None], dtype=np.int64)

    def positions_of_service_hosts(self, names):
        """Positions of the live hosts whose service host is in ``names``."""
        if self._by_host is None:
            by_host = {}
            for pos, name in enumerate(self.service_hosts):
                by_host.setdefault(name, []).append(pos)
            self._by_host = by_host
        found = [pos for name in names for pos in self._by_host.get(name, ())
                 if self.live[pos]]
        return np.array(found, dtype=np.int64)

    def cell_code(self, cell_uuid):
        return self.cells.codes.get(cell_uuid)

    def cell_uuid(self, pos):
        return self.cells.names[self.cell[pos]]

    def mask_of(self, positions):
        """A boolean mask over all hosts, True at ``positions``."""
        mask = np.zeros(len(self.uuids), dtype=bool)
        mask[positions] = True
        return mask

    def memoized(self, key, compute):
        """``compute()``, cached until inventories or liveness change.

        For masks that do not depend on usage (which every claim
        changes): they are then computed once for a stream of requests.
        """
        value = self._memo.get(key)
        if value is None:
            value = self._memo[key] = compute()
        return value

    # -- changes ------------------------------------------------------

    def add_usage(self, pos, resources, sign=1):
        """Account ``resources`` ({rc: amount}) as used on host ``pos``.

        ``sign`` -1 releases. Called after a claim or release was
        written, so the cache follows the database without a reload.
        """
        amounts = sign * self.vector(resources)
        before = np.maximum(self.free[:, pos], 0.0)
        self.used[:, pos] += amounts
        self.free[:, pos] -= amounts
        self.cell_free[:, self.cell[pos]] += (
            np.maximum(self.free[:, pos], 0.0) - before)

    def set_resources(self, pos, inventories, usages, generation=None,
                      traits=None):
        """Replace one host's inventories and usages with fresh values
        (and its traits, when given)."""
        columns = self._aligned(host_batch.one_host_columns(inventories,
                                                            usages))
        before = np.maximum(self.free[:, pos], 0.0)
        self._memo.clear()
        for name, values in columns.items():
            getattr(self, name)[:, pos] = values[:, 0]
        if traits is not None:
            self.set_traits(pos, traits)
        self.free[:, pos] = self.capacity[:, pos] - self.used[:, pos]
        if generation is not None:
            self.generation[pos] = generation
        if self.live[pos]:
            self.cell_free[:, self.cell[pos]] += (
                np.maximum(self.free[:, pos], 0.0) - before)

    def upsert_hosts(self, hosts):
        """Add hosts (``from_hosts`` dicts) or update the known ones.

        A known host keeps its service liveness; its names, cell, zone and
        resources are replaced. A new host is taken as up (it has just
        reported). New hosts are appended in one batch: growing the
        columns costs O(n), so callers gather hosts that report one by one
        and add them together.
        """
        new = host_batch.HostBatch()
        resum = False
        for host in hosts:
            pos = self.index.get(host['uuid'])
            if pos is None:
                new.add_host_dict(dict(host, last_seen_up=host.get(
                    'last_seen_up', time.time())))
                continue
            cell = self.cells.code(host['cell_uuid'])
            resum = resum or cell != self.cell[pos] or not self.live[pos]
            self.service_hosts[pos] = host['service_host']
            self.nodenames[pos] = (host.get('nodename')
                                   or host['service_host'])
            self.cell[pos] = cell
            self.az[pos] = self.zones.code(host.get('availability_zone'))
            self.live[pos] = True
            self.set_resources(pos, host.get('inventories') or {},
                               host.get('usages') or {},
                               host.get('generation'),
                               host.get('traits') or ())
        self._by_host = None
        if len(new):
            self._extend(new, {})
        elif resum:
            self._grow_cells({})
            self._sum_cells()

    def remove_host(self, uuid):
        """Stop scheduling to a host (its provider was deleted)."""
        pos = self.index.get(uuid)
        if pos is not None and self.live[pos]:
            self.live[pos] = False
            self._memo.clear()
            self._sum_cells()

    def record_build_failure(self, uuid):
        pos = self.position(uuid)
        if pos is not None:
            self.failed_builds[pos] += 1

    def clear_build_failures(self, uuid):
        self.set_build_failures(uuid, 0)

    def set_build_failures(self, uuid, count):
        pos = self.position(uuid)
        if pos is not None:
            self.failed_builds[pos] = count

    def build_failures(self, uuid):
        pos = self.position(uuid)
        return 0 if pos is None else int(self.failed_builds[pos])

    # -- reading ------------------------------------------------------

    def host_dict(self, pos, down_time=None):
        """One host as plain values (the scheduler API's ``host_states``)."""
        values = {
            'uuid': self.uuids[pos],
            'service_host': self.service_hosts[pos],
            'nodename': self.nodenames[pos],
            'cell_uuid': self.cell_uuid(pos),
            'availability_zone': self.zones.names[self.az[pos]],
            'enabled': bool(self.enabled[pos]),
            'generation': int(self.generation[pos]),
            'failed_builds': int(self.failed_builds[pos]),
            'resources': {
                rc: {'capacity': float(self.capacity[i, pos]),
                     'used': float(self.used[i, pos]),
                     'free': float(self.free[i, pos])}
                for i, rc in enumerate(self.classes)
                if i < len(host_batch.BASE_CLASSES)
                or self.capacity[i, pos] or self.used[i, pos]},
            'traits': self.traits_of(pos),
        }
        if down_time is not None:
            values['up'] = bool(self.up_mask(down_time)[pos])
        return values

    def up_mask(self, down_time):
        """Hosts whose last heartbeat was recent when their cell was read.

        Judged at read time, not now, so that a cache that is a refresh
        interval old does not see every host go down between reloads.
        """
        since = self.cell_read_at[self.cell] - down_time
        return self.last_seen_up >= since

    def nbytes(self):
        """Approximate memory held by this object, in bytes."""
        arrays = [getattr(self, name) for name in
                  _RESOURCE_COLUMNS + _HOST_COLUMNS]
        total = sum(a.nbytes for a in arrays)
        seen = set()  # nodename is often the service host's own string
        for strings in (self.uuids, self.service_hosts, self.nodenames):
            total += sys.getsizeof(strings)
            for string in strings:
                if id(string) not in seen:
                    seen.add(id(string))
                    total += sys.getsizeof(string)
        total += sys.getsizeof(self.index)
        return total
