"""The invariant checker: the invariants of
docs/architecture.md, read from the databases.

``check_invariants(ctx)`` reads the API database, every mapped cell's
database and the flow databases and returns one line per violation; an
empty list means every invariant holds. Call it at a quiet point (no
flow, compute build or cast in flight), after every scenario::

    self.assertEqual([], invariants.check_invariants(ctx))

It reads the tables directly, not through the domain objects, so that a
bug in an object cannot hide the state it got wrong. The invariants:

1. every instance lives in exactly one cell (cell0 included), where its
   mapping points; no mapping has a NULL cell, none points at a cell
   that lacks the instance, and no live instance is unmapped; a settled
   instance is ACTIVE or ERROR (none is left handed back by its cell,
   unmoved), and ERROR always has a fault; no build
   request is left (it outlived its instance, or was never built);
2. allocations exist exactly for the live instances that are not in
   ERROR, on the provider of their host and node, for their flavor, in
   the database of their cell (none is left in the API database but on
   a shared pool), less the classes a shared pool gives them; no
   provider's usage exceeds (total - reserved) x allocation_ratio;
   shared pools (API database): no pool's usage exceeds its capacity,
   and every pool allocation's consumer is a live, non-ERROR instance
   or a build request still in progress; a placed allocation request
   (``allocation_requests``, not a server) holds exactly its resources
   on its provider (a pool or a host), and one that is gone holds
   nothing;
3. every flow (flow database, and every cell's reschedule flows) ended
   SUCCESS or REVERTED, or FAILURE with an operator's abandon note
   (``cellboot.flowrun.abandons``): its instances are settled by the
   sweeps, which 1. and 2. check (an abandoned flow's leaked claim or
   unsettled build still shows there).
"""

import collections

from oslo_serialization import jsonutils
import sqlalchemy as sa
from taskflow.persistence.backends.sqlalchemy import tables as tf_tables
from taskflow import states

from cellboot.conf import CONF
from cellboot.db.api import connection as api_connection
from cellboot.db.api import models as api_models
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot.flowrun import abandons
from cellboot.flowrun import backend as flow_db

SETTLED_STATES = ('active', 'error')
# A build its cell handed back to the super conductors, to be moved to
# another cell (the cross-cell flow): never a quiet point's state.
HANDED_BACK = 'handed-back'
FINISHED_FLOW_STATES = (states.SUCCESS, states.REVERTED)

# Flavor fields and the resource classes they are claimed as.
FLAVOR_RESOURCES = (('vcpus', 'VCPU'), ('memory_mb', 'MEMORY_MB'),
                    ('root_gb', 'DISK_GB'))

_API = api_models.Base.metadata.tables
_CELL = cell_models.Base.metadata.tables
_FLOWS = tf_tables.fetch(sa.MetaData()).flowdetails

Instance = collections.namedtuple(
    'Instance', 'uuid cell vm_state task_state deleted host node flavor')


def _rows(engine, query):
    with engine.connect() as conn:
        return conn.execute(query).all()


class Snapshot:
    """Everything the invariants are about, read once."""

    def __init__(self):
        api = api_connection.get_engine()
        cells = _API['cell_mappings']
        self.cells = {row.id: row for row in _rows(api, sa.select(cells))}
        self.cell_names = {row.uuid: row.name for row in self.cells.values()}
        mappings = _API['instance_mappings']
        self.mappings = {
            row.instance_uuid: (self.cells[row.cell_id].uuid
                                if row.cell_id is not None else None)
            for row in _rows(api, sa.select(mappings))}
        self.build_requests = [row.instance_uuid for row in _rows(
            api, sa.select(_API['build_requests'].c.instance_uuid))]
        # Placed allocation requests (not servers): {uuid: (provider
        # uuid, kind, {rc: amount})}.
        requests = _API['allocation_requests']
        self.allocation_requests = {
            row.uuid: (row.provider_uuid, row.provider_kind,
                       jsonutils.loads(row.request)['resources'])
            for row in _rows(api, sa.select(requests).where(
                requests.c.status == 'placed'))}
        # Host resources left in the API database (before the move to
        # the cells' databases): none may be.
        providers = _API['resource_providers']
        pools = {row.id: row.uuid for row in _rows(api, sa.select(
            providers.c.id, providers.c.uuid).where(
                providers.c.is_pool == sa.true()))}
        self.api_allocations = []
        # Shared pools: {consumer: {pool: {rc: amount}}} and their usage.
        self.pool_allocations = collections.defaultdict(dict)
        self.pool_usage = collections.defaultdict(int)
        for row in _rows(api, sa.select(_API['allocations'])):
            pool = pools.get(row.resource_provider_id)
            if pool is None:
                self.api_allocations.append(row.consumer_id)
                continue
            held = self.pool_allocations[row.consumer_id].setdefault(pool,
                                                                     {})
            held[row.resource_class] = (held.get(row.resource_class, 0)
                                        + row.used)
            self.pool_usage[(pool, row.resource_class)] += row.used
        self.pool_inventories = [
            (pools[row.resource_provider_id], row)
            for row in _rows(api, sa.select(_API['inventories']))
            if row.resource_provider_id in pools]
        self.allocations = collections.defaultdict(dict)
        self.usage = collections.defaultdict(int)
        self.inventories = []
        self.instances = []
        self.faults = set()
        self.nodes = {}
        for cell in self.cells.values():
            self._read_cell(cell)

    def _read_cell(self, cell):
        engine = cell_connection.get_engine(cell.database_connection)
        for row in _rows(engine, sa.select(_CELL['instances'])):
            flavor = row.flavor
            self.instances.append(Instance(
                row.uuid, cell.uuid, row.vm_state, row.task_state,
                bool(row.deleted),
                row.host, row.node,
                jsonutils.loads(flavor) if flavor else {}))
        faults = _CELL['instance_faults']
        self.faults.update((cell.uuid, row.instance_uuid) for row in _rows(
            engine, sa.select(faults.c.instance_uuid)))
        nodes = _CELL['compute_nodes']
        for row in _rows(engine, sa.select(nodes)):
            self.nodes[(cell.uuid, row.host, row.hypervisor_hostname)] = \
                row.uuid
        providers = {row.id: row.uuid for row in _rows(
            engine, sa.select(_CELL['resource_providers']))}
        for row in _rows(engine, sa.select(_CELL['allocations'])):
            provider = providers[row.resource_provider_id]
            held = self.allocations[row.consumer_id].setdefault(provider, {})
            held[row.resource_class] = (held.get(row.resource_class, 0) +
                                        row.used)
            self.usage[(provider, row.resource_class)] += row.used
        self.inventories.extend(
            (providers[row.resource_provider_id], row)
            for row in _rows(engine, sa.select(_CELL['inventories'])))

    def cell_name(self, cell_uuid):
        return self.cell_names.get(cell_uuid, cell_uuid)


def _instance_violations(snap):
    found = []
    live = collections.defaultdict(list)
    rows = collections.defaultdict(list)
    for inst in snap.instances:
        rows[inst.uuid].append(inst)
        if not inst.deleted:
            live[inst.uuid].append(inst)
    for uuid, insts in sorted(live.items()):
        if len(insts) > 1:
            found.append(f'instance {uuid} is live in {len(insts)} cells: '
                         + ', '.join(snap.cell_name(i.cell) for i in insts))
        for inst in insts:
            where = snap.cell_name(inst.cell)
            mapped = snap.mappings.get(uuid, False)
            if mapped is False:
                found.append(f'instance {uuid} lives in cell {where} but '
                             f'has no instance mapping')
            elif mapped != inst.cell:
                found.append(f'instance {uuid} lives in cell {where} but '
                             f'is mapped to cell '
                             f'{snap.cell_name(mapped) if mapped else None}')
            if inst.task_state == HANDED_BACK:
                found.append(f'instance {uuid} was handed back by cell '
                             f'{where} and never moved to another cell')
            elif inst.vm_state not in SETTLED_STATES:
                found.append(f'instance {uuid} in cell {where} is still '
                             f'{inst.vm_state}, not active or error')
            if inst.vm_state == 'error' and \
                    (inst.cell, uuid) not in snap.faults:
                found.append(f'instance {uuid} in cell {where} is in ERROR '
                             f'without a fault')
    for uuid, cell_uuid in sorted(snap.mappings.items()):
        if cell_uuid is None:
            found.append(f'instance mapping of {uuid} has no cell (NULL)')
        elif not any(i.cell == cell_uuid for i in rows.get(uuid, ())):
            found.append(f'instance mapping of {uuid} points at cell '
                         f'{snap.cell_name(cell_uuid)}, which has no such '
                         f'instance')
    for uuid in sorted(snap.build_requests):
        if live.get(uuid):
            found.append(f'build request of {uuid} outlived the creation '
                         f'of its instance in cell '
                         f'{snap.cell_name(live[uuid][0].cell)}')
        else:
            found.append(f'build request of {uuid} is left and its '
                         f'instance was never created in a cell')
    return found


def _expected_allocations(snap, found):
    """{consumer: {provider: {rc: amount}}} of the live, non-ERROR ones."""
    expected = {}
    for inst in snap.instances:
        if inst.deleted or inst.vm_state == 'error':
            continue
        provider = snap.nodes.get((inst.cell, inst.host, inst.node))
        if provider is None:
            found.append(f'instance {inst.uuid} ({inst.vm_state}) is on '
                         f'host {inst.host} node {inst.node}, which is no '
                         f'compute node of cell {snap.cell_name(inst.cell)}')
            continue
        pooled = {rc for held in snap.pool_allocations.get(
            inst.uuid, {}).values() for rc in held}
        resources = {rc: inst.flavor.get(field) for field, rc in
                     FLAVOR_RESOURCES
                     if inst.flavor.get(field) and rc not in pooled}
        expected[inst.uuid] = {provider: resources}
    for uuid, (provider, kind, resources) in \
            snap.allocation_requests.items():
        if kind == 'host':
            expected[uuid] = {provider: resources}
    return expected


def _allocation_violations(snap):
    found = [f'consumer {consumer} holds allocations in the API database'
             for consumer in sorted(set(snap.api_allocations))]
    expected = _expected_allocations(snap, found)
    for consumer in sorted(set(expected) | set(snap.allocations)):
        want = expected.get(consumer)
        held = snap.allocations.get(consumer)
        if want is None:
            found.append(f'consumer {consumer} holds allocations {held} '
                         f'but is no live, non-ERROR instance')
        elif held != want:
            found.append(f'instance {consumer} holds allocations {held or {}}'
                         f', expected {want}')
    for provider, inv in snap.inventories:
        capacity = (inv.total - inv.reserved) * inv.allocation_ratio
        used = snap.usage.get((provider, inv.resource_class), 0)
        if used > capacity:
            found.append(f'provider {provider} is over-committed on '
                         f'{inv.resource_class}: {used} used of a capacity '
                         f'of {capacity:g}')
    return found


def _pool_violations(snap):
    found = []
    live = {inst.uuid for inst in snap.instances
            if not inst.deleted and inst.vm_state != 'error'}
    building = set(snap.build_requests)
    for consumer, held in sorted(snap.pool_allocations.items()):
        request = snap.allocation_requests.get(consumer)
        if request is not None:
            provider, kind, resources = request
            if kind != 'pool' or held != {provider: resources}:
                found.append(f'allocation request {consumer} holds pool '
                             f'allocations {held}, expected '
                             f'{resources} on its {kind} {provider}')
            continue
        if consumer not in live and consumer not in building:
            found.append(f'consumer {consumer} holds pool allocations '
                         f'{held} but is no live, non-ERROR instance nor '
                         f'a build in progress')
    for pool, inv in snap.pool_inventories:
        capacity = (inv.total - inv.reserved) * inv.allocation_ratio
        used = snap.pool_usage.get((pool, inv.resource_class), 0)
        if used > capacity:
            found.append(f'pool {pool} is over-committed on '
                         f'{inv.resource_class}: {used} used of a capacity '
                         f'of {capacity:g}')
    return found


def flow_databases(snap=None):
    """(location, URL) of every database that holds persisted flows."""
    snap = snap or Snapshot()
    found = [('flow database', CONF.flow_persistence.connection)]
    for cell in snap.cells.values():
        found.append((f'cell {cell.name}', cell.database_connection))
    return found


def _flow_violations(snap):
    found = []
    for location, url in flow_databases(snap):
        engine = flow_db.get_backend(url).engine
        if not sa.inspect(engine).has_table(_FLOWS.name):
            continue  # TaskFlow's tables were never synced: no flows
        for row in _rows(engine, sa.select(_FLOWS).order_by(
                _FLOWS.c.created_at)):
            if row.state == states.FAILURE and abandons.read(row.meta):
                continue
            if row.state not in FINISHED_FLOW_STATES:
                found.append(f'flow {row.name} {row.uuid} in the {location}'
                             f' is {row.state}, not SUCCESS or REVERTED')
    return found


def check_invariants(ctx=None):
    """Every violation of the documented invariants, as one line each.

    ``ctx`` is accepted for symmetry with the code under test; the
    checker reads the configured API database and the cells it maps.
    """
    snap = Snapshot()
    return (_instance_violations(snap) + _allocation_violations(snap) +
            _pool_violations(snap) + _flow_violations(snap))
