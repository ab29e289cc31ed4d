"""Where ``near`` and ``far`` hints allow a request to go.

A ``near`` hint names something the project already holds -- an
allocation (a row of ``allocation_requests`` placed on a shared pool or
on a host) or a server -- and asks for the new request to be reachable
from it; ``far`` asks for the opposite. Only the API database knows
where those are, so this is read at the API level once per request
(``routing.CellsRequest.resolve``) and by whatever places allocations
(``/os-allocations``): both get the same ``Constraints``.

What each named thing means:

* an allocation on a pool: the cells the pool serves, and the pool;
* an allocation on a host: the host's cell, the pools serving that
  cell, and the host itself (preferred, when it can take the request);
* a server: its cell, and the pools serving that cell.

Several ``near`` uuids must all be satisfied (the cells and pools near
every one of them); ``far`` avoids the union. Only the request's own
project is looked at, and an allocation only once ``placed``: anything
else -- another project's, still placing, unknown, not a uuid -- is
treated exactly as an unknown uuid, as ``same_host`` treats one: a
``near`` naming it leaves no cell (the request finds no valid host), a
``far`` naming it avoids nothing. So the hints never tell whether
another tenant's uuid exists.
"""

import dataclasses

from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.api import models
from cellboot.objects import cell_mapping
from cellboot.objects import instance_mapping
from cellboot.scheduler.pools import scopes
from cellboot.scheduler.resources import tables

STORE = tables.API
PLACED = 'placed'
POOL = 'pool'
HOST = 'host'


@dataclasses.dataclass(frozen=True)
class Constraints:
    """What ``near``/``far`` allow. ``cells_in``/``pools_in`` are None
    when nothing was asked ``near`` (any), else the only ones allowed
    (possibly none); ``cells_out``/``pools_out`` are to be avoided;
    ``hosts_in`` are host provider uuids to prefer."""

    cells_in: frozenset = None
    cells_out: frozenset = frozenset()
    pools_in: frozenset = None
    pools_out: frozenset = frozenset()
    hosts_in: frozenset = frozenset()

    def allows_cell(self, cell_uuid):
        return (cell_uuid not in self.cells_out
                and (self.cells_in is None or cell_uuid in self.cells_in))

    def allows_pool(self, pool_uuid):
        return (pool_uuid not in self.pools_out
                and (self.pools_in is None or pool_uuid in self.pools_in))


NOTHING = Constraints()


def _uuids(values):
    return sorted({v for v in values
                   if isinstance(v, str) and uuidutils.is_uuid_like(v)})


def _pools_serving(served, cells):
    return {pool for pool, served_cells in served.items()
            if not served_cells.isdisjoint(cells)}


@STORE.reader
def _read(context, project_id, uuids):
    """``({uuid: (cells, pools, hosts)}, {pool: its cells})``: the
    project's placed allocations among ``uuids``, as the module says."""
    session = context.session
    pools = {row.id: row.uuid for row in session.execute(sa.select(
        STORE.providers.c.id, STORE.providers.c.uuid).where(
            STORE.providers.c.is_pool == sa.true()))}
    served = {pools[pid]: frozenset(cells) for pid, cells
              in scopes.served_cells(session).items() if pid in pools}
    requests = models.AllocationRequest
    cells = models.CellMapping
    found = {}
    for row in session.execute(sa.select(
            requests.uuid, requests.provider_uuid, requests.provider_kind,
            cells.uuid.label('cell_uuid')).outerjoin(
                cells, cells.id == requests.cell_id).where(
            requests.uuid.in_(uuids), requests.project_id == project_id,
            requests.status == PLACED)):
        if row.provider_kind == POOL:
            found[row.uuid] = (served.get(row.provider_uuid, frozenset()),
                               {row.provider_uuid}, set())
        elif row.provider_kind == HOST and row.cell_uuid:
            found[row.uuid] = ({row.cell_uuid},
                               _pools_serving(served, {row.cell_uuid}),
                               {row.provider_uuid})
    return found, served


def _servers(context, project_id, uuids):
    """``{server uuid: cell uuid}`` of the project's placed servers."""
    own = instance_mapping.InstanceMapping.owned_by(context, project_id,
                                                    uuids)
    if not own:
        return {}
    mappings = instance_mapping.InstanceMapping.get_by_instance_uuids(
        context, sorted(own))
    return {uuid: m.cell_mapping.uuid for uuid, m in mappings.items()
            if m.cell_mapping is not None
            and m.cell_mapping.uuid != cell_mapping.CELL0_UUID}


def constraints(context, project_id, near=(), far=()):
    """The ``Constraints`` of ``near`` and ``far`` (uuids of the
    project's allocations or servers) for a request of ``project_id``."""
    near = [v if isinstance(v, str) else '' for v in near or ()]
    far = [v if isinstance(v, str) else '' for v in far or ()]
    asked = _uuids(near + far)
    found = {}
    if project_id and asked:
        found, served = _read(context, project_id, asked)
        rest = [uuid for uuid in asked if uuid not in found]
        for uuid, cell in _servers(context, project_id, rest).items():
            found[uuid] = ({cell}, _pools_serving(served, {cell}), set())
    cells_in = pools_in = None
    hosts_in = set()
    for uuid in near:
        cells, pools, hosts = found.get(uuid, (set(), set(), set()))
        cells_in = set(cells) if cells_in is None else cells_in & cells
        pools_in = set(pools) if pools_in is None else pools_in & pools
        hosts_in |= hosts
    cells_out, pools_out = set(), set()
    for uuid in far:
        cells, pools, _hosts = found.get(uuid, (set(), set(), set()))
        cells_out |= cells
        pools_out |= pools
    return Constraints(
        cells_in=None if cells_in is None else frozenset(cells_in),
        cells_out=frozenset(cells_out),
        pools_in=None if pools_in is None else frozenset(pools_in),
        pools_out=frozenset(pools_out), hosts_in=frozenset(hosts_in))
