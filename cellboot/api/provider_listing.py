"""Every resource provider: each cell's hosts and the shared pools.

Read for ``GET /os-resource-providers`` and ``cellboot-manage provider
list`` alike. Hosts are read from each cell's database in parallel
(``scatter_gather_cells``, skipping cells known to be down): a cell
that does not answer within ``timeout`` is named in ``unreachable``
and the listing goes on without its hosts, as the server and flow
listings do. Pools are read from the API database. Administrators
only: it shows the infrastructure.
"""

from cellboot import context as cb_context
from cellboot.db import provider_reads
from cellboot import exception
from cellboot.objects import cell_mapping

KINDS = ('host', 'pool')


def _shown(provider, kind, **more):
    item = {'uuid': provider['uuid'], 'name': provider['name'],
            'kind': kind, 'inventories': provider['inventories'],
            'traits': provider['traits']}
    item.update(more)
    return item


def _hosts(context, cells, timeout, unreachable):
    results = cb_context.scatter_gather_cells(
        context, cells, timeout, provider_reads.hosts, skip_down_cells=True)
    found = []
    for cell in cells:
        result = results.get(cell.uuid, cb_context.did_not_respond_sentinel)
        if cb_context.is_cell_failure(result):
            unreachable.append(cell.name)
            continue
        found.extend(_shown(host, 'host', cell=cell.name,
                            availability_zone=host['availability_zone'])
                     for host in result)
    return found


def _pools(context, cell):
    return [_shown(pool, 'pool', serves=pool['serves'])
            for pool in provider_reads.pools(context)
            if cell is None or cell in pool['serves']['cells']]


def find(context, timeout, kind=None, cell=None):
    """``(providers, unreachable cell names)``, providers by kind, name.

    ``kind``: ``host`` or ``pool`` (None: both); ``cell``: a cell's name,
    its hosts and the pools that name it in their scopes. An unknown
    kind or cell raises Invalid.
    """
    if kind is not None and kind not in KINDS:
        raise exception.Invalid(
            reason=f'kind must be {" or ".join(KINDS)}, not {kind[:40]!r}')
    cells = [found for found in cell_mapping.CellMapping.get_all(context)
             if not found.is_cell0]
    if cell is not None:
        cells = [found for found in cells if found.name == cell]
        if not cells:
            raise exception.Invalid(reason=f'there is no cell named '
                                           f'{cell[:80]!r}')
    unreachable = []
    found = []
    if kind in (None, 'host'):
        found.extend(_hosts(context, cells, timeout, unreachable))
    if kind in (None, 'pool'):
        found.extend(_pools(context, cell))
    found.sort(key=lambda item: (item['kind'], item['name'], item['uuid']))
    return found, sorted(unreachable)
