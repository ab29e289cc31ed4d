"""Requests that are not servers: resources a project holds on one
provider (``/os-allocations`` and the scheduler's RPC).

A request names resource classes and amounts, required and forbidden
traits, and optionally an availability zone and ``near``/``far`` (the
uuids of servers or allocations to be close to or away from). It is
placed whole on one provider:

1. a shared pool (``pools``) whose inventory has room for every class,
   that has every required trait and no forbidden one -- the pool is
   the provider, so its traits are what the request asks about -- and,
   with an availability zone, that serves a cell of that zone;
2. else a host: the API-level scheduler's ``select_destinations`` with
   a flavor of no VCPU, memory or root disk whose extra specs carry the
   classes and traits, ``one_provider`` (no class taken from a pool),
   the allocation's uuid as the consumer. The host's claim is held in
   its cell's database as a server's.

Kill safety: the row is committed ``placing`` before anything is
claimed, then set ``placed`` with its provider. A process that dies in
between leaves a ``placing`` row, which the super conductor's sweep
(``cellboot.conductor.unplaced_allocations``) settles by releasing
whatever the consumer holds and deleting the row. A delete releases
first, then deletes the row (both idempotent): a failure between leaves
a row whose claims are gone, and a repeated delete finishes.

``near``/``far`` (the project's allocations or servers) confine the
placement as they confine a server's (``colocation``): a pool must
serve a cell they allow and be none they avoid, and is preferred when
it serves the cells of what ``near`` names; a host is chosen by the
API-level scheduler with the same hints, so one rule reads them.
"""

from oslo_log import log as logging
from oslo_utils import uuidutils

from cellboot import exception
from cellboot.objects import resource_catalog
from cellboot.scheduler import colocation
from cellboot.scheduler.pools import records as pool_records
from cellboot.scheduler.resources import classes
from cellboot.scheduler.resources import inventory
from cellboot.scheduler.resources import traits as trait_names

LOG = logging.getLogger(__name__)

MAX_CLASSES = 50
MAX_TRAITS = 50
MAX_HINTS = 16
MAX_ZONE = 255
# A request asking for these is a server's.
SERVER_CLASSES = ('VCPU', 'PCPU', 'MEMORY_MB')
FIELDS = ('resources', 'required_traits', 'forbidden_traits', 'near',
          'far', 'availability_zone')


def _invalid(reason):
    return exception.Invalid(reason=reason)


def _names(value, what, check, catalog, context):
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_TRAITS:
        raise _invalid(f'{what} is a list of at most {MAX_TRAITS} names')
    names = sorted({check(name) for name in value})
    missing = catalog.missing(context, [
        name for name in names if name.startswith(trait_names.CUSTOM_PREFIX)])
    if missing:
        raise _invalid(f'{what}: no such trait {", ".join(missing)[:200]}')
    return names


def _resources(context, value):
    if not isinstance(value, dict) or not value \
            or len(value) > MAX_CLASSES:
        raise _invalid(f'resources is a mapping of 1 to {MAX_CLASSES} '
                       f'resource classes to amounts')
    checked = {}
    for rc, amount in value.items():
        classes.check(rc)
        if isinstance(amount, bool) or not isinstance(amount, int) \
                or not 1 <= amount <= inventory.MAX_AMOUNT:
            raise _invalid(f'the amount of {rc} must be a whole number '
                           f'from 1 to {inventory.MAX_AMOUNT}')
        checked[rc] = amount
    server = sorted(set(checked) & set(SERVER_CLASSES))
    if server:
        raise exception.AllocationIsServer(classes='/'.join(server))
    missing = resource_catalog.CLASSES.missing(context, [
        rc for rc in checked if rc.startswith(classes.CUSTOM_PREFIX)])
    if missing:
        raise _invalid(f'no such resource class {", ".join(missing)[:200]}'
                       f' (create it with POST /os-resource-classes)')
    return checked


def check_class_names(context, names):
    """Invalid unless every name is a resource class (standard, or a
    created custom one): a class quota's names (``quota.update``)."""
    for name in names:
        if not isinstance(name, str) or not classes.is_valid(name):
            raise _invalid(f'unknown quota {str(name)[:80]!r}; quotas are '
                           f'instances, cores, ram and resource classes '
                           f'(for allocation requests)')
    missing = resource_catalog.CLASSES.missing(context, [
        name for name in names if name.startswith(classes.CUSTOM_PREFIX)])
    if missing:
        raise _invalid(f'no such resource class {", ".join(missing)[:200]}')


def _hint(value, what):
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    if len(values) > MAX_HINTS or not all(
            isinstance(v, str) and uuidutils.is_uuid_like(v)
            for v in values):
        raise _invalid(f'{what} is the uuid of a server or an allocation, '
                       f'or a list of at most {MAX_HINTS} of them')
    return sorted(set(values))


def checked(context, body):
    """The request ``body`` (REST or RPC) checked and normalized; raises
    Invalid (AllocationIsServer for VCPU/PCPU/MEMORY_MB) naming what is
    wrong, having read nothing but the catalog."""
    if not isinstance(body, dict):
        raise _invalid('an allocation request is a mapping')
    unknown = sorted(str(key)[:40] for key in body if key not in FIELDS)
    if unknown:
        raise _invalid(f'unknown fields {", ".join(unknown)}')
    request = {'resources': _resources(context, body.get('resources'))}
    required = _names(body.get('required_traits'), 'required_traits',
                      trait_names.check, resource_catalog.TRAITS, context)
    forbidden = _names(body.get('forbidden_traits'), 'forbidden_traits',
                       trait_names.check, resource_catalog.TRAITS, context)
    both = sorted(set(required) & set(forbidden))
    if both:
        raise _invalid(f'traits both required and forbidden: '
                       f'{", ".join(both)}')
    request.update(required_traits=required, forbidden_traits=forbidden,
                   near=_hint(body.get('near'), 'near'),
                   far=_hint(body.get('far'), 'far'))
    zone = body.get('availability_zone')
    if zone is not None and (not isinstance(zone, str) or not zone
                             or len(zone) > MAX_ZONE):
        raise _invalid(f'availability_zone is a zone name of 1 to '
                       f'{MAX_ZONE} characters')
    request['availability_zone'] = zone
    return request


def restriction_for(context, request):
    """The ``colocation.Constraints`` of the request's ``near``/``far``."""
    return colocation.constraints(context, context.project_id,
                                  request['near'], request['far'])


def _zone_cells(scheduler, zone):
    """The uuids of the cells of ``zone``: below a tree zone of that
    name, else whose hosts are in that availability zone."""
    tree = scheduler.aggregates.tree()
    if tree.is_zone(zone):
        return {view.cell.uuid for view in tree.cells_below(
            tree.roots(zone))}
    return {uuid for uuid, view in scheduler.aggregates.views().items()
            if zone in ((view.aggregate or {}).get('zones') or ())}


def _cells_allowed(served, zone_cells, restriction):
    """Whether a pool serving ``served`` may be used."""
    cells = set(served)
    if zone_cells is not None:
        cells &= zone_cells
    if restriction.cells_in is not None:
        cells &= restriction.cells_in
    cells -= restriction.cells_out
    restricted = (zone_cells is not None or restriction.cells_out
                  or restriction.cells_in is not None)
    return bool(cells) or not restricted


def fitting_pools(context, scheduler, request, restriction):
    """The pools that may take ``request`` whole, best first (the
    preferred, then the most free room)."""
    required = set(request['required_traits'])
    forbidden = set(request['forbidden_traits'])
    zone = request['availability_zone']
    zone_cells = _zone_cells(scheduler, zone) if zone else None
    fitting = []
    for pool in pool_records.list_pools(context):
        free = {rc: pool['capacity'].get(rc, 0) - pool['usages'].get(rc, 0)
                for rc in request['resources']}
        traits = set(pool['traits'])
        if pool['uuid'] in restriction.pools_out or any(
                free[rc] < amount
                for rc, amount in request['resources'].items()) \
                or not required <= traits or traits & forbidden \
                or not _cells_allowed(pool['served_cells'], zone_cells,
                                      restriction):
            continue
        fitting.append((pool['uuid'] not in (restriction.pools_in or ()),
                        -sum(free.values()), pool['name'], pool))
    return [entry[-1] for entry in sorted(fitting, key=lambda e: e[:3])]


def _on_pool(context, scheduler, uuid, request, restriction):
    """``{'uuid', 'name', 'kind': 'pool'}`` claimed, or None."""
    pools = fitting_pools(context, scheduler, request, restriction)
    if not pools:
        return None
    try:
        (held,) = scheduler.claim_pools(context, uuid, [{
            'uuid': pools[0]['uuid'], 'resources': request['resources'],
            'alternates': [pool['uuid'] for pool in pools[1:]]}])
    except exception.NoValidHost as exc:
        LOG.info('No pool took allocation %s after all (%s); trying '
                 'hosts', uuid, exc)
        return None
    names = {pool['uuid']: pool['name'] for pool in pools}
    return {'uuid': held['uuid'], 'name': names.get(held['uuid']),
            'kind': 'pool'}


def host_spec(context, request):
    """The request spec that asks the API-level scheduler for one host
    giving the whole request (see the module docstring)."""
    extra = {f'resources:{rc}': str(amount)
             for rc, amount in request['resources'].items()}
    extra.update({f'trait:{t}': 'required'
                  for t in request['required_traits']})
    extra.update({f'trait:{t}': 'forbidden'
                  for t in request['forbidden_traits']})
    spec = {'flavor': {'vcpus': 0, 'memory_mb': 0, 'root_gb': 0,
                       'extra_specs': extra},
            'num_instances': 1, 'one_provider': True,
            'availability_zone': request['availability_zone'],
            'project_id': context.project_id, 'user_id': context.user_id}
    hints = {name: request[name] for name in ('near', 'far')
             if request[name]}
    if hints:
        spec['scheduler_hints'] = hints
    return spec


def _on_host(context, scheduler, uuid, request):
    (hosts,) = scheduler.select_destinations(
        context, host_spec(context, request), [uuid],
        return_alternates=False)
    chosen = hosts[0]
    return {'uuid': chosen['compute_node_uuid'],
            'name': chosen.get('nodename') or chosen['service_host'],
            'kind': 'host', 'cell_uuid': chosen.get('cell_uuid')}


def place(context, scheduler, uuid, request):
    """Claim ``request`` for the consumer ``uuid`` on one provider (a
    pool, else a host); the provider as ``{'uuid', 'name', 'kind',
    'cell_uuid'?}``. NoValidHost (nothing held) when none can."""
    restriction = restriction_for(context, request)
    return (_on_pool(context, scheduler, uuid, request, restriction)
            or _on_host(context, scheduler, uuid, request))
