"""Hosts on their way into ``HostStates``: parallel lists, then columns.

A full load brings 100,000 providers, 300,000 inventory rows and their
usages. Python objects for all of them at once (a dict per host, or just
the database rows) cost several times the host states themselves, so
``usage.load_all`` streams the rows in chunks and ``ProviderTable`` turns
each chunk into arrays before the next is read; each host then only
carries its provider's column. Hosts given as dicts (tests, provider
updates) take the same road, so there is one way to turn an inventory
into capacity (``resource_columns``).

Resource records are sequences shaped like the rows of
``usage.load_all``: ``(provider_id, resource_class, total, reserved,
allocation_ratio, min_unit, max_unit, step_size)`` for inventories and
``(provider_id, resource_class, used)`` for usages; the provider id is
not read here (each record comes with its owner's column). Traits are
``(provider_id, trait)`` rows, turned into one boolean row per trait
(``Traits``). A class or trait gets its row when a record first names
it (``Columns.add_classes``).
"""

import functools

import numpy as np

from cellboot.scheduler.resources import inventory as inventory_rules

# The first rows of every set of resource columns, in this order: the
# classes every flavor names keep their row numbers whatever else the
# hosts report, so the common case costs what it did with three rows.
BASE_CLASSES = inventory_rules.FLAVOR_CLASSES
RESOURCE_COLUMNS = ('capacity', 'used', 'min_unit', 'max_unit',
                    'step_size')

# Fleets have few distinct inventories: compute each capacity once.
_capacity = functools.lru_cache(maxsize=4096)(inventory_rules.capacity)


def _inventory_record(rc, inventory):
    total = inventory['total']
    return (None, rc, total, inventory.get('reserved', 0),
            inventory.get('allocation_ratio', 1.0),
            inventory.get('min_unit', 1), inventory.get('max_unit', total),
            inventory.get('step_size', 1))


class Columns(dict):
    """``{name: (len(classes), count) array}`` and their row names.

    ``classes`` lists the resource class of each row; ``BASE_CLASSES``
    come first, and a class met in a record gets a row at the end
    (``add_classes``). A class without an inventory keeps capacity and
    max_unit 0 on a host, so no request for it passes there.
    """

    def __init__(self, count, classes=BASE_CLASSES):
        super().__init__()
        self.classes = list(classes)
        self.position = {rc: i for i, rc in enumerate(self.classes)}
        shape = (len(self.classes), count)
        for name in RESOURCE_COLUMNS:
            self[name] = np.zeros(shape)

    def add_classes(self, names):
        """Give each of ``names`` not known yet a row (zeros)."""
        new = [rc for rc in dict.fromkeys(names) if rc not in self.position]
        if not new:
            return
        for rc in new:
            self.position[rc] = len(self.classes)
            self.classes.append(rc)
        for name, values in self.items():
            self[name] = np.concatenate(
                [values, np.zeros((len(new), values.shape[1]))])


def resource_columns(count, inventories, inventory_owners, usages=(),
                     usage_owners=()):
    """``Columns(count)`` filled from records.

    ``*_owners[i]`` is the column (host or provider) of record ``i``.
    """
    columns = Columns(count)
    _fill_inventories(columns, inventories, _array(inventory_owners))
    _fill_usages(columns, usages, _array(usage_owners))
    return columns


def _array(owners):
    return np.array(owners, dtype=np.int64).reshape(-1)


def _fill_inventories(columns, records, owners):
    """Write inventory records into ``columns`` at ``owners``.

    ``owners`` is an int array, one column per record; -1 skips the
    record. Fields are pulled out of the records one tuple each
    (``zip``), which numpy turns into arrays without keeping a Python
    object per value.
    """
    if not len(records):
        return
    _, rcs, totals, reserved, ratios, min_units, max_units, steps = zip(
        *records)
    kept, rows, at = _targets(columns, rcs, owners)
    columns['capacity'][rows, at] = np.fromiter(
        map(_capacity, totals, reserved, ratios), dtype=float,
        count=len(totals))[kept]
    for name, values in (('min_unit', min_units), ('max_unit', max_units),
                         ('step_size', steps)):
        columns[name][rows, at] = np.array(values, dtype=float)[kept]


def _fill_usages(columns, records, owners):
    """Write usage records into ``columns``; ``owners`` as above."""
    if not len(records):
        return
    _, rcs, used = zip(*records)
    kept, rows, at = _targets(columns, rcs, owners)
    columns['used'][rows, at] = np.array(used, dtype=float)[kept]


def _targets(columns, rcs, owners):
    """``(kept, rows, at)``: the records to write, then for those their
    resource class row (added when new) and their owner column."""
    kept = owners >= 0
    columns.add_classes(rcs if kept.all() else
                        [rcs[i] for i in np.flatnonzero(kept).tolist()])
    position = columns.position
    rows = np.fromiter((position.get(rc, 0) for rc in rcs), dtype=np.int64,
                       count=len(rcs))
    return kept, rows[kept], owners[kept]


def one_host_columns(inventories, usages):
    """``resource_columns`` of one host given ``{rc: inventory}`` and
    ``{rc: used}`` dicts (a provider re-read on its own)."""
    records = [_inventory_record(rc, inv) for rc, inv in inventories.items()]
    used = [(None, rc, amount) for rc, amount in usages.items()]
    return resource_columns(1, records, [0] * len(records), used,
                            [0] * len(used))


class Traits:
    """Which traits each column (host or provider) has, as booleans.

    ``names`` lists the traits met, ``matrix`` is (len(names), count):
    row ``t`` says which columns have trait ``t``. A filter tests every
    host for a trait with one row, whatever the number of traits.
    """

    def __init__(self, count):
        self.count = count
        self.names = []
        self.position = {}
        # Chunks of (owner columns, trait rows), int arrays.
        self._chunks = []

    def add(self, owners, traits):
        """``owners[i]`` (a column, -1 to skip) has ``traits[i]``."""
        owners = _array(owners)
        kept = owners >= 0
        if not kept.all():
            traits = [traits[i] for i in np.flatnonzero(kept).tolist()]
            owners = owners[kept]
        position = self.position
        for trait in dict.fromkeys(traits):
            if trait not in position:
                position[trait] = len(self.names)
                self.names.append(trait)
        rows = np.fromiter((position[t] for t in traits), dtype=np.int64,
                           count=len(traits))
        self._chunks.append((owners, rows))

    def matrix(self, columns=None):
        """The booleans, of the ``columns`` given (all by default)."""
        matrix = np.zeros((len(self.names), self.count), dtype=bool)
        for owners, rows in self._chunks:
            matrix[rows, owners] = True
        return matrix if columns is None else matrix[:, columns]


class ProviderTable:
    """Every resource provider, as arrays, built from streamed rows.

    The sink of ``usage.load_all``: every ``add_providers`` chunk comes
    before the first ``add_inventories`` or ``add_usages`` one, so the
    resource columns are allocated once, at their full size, and each
    chunk is written straight into them. ``index`` maps a provider uuid
    to its column; ``zones`` and ``generations`` are per column,
    ``columns`` as ``resource_columns``.
    """

    def __init__(self):
        self.index = {}
        self.traits = None   # a ``Traits``, once the providers are read
        self.zones = []
        self.generations = []
        self._zone_names = {}  # one string per zone, not one per row
        self._id_chunks = []
        self._columns = None
        self._sorted_ids = self._column_of_sorted = None

    def add_providers(self, rows):
        for row in rows:
            self.index[row.uuid] = len(self.zones)
            zone = row.availability_zone
            self.zones.append(self._zone_names.setdefault(zone, zone))
            self.generations.append(row.generation)
        self._id_chunks.append(
            np.fromiter((row.id for row in rows), dtype=np.int64,
                        count=len(rows)))

    def add_inventories(self, rows):
        columns = self.columns  # first: ends the providers
        _fill_inventories(columns, rows, self._owners(rows))

    def add_usages(self, rows):
        columns = self.columns
        _fill_usages(columns, rows, self._owners(rows))

    def add_traits(self, rows):
        """``(provider_id, trait)`` rows."""
        self.columns  # ends the providers
        if self.traits is None:
            self.traits = Traits(len(self.zones))
        if len(rows):
            self.traits.add(self._owners(rows), [row[1] for row in rows])

    @property
    def columns(self):
        """The resource columns; the first access ends the providers.

        Rows name their provider by id; the ids are kept sorted in an
        array (``_owners`` finds them with ``searchsorted``) rather than
        in a dict of 100,000 Python ints.
        """
        if self._columns is None:
            ids = np.concatenate(self._id_chunks + [np.zeros(0, np.int64)])
            self._id_chunks = None
            self._column_of_sorted = np.argsort(ids, kind='stable')
            self._sorted_ids = ids[self._column_of_sorted]
            self._columns = Columns(len(ids))
        return self._columns

    def _owners(self, rows):
        """The column of each row's provider; -1 for one not read."""
        ids = np.fromiter((row[0] for row in rows), dtype=np.int64,
                          count=len(rows))
        known = self._sorted_ids
        if not len(known):
            return np.full(len(ids), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(known, ids), len(known) - 1)
        return np.where(known[at] == ids, self._column_of_sorted[at], -1)


class HostBatch:
    """Hosts to add, field by field, with their resources.

    Resources come either from a ``ProviderTable`` (``add_host`` with
    ``provider_column``) or from dicts (``add_host_dict``), not both.
    """

    def __init__(self, providers=None):
        self.providers = providers
        self.provider_columns = []
        self.uuids = []
        self.service_hosts = []
        self.nodenames = []
        self.cell_uuids = []
        self.zones = []
        self.disabled = []
        self.last_seen_up = []  # epoch seconds or None
        self.generations = []
        self._inventories, self._inventory_owners = [], []
        self._usages, self._usage_owners = [], []
        self._traits = []  # (index in the batch, trait) of dict hosts

    def __len__(self):
        return len(self.uuids)

    def add_host(self, uuid, service_host, nodename, cell_uuid, zone,
                 disabled, last_seen_up, generation, provider_column=None):
        """Append one host's fields; returns its index in the batch."""
        self.uuids.append(uuid)
        self.service_hosts.append(service_host)
        # Share the host's string when the node is named like it.
        self.nodenames.append(service_host if nodename in (None,
                                                           service_host)
                              else nodename)
        self.cell_uuids.append(cell_uuid)
        self.zones.append(zone)
        self.disabled.append(bool(disabled))
        self.last_seen_up.append(last_seen_up)
        self.generations.append(generation or 0)
        if provider_column is not None:
            self.provider_columns.append(provider_column)
        return len(self.uuids) - 1

    def add_host_dict(self, host):
        """Append a host given as a ``HostStates.from_hosts`` dict."""
        index = self.add_host(
            host['uuid'], host['service_host'], host.get('nodename'),
            host['cell_uuid'], host.get('availability_zone'),
            host.get('disabled', False), host.get('last_seen_up'),
            host.get('generation'))
        for rc, inventory in (host.get('inventories') or {}).items():
            self._inventory_owners.append(index)
            self._inventories.append(_inventory_record(rc, inventory))
        for rc, used in (host.get('usages') or {}).items():
            self._usage_owners.append(index)
            self._usages.append((None, rc, used))
        self._traits.extend((index, trait)
                            for trait in host.get('traits') or ())
        return index

    def resource_columns(self):
        """The batch's hosts' resources (``Columns``), one column per
        host."""
        if self.providers is not None:
            table = self.providers.columns
            columns = Columns(0, table.classes)
            for name, values in table.items():
                columns[name] = values[:, self.provider_columns]
            return columns
        return resource_columns(len(self), self._inventories,
                                self._inventory_owners, self._usages,
                                self._usage_owners)

    def trait_columns(self):
        """``(trait names, booleans (len(names), len(self)))``."""
        if self.providers is not None:
            traits = self.providers.traits
            if traits is None:
                return [], np.zeros((0, len(self)), dtype=bool)
            return traits.names, traits.matrix(self.provider_columns)
        traits = Traits(len(self))
        if self._traits:
            owners, names = zip(*self._traits)
            traits.add(owners, names)
        return traits.names, traits.matrix()
