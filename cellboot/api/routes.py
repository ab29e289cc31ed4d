"""Every path of the API, once: what routes a request and what is documented.

Paths are relative to ``/v2.1`` (``/openapi.json`` and ``/`` are served
at the root too). ``openapi.document()`` is built from this list.
"""

from cellboot.api import openapi
from cellboot.api.handlers import admin
from cellboot.api import admin_view_schemas as admin_views
from cellboot.api.handlers import allocations
from cellboot.api.handlers import flavor_extra_specs as extra_specs
from cellboot.api.handlers import flavors
from cellboot.api.handlers import flow_actions
from cellboot.api.handlers import instance_actions
from cellboot.api.handlers import providers
from cellboot.api.handlers import quota_sets
from cellboot.api.handlers import resource_catalog as catalog
from cellboot.api.handlers import resource_pools
from cellboot.api.handlers import server_groups
from cellboot.api.handlers import servers
from cellboot.api.handlers import zones
from cellboot.api import pagination
from cellboot.api.router import Route
from cellboot.api import schemas
from cellboot.api import server_filters
from cellboot.api import view_schemas as views
from cellboot.policies import allocations as allocs_policies
from cellboot.policies import cells as cells_policies
from cellboot.policies import flavors as flavors_policies
from cellboot.policies import flows as flows_policies
from cellboot.policies import hypervisors as hypervisors_policies
from cellboot.policies import instance_actions as action_policies
from cellboot.policies import quota_sets as quota_policies
from cellboot.policies import resource_catalog as catalog_policies
from cellboot.policies import resource_pools as pools_policies
from cellboot.policies import server_groups as groups_policies
from cellboot.policies import servers as server_policies
from cellboot.policies import zones as zones_policies

PREFIX = '/v2.1'

# Every list is paged (``cellboot.api.pagination``).
PAGED = pagination.QUERY
PAGED_SCHEMAS = pagination.QUERY_SCHEMAS
_SERVER_QUERY = dict(PAGED_SCHEMAS, **server_filters.QUERY_SCHEMAS)


def _links(source, **targets):
    """OpenAPI links fed by the response body at the JSON pointer
    ``source``: ``{name: (method, path, parameter)}`` passes it as a
    path parameter; ``{name: BOOT}`` as the flavor of a boot."""
    expression = f'$response.body#{source}'
    links = {}
    for name, (method, path, parameter) in targets.items():
        link = {'operationId': openapi.operation_id(method, path)}
        if parameter is _BOOT_FLAVOR:
            # Merged into a generated body by schemathesis; a literal
            # body with the flavor for other tools.
            link['requestBody'] = {'server': {'name': 'linked',
                                              'flavorRef': expression}}
        else:
            link['parameters'] = {parameter: expression}
        links[name] = link
    return links


_SERVER = '/servers/{server_id}'
_GROUP = '/os-server-groups/{group_id}'
_ACTIONS = _SERVER + '/os-instance-actions'
_QUOTA = '/os-quota-sets/{project_id}'
_SPECS = '/flavors/{flavor_id}/os-extra_specs'
_SPEC = _SPECS + '/{key}'
_CLASS = '/os-resource-classes/{name}'
_TRAIT = '/os-traits/{name}'
_POOL = '/os-resource-pools/{pool_id}'
_HOST_TRAITS = '/os-resource-providers/{uuid}/traits'
_ALLOC = '/os-allocations/{allocation_id}'
_BOOT_FLAVOR = object()
_BOOT = ('POST', '/servers', _BOOT_FLAVOR)

ROUTES = (
    Route('GET', '/', openapi.versions, 'API version document',
          authenticated=False, database=False,
          response_schema=views.VERSION),
    Route('GET', '/openapi.json', openapi.serve, 'This OpenAPI document',
          authenticated=False, database=False,
          response_schema=views.OPENAPI),
    Route('POST', '/servers', servers.create,
          'Boot one server, or min_count..max_count servers',
          policy=server_policies.CREATE, body_schema=schemas.server_create,
          status=202, response_schema=views.SERVER_CREATED, failures=(403,),
          links=_links('/server/id',
                       GetServer=('GET', _SERVER, 'server_id'),
                       DeleteServer=('DELETE', _SERVER, 'server_id'))),
    Route('GET', '/servers', servers.index,
          "The project's servers (id, name, links), a page at a time",
          policy=server_policies.INDEX, query=server_filters.QUERY + PAGED,
          query_schemas=_SERVER_QUERY, response_schema=views.SERVERS),
    Route('GET', '/servers/detail', servers.detail,
          "The project's servers in full; UNKNOWN for an unreachable cell",
          policy=server_policies.DETAIL, query=server_filters.QUERY + PAGED,
          query_schemas=_SERVER_QUERY, response_schema=views.SERVERS_DETAIL),
    Route('GET', _SERVER, servers.show,
          'One server: status, fault when ERROR, host for admins',
          policy=server_policies.SHOW, response_schema=views.SERVER_ONE),
    Route('DELETE', _SERVER, servers.delete,
          'Delete a server at any stage of its build',
          policy=server_policies.DELETE, status=204),
    Route('GET', _ACTIONS, instance_actions.index,
          "A server's actions, newest first, from every cell it went "
          'through', policy=action_policies.LIST, query=PAGED,
          query_schemas=PAGED_SCHEMAS, response_schema=views.INSTANCE_ACTIONS,
          links=_links('/instanceActions/0/request_id', GetInstanceAction=(
              'GET', _ACTIONS + '/{request_id}', 'request_id'))),
    Route('GET', _ACTIONS + '/{request_id}', instance_actions.show,
          'One action of a server with its events (host, details and '
          'traceback for admins)', policy=action_policies.SHOW,
          response_schema=views.INSTANCE_ACTION_ONE),
    Route('GET', '/flavors', flavors.index, 'Every flavor, by name',
          policy=flavors_policies.INDEX, query=PAGED,
          query_schemas=PAGED_SCHEMAS, response_schema=views.FLAVORS,
          links=_links('/flavors/0/id', GetFlavor=(
              'GET', '/flavors/{flavor_id}', 'flavor_id'),
              BootWithFlavor=_BOOT)),
    Route('GET', '/flavors/{flavor_id}', flavors.show, 'One flavor',
          policy=flavors_policies.SHOW, response_schema=views.FLAVOR_ONE),
    Route('POST', '/flavors', flavors.create, 'Create a flavor',
          policy=flavors_policies.CREATE, body_schema=schemas.FLAVOR_CREATE,
          response_schema=views.FLAVOR_ONE, failures=(409,),
          links=_links('/flavor/id', GetFlavor=('GET', '/flavors/{flavor_id}',
                                                'flavor_id'),
                       BootWithFlavor=_BOOT)),
    Route('GET', _SPECS, extra_specs.index, "A flavor's extra specs",
          policy=flavors_policies.EXTRA_SPECS_INDEX,
          response_schema=views.EXTRA_SPECS),
    Route('POST', _SPECS, extra_specs.create,
          "Set some of a flavor's extra specs (the others stay)",
          policy=flavors_policies.EXTRA_SPECS_CREATE,
          body_schema=schemas.EXTRA_SPECS_CREATE,
          response_schema=views.EXTRA_SPECS),
    Route('GET', _SPEC, extra_specs.show, "One of a flavor's extra specs",
          policy=flavors_policies.EXTRA_SPECS_SHOW,
          response_schema=views.EXTRA_SPEC_ONE),
    Route('PUT', _SPEC, extra_specs.update,
          "Set one of a flavor's extra specs",
          policy=flavors_policies.EXTRA_SPECS_UPDATE,
          body_schema=schemas.EXTRA_SPEC_UPDATE,
          response_schema=views.EXTRA_SPEC_ONE),
    Route('DELETE', _SPEC, extra_specs.delete,
          "Remove one of a flavor's extra specs",
          policy=flavors_policies.EXTRA_SPECS_DELETE, status=204),
    Route('GET', '/os-resource-classes', catalog.class_index,
          'Standard and custom resource classes, by name',
          policy=catalog_policies.CLASS_INDEX, query=('name',) + PAGED,
          query_schemas=dict(PAGED_SCHEMAS, name=catalog.NAME_QUERY),
          response_schema=views.RESOURCE_CLASSES),
    Route('POST', '/os-resource-classes', catalog.class_create,
          'Create a custom resource class (CUSTOM_*)',
          policy=catalog_policies.CLASS_CREATE,
          body_schema=catalog.CLASS_CREATE, status=201,
          response_schema=views.RESOURCE_CLASS_ONE, failures=(409,),
          links=_links('/resource_class/name',
                       GetResourceClass=('GET', _CLASS, 'name'),
                       DeleteResourceClass=('DELETE', _CLASS, 'name'))),
    Route('GET', _CLASS, catalog.class_show, 'One resource class',
          policy=catalog_policies.CLASS_SHOW,
          response_schema=views.RESOURCE_CLASS_ONE),
    Route('DELETE', _CLASS, catalog.class_delete,
          'Delete a custom resource class no flavor or pool uses',
          policy=catalog_policies.CLASS_DELETE, status=204,
          failures=(400, 409)),
    Route('GET', '/os-traits', catalog.trait_index,
          'Standard and custom traits, by name',
          policy=catalog_policies.TRAIT_INDEX, query=('name',) + PAGED,
          query_schemas=dict(PAGED_SCHEMAS, name=catalog.NAME_QUERY),
          response_schema=views.TRAITS),
    Route('GET', _TRAIT, catalog.trait_show, 'One trait',
          policy=catalog_policies.TRAIT_SHOW,
          response_schema=views.TRAIT_ONE),
    Route('PUT', _TRAIT, catalog.trait_update,
          'Create a custom trait (CUSTOM_*); 204 when it exists',
          policy=catalog_policies.TRAIT_UPDATE, status=201, also=(204,),
          response_schema=views.TRAIT_ONE, failures=(400,)),
    Route('DELETE', _TRAIT, catalog.trait_delete,
          'Delete a custom trait no flavor or pool uses',
          policy=catalog_policies.TRAIT_DELETE, status=204,
          failures=(400, 409)),
    Route('GET', '/os-resource-providers', providers.index,
          "Every cell's hosts and the shared pools, with inventories, "
          'usage and traits',
          policy=catalog_policies.PROVIDER_INDEX,
          query=('kind', 'cell') + PAGED,
          query_schemas=dict(PAGED_SCHEMAS, kind=providers.KIND_QUERY),
          response_schema=views.RESOURCE_PROVIDERS),
    Route('GET', _HOST_TRAITS, providers.traits_show,
          "A compute host's traits",
          policy=catalog_policies.PROVIDER_TRAITS_SHOW,
          response_schema=views.PROVIDER_TRAITS),
    Route('PUT', _HOST_TRAITS, providers.traits_update,
          "Replace a compute host's traits (a host whose [compute] traits "
          'is set replaces them at its next report)',
          policy=catalog_policies.PROVIDER_TRAITS_UPDATE,
          body_schema=providers.TRAITS_UPDATE,
          response_schema=views.PROVIDER_TRAITS, failures=(400,)),
    Route('DELETE', _HOST_TRAITS, providers.traits_delete,
          "Take every trait from a compute host",
          policy=catalog_policies.PROVIDER_TRAITS_DELETE, status=204),
    Route('POST', '/os-server-groups', server_groups.create,
          'Create an affinity or anti-affinity group',
          policy=groups_policies.CREATE,
          body_schema=schemas.SERVER_GROUP_CREATE,
          response_schema=views.SERVER_GROUP_ONE,
          links=_links('/server_group/id',
                       GetServerGroup=('GET', _GROUP, 'group_id'),
                       DeleteServerGroup=('DELETE', _GROUP, 'group_id'))),
    Route('GET', '/os-server-groups', server_groups.index,
          "The project's server groups", policy=groups_policies.INDEX,
          query=PAGED, query_schemas=PAGED_SCHEMAS,
          response_schema=views.SERVER_GROUPS),
    Route('GET', _GROUP, server_groups.show,
          'One server group and its members', policy=groups_policies.SHOW,
          response_schema=views.SERVER_GROUP_ONE),
    Route('DELETE', _GROUP, server_groups.delete,
          'Delete a server group', policy=groups_policies.DELETE,
          status=204),
    Route('GET', '/os-hypervisors/detail', admin.hypervisors,
          'Compute hosts with their cell, usage and capacity',
          policy=hypervisors_policies.LIST_DETAIL, query=PAGED,
          query_schemas=PAGED_SCHEMAS,
          response_schema=admin_views.HYPERVISORS),
    Route('GET', '/os-cells', admin.cells, 'Cell mappings',
          policy=cells_policies.INDEX, query=PAGED,
          query_schemas=PAGED_SCHEMAS, response_schema=admin_views.CELLS),
    Route('GET', '/os-zones', zones.index,
          'Zones above cells, each with its cells, zones and aggregate',
          policy=zones_policies.INDEX, query=PAGED,
          query_schemas=PAGED_SCHEMAS, response_schema=admin_views.ZONES,
          links=_links('/zones/0/id', GetZone=('GET', '/os-zones/{zone_id}',
                                               'zone_id'))),
    Route('GET', '/os-zones/{zone_id}', zones.show,
          'One zone (by uuid or name) and the aggregate below it',
          policy=zones_policies.SHOW, response_schema=admin_views.ZONE_ONE),
    Route('GET', '/os-resource-pools', resource_pools.index,
          'Shared resource pools with their usage, traits and scopes',
          policy=pools_policies.INDEX, query=PAGED,
          query_schemas=PAGED_SCHEMAS,
          response_schema=admin_views.RESOURCE_POOLS,
          links=_links('/resource_pools/0/id',
                       GetResourcePool=('GET', _POOL, 'pool_id'))),
    Route('POST', '/os-resource-pools', resource_pools.create,
          'Create a shared resource pool serving cells or zones',
          policy=pools_policies.CREATE,
          body_schema=resource_pools.POOL_CREATE,
          response_schema=admin_views.RESOURCE_POOL_ONE, failures=(409,),
          links=_links('/resource_pool/id',
                       GetResourcePool=('GET', _POOL, 'pool_id'),
                       DeleteResourcePool=('DELETE', _POOL, 'pool_id'))),
    Route('GET', _POOL, resource_pools.show,
          'One shared resource pool (by uuid or name)',
          policy=pools_policies.SHOW,
          response_schema=admin_views.RESOURCE_POOL_ONE),
    Route('DELETE', _POOL, resource_pools.delete,
          'Delete a shared resource pool that nothing uses',
          policy=pools_policies.DELETE, status=204, failures=(409,)),
    Route('POST', '/os-allocations', allocations.create,
          'Hold resources that are not a server on one pool or host',
          policy=allocs_policies.CREATE,
          body_schema=allocations.ALLOCATION_CREATE, status=201,
          response_schema=views.ALLOCATION_ONE, failures=(403,),
          links=_links('/allocation/id',
                       GetAllocation=('GET', _ALLOC, 'allocation_id'),
                       DeleteAllocation=('DELETE', _ALLOC,
                                         'allocation_id'))),
    Route('GET', '/os-allocations', allocations.index,
          "The project's allocations (all_tenants=1: every project's)",
          policy=allocs_policies.INDEX, query=('all_tenants',) + PAGED,
          query_schemas=dict(PAGED_SCHEMAS,
                             all_tenants=allocations.ALL_TENANTS_QUERY),
          response_schema=views.ALLOCATIONS,
          links=_links('/allocations/0/id',
                       GetAllocation=('GET', _ALLOC, 'allocation_id'))),
    Route('GET', _ALLOC, allocations.show,
          'One allocation: its resources and provider',
          policy=allocs_policies.SHOW, response_schema=views.ALLOCATION_ONE),
    Route('DELETE', _ALLOC, allocations.delete,
          'Release and delete an allocation',
          policy=allocs_policies.DELETE, status=204),
    Route('GET', '/os-flows', admin.flows,
          "Persisted flows, filtered by instance and state",
          policy=flows_policies.INDEX,
          query=('instance_uuid', 'state') + PAGED,
          query_schemas=dict(PAGED_SCHEMAS, state=admin.FLOW_STATE_QUERY),
          response_schema=admin_views.FLOWS,
          links=_links('/flows/0/uuid', GetFlow=('GET', '/os-flows/{flow_id}',
                                                 'flow_id'))),
    Route('GET', '/os-flows/{flow_id}', admin.flow,
          "One flow with each atom's state, timing, result or failure",
          policy=flows_policies.SHOW, response_schema=admin_views.FLOW_ONE),
    Route('POST', '/os-flows/{flow_id}/action', flow_actions.action,
          'Act on a flow: {"retry": null} hands a FAILURE or stuck flow '
          'back to the conductors; {"abandon": null | {"reason": text}} '
          'ends it FAILURE for good, the sweeps settle its instances',
          policy=flows_policies.ACTION, body_schema=flow_actions.FLOW_ACTION,
          status=202, failures=(409,)),
    Route('GET', _QUOTA, quota_sets.show,
          "A project's limits (users: their own project only)",
          policy=quota_policies.SHOW, response_schema=views.QUOTA_SET_ONE,
          failures=(400,)),
    Route('GET', _QUOTA + '/detail', quota_sets.detail,
          "A project's limits and what it uses now",
          policy=quota_policies.DETAIL,
          response_schema=views.QUOTA_SET_DETAIL, failures=(400,)),
    Route('PUT', _QUOTA, quota_sets.update,
          "Set some of a project's limits (-1: unlimited)",
          policy=quota_policies.UPDATE,
          body_schema=quota_sets.QUOTA_SET_UPDATE,
          response_schema=views.QUOTA_SET_ONE),
    Route('DELETE', _QUOTA, quota_sets.delete,
          'Give a project the default limits back',
          policy=quota_policies.DELETE, status=202, failures=(400,)),
)
