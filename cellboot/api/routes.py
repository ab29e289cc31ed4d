"""Every path of the API, once: what routes a request and what is documented.

Paths are relative to ``/v2.1`` (``/openapi.json`` and ``/`` are served
at the root too). ``openapi.document()`` is built from this list.
"""

from cellboot.api import openapi
from cellboot.api.handlers import admin
from cellboot.api.handlers import flavors
from cellboot.api.handlers import server_groups
from cellboot.api.handlers import servers
from cellboot.api.router import Route
from cellboot.api import schemas
from cellboot.policies import cells as cells_policies
from cellboot.policies import flavors as flavors_policies
from cellboot.policies import flows as flows_policies
from cellboot.policies import hypervisors as hypervisors_policies
from cellboot.policies import server_groups as groups_policies
from cellboot.policies import servers as server_policies

PREFIX = '/v2.1'

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
          "The project's servers (id, name, links)",
          policy=server_policies.INDEX, query=('reservation_id',)),
    Route('GET', '/servers/detail', servers.detail,
          "The project's servers in full; UNKNOWN for an unreachable cell",
          policy=server_policies.DETAIL, query=('reservation_id',)),
    Route('GET', '/servers/{server_id}', servers.show,
          'One server: status, fault when ERROR, host for admins',
          policy=server_policies.SHOW),
    Route('DELETE', '/servers/{server_id}', servers.delete,
          'Delete a server at any stage of its build',
          policy=server_policies.DELETE, status=204),
    Route('GET', '/flavors', flavors.index, 'Every flavor',
          policy=flavors_policies.INDEX),
    Route('GET', '/flavors/{flavor_id}', flavors.show, 'One flavor',
          policy=flavors_policies.SHOW),
    Route('POST', '/flavors', flavors.create, 'Create a flavor',
          policy=flavors_policies.CREATE, body_schema=schemas.FLAVOR_CREATE),
    Route('POST', '/os-server-groups', server_groups.create,
          'Create an affinity or anti-affinity group',
          policy=groups_policies.CREATE,
          body_schema=schemas.SERVER_GROUP_CREATE),
    Route('GET', '/os-server-groups', server_groups.index,
          "The project's server groups", policy=groups_policies.INDEX),
    Route('GET', '/os-server-groups/{group_id}', server_groups.show,
          'One server group and its members',
          policy=groups_policies.SHOW),
    Route('DELETE', '/os-server-groups/{group_id}', server_groups.delete,
          'Delete a server group', policy=groups_policies.DELETE,
          status=204),
    Route('GET', '/os-hypervisors/detail', admin.hypervisors,
          'Compute hosts with their cell, usage and capacity',
          policy=hypervisors_policies.LIST_DETAIL),
    Route('GET', '/os-cells', admin.cells, 'Cell mappings',
          policy=cells_policies.INDEX),
    Route('GET', '/os-flows', admin.flows,
          "Persisted flows, filtered by instance and state",
          policy=flows_policies.INDEX, query=('instance_uuid', 'state')),
    Route('GET', '/os-flows/{flow_id}', admin.flow,
          "One flow with each atom's state, timing, result or failure",
          policy=flows_policies.SHOW),
)
