"""Synthetic fleets for the scheduler benchmarks, written straight to SQL.

A fleet is laid out as a cells v2 deployment has it since the scheduler
has two levels: the API database holds the cell mappings and one host
mapping per host; each cell's database holds its compute nodes, their
heartbeating compute services and the host resources -- one resource
provider per node with VCPU, MEMORY_MB and DISK_GB inventories (and
custom classes and traits when asked: ``generic_fleet``; no
DISK_GB when the disk is in shared pools: ``scheduler_pools``), and
later the allocations -- which only that cell's schedulers read and
write. Rows go in with bulk inserts and explicit ids: building 100,000
hosts through the objects would take longer than the benchmark itself.

Zones: with ``zone_levels`` L and ``fan_out`` F the API database also
holds a tree of zones -- F roots, each with F children, L levels deep
(F**L leaves) -- and every cell mapping names a leaf, the cells spread
evenly over the leaves in contiguous blocks (neighbouring cells share
their zones). The rows go in only where the API database has a
``zones`` table and ``cell_mappings.zone_id``: on a revision without
them the same fleet is built flat, and ``build`` says how many zones it
wrote, so that "before" and "after" runs take the same command.

Databases are SQLite files in a directory, or throw-away databases on a
MariaDB/MySQL or PostgreSQL server named by a server URL. SQLite files
are written without a journal or fsync (``_fast_sqlite``): a fleet that
a crash would leave half-built is thrown away anyway, and writing a
million hosts with both is several times slower.
"""

import datetime
import os
import uuid as uuid_mod

import sqlalchemy as sa

import generic_fleet
import scheduler_pools

from cellboot.db.api import models as api_models
from cellboot.db.cell import models as cell_models
from cellboot.scheduler import host_state_cache
from cellboot.scheduler.resources import inventory

# Every benchmark request asks for this; hosts are sized in its multiples.
FLAVOR = {'vcpus': 2, 'memory_mb': 4096, 'root_gb': 40, 'flavorid': 'b1'}
SLOT = {'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 40}
# Throughput fleets: 32 instances of FLAVOR per host (VCPU binds first).
ROOMY_HOST = {'VCPU': 64, 'MEMORY_MB': 262144, 'DISK_GB': 4000}
BATCH = 10000  # rows per INSERT batch


class Databases:
    """The API and cell database URLs of one benchmark run.

    ``cell_names`` defaults to ``cell1`` ... ``cellN``; a name given
    twice is one database.
    """

    def __init__(self, cells, server_url=None, workdir=None, prefix=None,
                 cell_names=None):
        self.cells = cells
        self.server_url = server_url
        self.workdir = workdir
        self.prefix = prefix or 'cbbench_' + uuid_mod.uuid4().hex[:8]
        self.cell_names = list(cell_names or
                               [f'cell{i + 1}' for i in range(cells)])
        names = ['api'] + self.cell_names
        if server_url is None:
            self.backend = 'sqlite'
            self.urls = {name: f'sqlite:///{workdir}/{name}.sqlite'
                         for name in names}
        else:
            server = sa.engine.make_url(server_url)
            self.backend = server.get_backend_name()
            self.urls = {
                name: server.set(database=f'{self.prefix}_{name}')
                .render_as_string(hide_password=False)
                for name in names}

    def args(self):
        """What another process needs to name the same databases."""
        return (self.cells, self.server_url, self.workdir, self.prefix,
                self.cell_names)

    @property
    def api_url(self):
        return self.urls['api']

    @property
    def cell_urls(self):
        return [self.urls[name] for name in self.cell_names]

    def _server_do(self, statements):
        url = sa.engine.make_url(self.server_url)
        if self.backend == 'postgresql':
            url = url.set(database='postgres')
        engine = sa.create_engine(url, isolation_level='AUTOCOMMIT')
        try:
            with engine.connect() as conn:
                for statement in statements:
                    conn.execute(sa.text(statement))
        finally:
            engine.dispose()

    def create(self):
        """Create the databases and their tables (from the models)."""
        if self.backend != 'sqlite':
            self._server_do(f'CREATE DATABASE {self.prefix}_{name}'
                            for name in self.urls)
        for name, url in self.urls.items():
            metadata = (api_models if name == 'api'
                        else cell_models).Base.metadata
            engine = _engine(url)
            try:
                metadata.create_all(engine)
            finally:
                engine.dispose()

    def drop(self):
        if self.backend == 'sqlite':
            for url in self.urls.values():
                path = sa.engine.make_url(url).database
                for suffix in ('', '-wal', '-shm'):
                    if os.path.exists(path + suffix):
                        os.remove(path + suffix)
        else:
            self._server_do(f'DROP DATABASE IF EXISTS {self.prefix}_{name}'
                            for name in self.urls)


def _fast_sqlite(dbapi_conn, _record):
    cursor = dbapi_conn.cursor()
    cursor.execute('PRAGMA journal_mode=OFF')
    cursor.execute('PRAGMA synchronous=OFF')
    cursor.close()


def _engine(url):
    """An engine to build with (SQLite: no journal, no fsync)."""
    engine = sa.create_engine(url)
    if engine.dialect.name == 'sqlite':
        sa.event.listen(engine, 'connect', _fast_sqlite)
    return engine


def _insert(conn, table, rows):
    if not rows:
        return
    for start in range(0, len(rows), BATCH):
        conn.execute(table.insert(), rows[start:start + BATCH])


def host_inventories(hosts, capacity=None):
    """Per host, ``{rc: total}``: roomy, or ``capacity`` slots in all.

    With ``capacity`` the fleet holds exactly that many FLAVOR instances:
    slots are spread evenly, the first hosts taking the remainder; a host
    left without a slot gets an inventory too small for one.
    """
    if capacity is None:
        return [ROOMY_HOST] * hosts
    sizes = []
    for i in range(hosts):
        slots = capacity // hosts + (1 if i < capacity % hosts else 0)
        if slots:
            sizes.append({rc: amount * slots for rc, amount in SLOT.items()})
        else:
            sizes.append({'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10})
    return sizes


class CellRows:
    """The rows of one cell's database, ids counted per cell."""

    def __init__(self):
        self.nodes, self.services = [], []
        self.providers, self.inventories = [], []
        self.traits = []

    def add(self, uuid, name, sizes, zone, now, extra=None, traits=()):
        """One host; ``extra`` ({class: total}) and ``traits`` are its
        generic resources (``generic_fleet``)."""
        self.nodes.append({
            'uuid': uuid, 'host': name, 'hypervisor_hostname': name,
            'vcpus': sizes['VCPU'], 'memory_mb': sizes['MEMORY_MB'],
            'local_gb': sizes.get('DISK_GB', 0), 'cpu_allocation_ratio': 1.0,
            'ram_allocation_ratio': 1.0, 'disk_allocation_ratio': 1.0,
            'mapped': True})
        self.services.append({
            'host': name, 'binary': host_state_cache.COMPUTE_BINARY,
            'disabled': False, 'last_seen_up': now, 'report_count': 1})
        provider_id = len(self.providers) + 1
        self.providers.append({'id': provider_id, 'uuid': uuid, 'name': name,
                               'availability_zone': zone, 'generation': 1})
        self.inventories.extend({
            'resource_provider_id': provider_id, 'resource_class': rc,
            'total': total, 'reserved': 0, 'min_unit': 1,
            'max_unit': total, 'step_size': 1, 'allocation_ratio': 1.0}
            for rc, total in dict(sizes, **(extra or {})).items())
        self.traits.extend({'resource_provider_id': provider_id,
                            'trait': trait} for trait in traits)

    def write(self, url):
        engine = _engine(url)
        try:
            with engine.begin() as conn:
                for model, rows in (
                        (cell_models.ComputeNode, self.nodes),
                        (cell_models.Service, self.services),
                        (cell_models.ResourceProvider, self.providers),
                        (cell_models.Inventory, self.inventories),
                        (cell_models.ProviderTrait, self.traits)):
                    _insert(conn, model.__table__, rows)
        finally:
            engine.dispose()


def zone_rows(levels, fan_out):
    """The zones of a ``levels`` deep tree, ``fan_out`` children to a
    node (and ``fan_out`` roots), as rows; the leaves come last."""
    now = datetime.datetime.utcnow()
    rows, parents = [], [None]
    for level in range(levels):
        children = []
        for parent in parents:
            for branch in range(fan_out):
                zone_id = len(rows) + 1
                prefix = (rows[parent - 1]['name'] + '.' if parent
                          else '')
                rows.append({'id': zone_id, 'uuid': str(uuid_mod.uuid4()),
                             'name': f'{prefix}z{branch + 1}',
                             'parent_id': parent, 'created_at': now,
                             'updated_at': now})
                children.append(zone_id)
        parents = children
    return rows


def leaf_of(cell, cells, leaves):
    """The leaf (index into ``leaves``) of cell index ``cell``: the cells
    in contiguous, as even as possible, blocks."""
    return leaves[cell * len(leaves) // cells]


def has_zones():
    """Whether this revision's API database has zones to write."""
    tables = api_models.Base.metadata.tables
    return ('zones' in tables
            and 'zone_id' in tables['cell_mappings'].c)


def build(dbs, hosts, cells, capacity=None, zone_levels=0, fan_out=1,
          extra_classes=0, traits=0, pools_per_zone=0):
    """Write a fleet of ``hosts`` spread round-robin over ``cells``,
    under ``zone_levels`` of zones (see the module docstring), with
    ``extra_classes`` and ``traits`` (``generic_fleet``) and the
    disk in ``pools_per_zone`` pools per top zone (``scheduler_pools``);
    returns the number of zones written.

    One cell's rows at a time are held in memory: a million hosts would
    otherwise take gigabytes of dicts before the first insert.
    """
    now = datetime.datetime.utcnow()
    sizes = host_inventories(hosts, capacity)
    host_sizes = scheduler_pools.host_sizes(sizes, pools_per_zone)
    zone_of, zones = write_zones(dbs, cells, zone_levels, fan_out)
    api_engine = _engine(dbs.api_url)
    try:
        for cell in range(cells):
            rows = CellRows()
            for i in range(cell, hosts, cells):
                extra, names = generic_fleet.host_extra(
                    i, extra_classes, traits)
                rows.add(str(uuid_mod.uuid4()), f'c{cell + 1}-h{i:07d}',
                         host_sizes[i], 'nova', now, extra, names)
            with api_engine.begin() as conn:
                _write_mappings(conn, dbs, [cell], {cell: rows}, zone_of)
            rows.write(dbs.cell_urls[cell])
    finally:
        api_engine.dispose()
    roots = [f'z{b + 1}' for b in range(fan_out)] if zones else []
    scheduler_pools.create(dbs.api_url, sizes, pools_per_zone,
                           dbs.cell_names, roots)
    return zones


def write_zones(dbs, cells, levels, fan_out):
    """The zone tree in the API database, if it has one (``has_zones``):
    ``({cell index: leaf zone id}, zones written)``, or ``(None, 0)``."""
    if not levels or not has_zones():
        return None, 0
    zones = zone_rows(levels, fan_out)
    engine = _engine(dbs.api_url)
    try:
        with engine.begin() as conn:
            _insert(conn, api_models.Base.metadata.tables['zones'], zones)
    finally:
        engine.dispose()
    leaves = [zone['id'] for zone in zones[-fan_out ** levels:]]
    return {cell: leaf_of(cell, cells, leaves)
            for cell in range(cells)}, len(zones)


def _write_mappings(conn, dbs, cells, per_cell, zone_of=None):
    mappings = [{'id': c + 1, 'uuid': str(uuid_mod.uuid4()),
                 'name': dbs.cell_names[c],
                 'database_connection': dbs.cell_urls[c],
                 'transport_url': 'fake://', 'disabled': False}
                for c in cells]
    if zone_of is not None:
        for mapping, c in zip(mappings, cells):
            mapping['zone_id'] = zone_of[c]
    _insert(conn, api_models.CellMapping.__table__, mappings)
    _insert(conn, api_models.HostMapping.__table__, [
        {'cell_id': c + 1, 'host': node['host']}
        for c in cells for node in per_cell[c].nodes])


def write_mappings(dbs, cells, per_cell, zone_of=None):
    """Map ``cells`` (indexes into ``dbs.cell_names``) and their hosts
    (``per_cell[i]``, a CellRows) in the API database; ``zone_of``
    (cell index -> zone id) puts the cells in zones."""
    engine = _engine(dbs.api_url)
    try:
        with engine.begin() as conn:
            _write_mappings(conn, dbs, cells, per_cell, zone_of)
    finally:
        engine.dispose()


def set_transport_urls(dbs, urls):
    """Point cell mappings at their buses: ``urls`` maps a cell name to
    its transport URL (the fleet writes ``fake://``, enough for
    schedulers of one process; services in processes need a broker)."""
    cells = api_models.CellMapping.__table__
    engine = _engine(dbs.api_url)
    try:
        with engine.begin() as conn:
            for name, url in urls.items():
                conn.execute(cells.update().where(cells.c.name == name)
                             .values(transport_url=url))
    finally:
        engine.dispose()


def _overcommitted_in(url):
    inv = cell_models.Inventory.__table__
    alloc = cell_models.Allocation.__table__
    used = sa.select(
        alloc.c.resource_provider_id, alloc.c.resource_class,
        sa.func.sum(alloc.c.used).label('used'),
    ).group_by(alloc.c.resource_provider_id,
               alloc.c.resource_class).subquery()
    query = sa.select(
        inv.c.resource_provider_id, inv.c.total, inv.c.reserved,
        inv.c.allocation_ratio, used.c.used,
    ).select_from(inv.join(used, sa.and_(
        used.c.resource_provider_id == inv.c.resource_provider_id,
        used.c.resource_class == inv.c.resource_class)))
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return len({row.resource_provider_id
                        for row in conn.execute(query)
                        if row.used > inventory.capacity(
                            row.total, row.reserved, row.allocation_ratio)})
    finally:
        engine.dispose()


def overcommitted_providers(cell_urls):
    """How many providers, in all the cells, hold more than their
    capacity of some class (read from each cell's allocations)."""
    return sum(_overcommitted_in(url) for url in cell_urls)


def consumers(cell_urls):
    """How many distinct consumers hold allocations, over every cell."""
    alloc = cell_models.Allocation.__table__
    total = 0
    for url in cell_urls:
        engine = sa.create_engine(url)
        try:
            with engine.connect() as conn:
                total += conn.execute(sa.select(sa.func.count(
                    sa.distinct(alloc.c.consumer_id)))).scalar()
        finally:
            engine.dispose()
    return total
