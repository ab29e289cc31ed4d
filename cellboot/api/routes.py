"""Every path of the API, once: what routes a request and what is documented.

Paths are relative to ``/v2.1`` (``/openapi.json`` and ``/`` are served
at the root too). ``openapi.document()`` is built from this list.
"""

from cellboot.api import openapi
from cellboot.api.handlers import admin
from cellboot.api.handlers import flavors
from cellboot.api.handlers import quota_sets
from cellboot.api.handlers import server_groups
from cellboot.api.handlers import servers
from cellboot.api import pagination
from cellboot.api.router import Route
from cellboot.api import schemas
from cellboot.policies import cells as cells_policies
from cellboot.policies import flavors as flavors_policies
from cellboot.policies import flows as flows_policies
from cellboot.policies import hypervisors as hypervisors_policies
from cellboot.policies import quota_sets as quota_policies
from cellboot.policies import server_groups as groups_policies
from cellboot.policies import servers as server_policies

PREFIX = '/v2.1'

# Every list is paged (``cellboot.api.pagination``).
PAGED = pagination.QUERY

ROUTES = (
    Route('GET', '/', openapi.versions, 'API version document',
          authenticated=False),
    Route('GET', '/openapi.json', openapi.serve, 'This OpenAPI document',
          authenticated=False),
    Route('POST', '/servers', servers.create,
          'Boot one server, or min_count..max_count servers',
          policy=server_policies.CREATE, body_schema=schemas.SERVER_CREATE,
          status=202),
    Route('GET', '/servers', servers.index,
          "The project's servers (id, name, links), a page at a time",
          policy=server_policies.INDEX,
          query=('reservation_id',) + PAGED),
    Route('GET', '/servers/detail', servers.detail,
          "The project's servers in full; UNKNOWN for an unreachable cell",
          policy=server_policies.DETAIL,
          query=('reservation_id',) + PAGED),
    Route('GET', '/servers/{server_id}', servers.show,
          'One server: status, fault when ERROR, host for admins',
          policy=server_policies.SHOW),
    Route('DELETE', '/servers/{server_id}', servers.delete,
          'Delete a server at any stage of its build',
          policy=server_policies.DELETE, status=204),
    Route('GET', '/flavors', flavors.index, 'Every flavor, by name',
          policy=flavors_policies.INDEX, query=PAGED),
    Route('GET', '/flavors/{flavor_id}', flavors.show, 'One flavor',
          policy=flavors_policies.SHOW),
    Route('POST', '/flavors', flavors.create, 'Create a flavor',
          policy=flavors_policies.CREATE, body_schema=schemas.FLAVOR_CREATE),
    Route('POST', '/os-server-groups', server_groups.create,
          'Create an affinity or anti-affinity group',
          policy=groups_policies.CREATE,
          body_schema=schemas.SERVER_GROUP_CREATE),
    Route('GET', '/os-server-groups', server_groups.index,
          "The project's server groups", policy=groups_policies.INDEX,
          query=PAGED),
    Route('GET', '/os-server-groups/{group_id}', server_groups.show,
          'One server group and its members',
          policy=groups_policies.SHOW),
    Route('DELETE', '/os-server-groups/{group_id}', server_groups.delete,
          'Delete a server group', policy=groups_policies.DELETE,
          status=204),
    Route('GET', '/os-hypervisors/detail', admin.hypervisors,
          'Compute hosts with their cell, usage and capacity',
          policy=hypervisors_policies.LIST_DETAIL, query=PAGED),
    Route('GET', '/os-cells', admin.cells, 'Cell mappings',
          policy=cells_policies.INDEX, query=PAGED),
    Route('GET', '/os-flows', admin.flows,
          "Persisted flows, filtered by instance and state",
          policy=flows_policies.INDEX,
          query=('instance_uuid', 'state') + PAGED),
    Route('GET', '/os-flows/{flow_id}', admin.flow,
          "One flow with each atom's state, timing, result or failure",
          policy=flows_policies.SHOW),
    Route('GET', '/os-quota-sets/{project_id}', quota_sets.show,
          "A project's limits (users: their own project only)",
          policy=quota_policies.SHOW),
    Route('GET', '/os-quota-sets/{project_id}/detail', quota_sets.detail,
          "A project's limits and what it uses now",
          policy=quota_policies.DETAIL),
    Route('PUT', '/os-quota-sets/{project_id}', quota_sets.update,
          "Set some of a project's limits (-1: unlimited)",
          policy=quota_policies.UPDATE,
          body_schema=quota_sets.QUOTA_SET_UPDATE),
    Route('DELETE', '/os-quota-sets/{project_id}', quota_sets.delete,
          'Give a project the default limits back',
          policy=quota_policies.DELETE, status=202),
)
