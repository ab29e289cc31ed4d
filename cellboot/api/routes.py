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
from cellboot.api import view_schemas as views

PREFIX = '/v2.1'


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
_BOOT_FLAVOR = object()
_BOOT = ('POST', '/servers', _BOOT_FLAVOR)

ROUTES = (
    Route('GET', '/', openapi.versions, 'API version document',
          authenticated=False, response_schema=views.VERSION),
    Route('GET', '/openapi.json', openapi.serve, 'This OpenAPI document',
          authenticated=False, response_schema=views.OPENAPI),
    Route('POST', '/servers', servers.create,
          'Boot one server, or min_count..max_count servers',
          body_schema=schemas.server_create, status=202,
          response_schema=views.SERVER_CREATED,
          links=_links('/server/id',
                       GetServer=('GET', _SERVER, 'server_id'),
                       DeleteServer=('DELETE', _SERVER, 'server_id'))),
    Route('GET', '/servers', servers.index,
          "The project's servers (id, name, links)",
          query=('reservation_id',), response_schema=views.SERVERS),
    Route('GET', '/servers/detail', servers.detail,
          "The project's servers in full; UNKNOWN for an unreachable cell",
          query=('reservation_id',), response_schema=views.SERVERS_DETAIL),
    Route('GET', _SERVER, servers.show,
          'One server: status, fault when ERROR, host for admins',
          response_schema=views.SERVER_ONE, failures=(503,)),
    Route('DELETE', _SERVER, servers.delete,
          'Delete a server at any stage of its build', status=204,
          failures=(503,)),
    Route('GET', '/flavors', flavors.index, 'Every flavor',
          response_schema=views.FLAVORS,
          links=_links('/flavors/0/id', GetFlavor=(
              'GET', '/flavors/{flavor_id}', 'flavor_id'),
              BootWithFlavor=_BOOT)),
    Route('GET', '/flavors/{flavor_id}', flavors.show, 'One flavor',
          response_schema=views.FLAVOR_ONE),
    Route('POST', '/flavors', flavors.create, 'Create a flavor', admin=True,
          body_schema=schemas.FLAVOR_CREATE, response_schema=views.FLAVOR_ONE,
          failures=(409,),
          links=_links('/flavor/id', GetFlavor=('GET', '/flavors/{flavor_id}',
                                                'flavor_id'),
                       BootWithFlavor=_BOOT)),
    Route('POST', '/os-server-groups', server_groups.create,
          'Create an affinity or anti-affinity group',
          body_schema=schemas.SERVER_GROUP_CREATE,
          response_schema=views.SERVER_GROUP_ONE,
          links=_links('/server_group/id',
                       GetServerGroup=('GET', _GROUP, 'group_id'),
                       DeleteServerGroup=('DELETE', _GROUP, 'group_id'))),
    Route('GET', '/os-server-groups', server_groups.index,
          "The project's server groups", response_schema=views.SERVER_GROUPS),
    Route('GET', _GROUP, server_groups.show,
          'One server group and its members',
          response_schema=views.SERVER_GROUP_ONE),
    Route('DELETE', _GROUP, server_groups.delete,
          'Delete a server group', status=204),
    Route('GET', '/os-hypervisors/detail', admin.hypervisors,
          'Compute hosts with their cell, usage and capacity', admin=True,
          response_schema=views.HYPERVISORS, failures=(503,)),
    Route('GET', '/os-cells', admin.cells, 'Cell mappings', admin=True,
          response_schema=views.CELLS),
    Route('GET', '/os-flows', admin.flows,
          "Persisted flows, filtered by instance and state", admin=True,
          query=('instance_uuid', 'state'),
          query_schemas={'state': admin.FLOW_STATE_QUERY},
          response_schema=views.FLOWS,
          links=_links('/flows/0/uuid', GetFlow=('GET', '/os-flows/{flow_id}',
                                                 'flow_id'))),
    Route('GET', '/os-flows/{flow_id}', admin.flow,
          "One flow with each atom's state, timing, result or failure",
          admin=True, response_schema=views.FLOW_ONE),
)
