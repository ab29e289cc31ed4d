"""Hosts on their way into ``HostStates``: parallel lists, then columns.

A full load brings 100,000 providers, 300,000 inventory rows and their
usages. Python objects for all of them at once (a dict per host, or just
the SQLAlchemy rows) cost several times the host states themselves, so
the rows are turned into arrays as soon as they are read
(``ProviderTable``) and dropped; each host then only carries its
provider's row number. Hosts given as dicts (tests, provider updates)
take the same road, so there is one way to turn an inventory into
capacity (``resource_columns``).

Resource records are sequences shaped like the rows of
``usage.ResourceSnapshot``: ``(provider_id, resource_class, total,
reserved, allocation_ratio, min_unit, max_unit, step_size)`` for
inventories and ``(provider_id, resource_class, used)`` for usages; the
provider id is not read (each record comes with its owner's index).
"""

import functools

import numpy as np

from cellboot.scheduler.resources import inventory as inventory_rules

RESOURCE_CLASSES = inventory_rules.RESOURCE_CLASSES
RC_POSITION = {rc: i for i, rc in enumerate(RESOURCE_CLASSES)}
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


def resource_columns(count, inventories, inventory_owners, usages=(),
                     usage_owners=()):
    """``{name: (len(RESOURCE_CLASSES), count) array}`` from records.

    ``*_owners[i]`` is the column (host or provider) of record ``i``. A
    class without an inventory keeps capacity and max_unit 0, so no
    request for it passes. Fields are pulled out with ``np.fromiter``:
    a list per field would cost 300,000 Python references each at a full
    load, while the rows themselves are still in memory.
    """
    shape = (len(RESOURCE_CLASSES), count)
    columns = {name: np.zeros(shape) for name in RESOURCE_COLUMNS}
    rcs, owners, field = _records(inventories, inventory_owners)
    if len(rcs):
        columns['capacity'][rcs, owners] = field(
            lambda row: _capacity(row[2], row[3], row[4]))
        for name, i in (('min_unit', 5), ('max_unit', 6), ('step_size', 7)):
            columns[name][rcs, owners] = field(lambda row, i=i: row[i])
    rcs, owners, field = _records(usages, usage_owners)
    if len(rcs):
        columns['used'][rcs, owners] = field(lambda row: row[2])
    return columns


def _records(rows, owners):
    """``(rcs, owners, field)`` for the rows of tracked classes.

    ``field(get)`` returns ``get(row)`` of those rows as a float array.
    """
    count = len(rows)
    rcs = np.fromiter((RC_POSITION.get(row[1], -1) for row in rows),
                      dtype=np.int64, count=count)
    owners = np.fromiter(owners, dtype=np.int64, count=count)
    kept = rcs >= 0

    def field(get):
        values = np.fromiter((get(row) for row in rows), dtype=float,
                             count=count)
        return values[kept]

    return rcs[kept], owners[kept], field


def one_host_columns(inventories, usages):
    """``resource_columns`` of one host given ``{rc: inventory}`` and
    ``{rc: used}`` dicts (a provider re-read on its own)."""
    records = [_inventory_record(rc, inv) for rc, inv in inventories.items()]
    used = [(None, rc, amount) for rc, amount in usages.items()]
    return resource_columns(1, records, [0] * len(records), used,
                            [0] * len(used))


class ProviderTable:
    """Every resource provider of a ``usage.ResourceSnapshot``, as arrays.

    ``index`` maps a provider uuid to its column; ``zones`` and
    ``generations`` are per column, ``columns`` as ``resource_columns``.
    The snapshot's rows can be dropped once the table is built.
    """

    def __init__(self, snapshot):
        column_of_id = {}
        self.index = {}
        self.zones = []
        self.generations = []
        for column, row in enumerate(snapshot.providers):
            column_of_id[row.id] = column
            self.index[row.uuid] = column
            self.zones.append(row.availability_zone)
            self.generations.append(row.generation)
        self.columns = resource_columns(
            len(self.zones), snapshot.inventories,
            (column_of_id[row.provider_id] for row in snapshot.inventories),
            snapshot.usages,
            (column_of_id[row.provider_id] for row in snapshot.usages))


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
        return index

    def resource_columns(self):
        """The batch's hosts' resources, one column per host."""
        if self.providers is not None:
            return {name: values[:, self.provider_columns]
                    for name, values in self.providers.columns.items()}
        return resource_columns(len(self), self._inventories,
                                self._inventory_owners, self._usages,
                                self._usage_owners)
