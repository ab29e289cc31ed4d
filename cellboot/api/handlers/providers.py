"""``/os-resource-providers``: every cell's hosts and the shared pools.

What the scheduler counts, as the databases hold it: each provider's
inventories with what is allocated of them, and its traits. A cell
whose database does not answer is named in ``unreachable`` and left out
(the list is partial, not an error). Administrators only, by default.
"""

from cellboot.api import errors
from cellboot.api import pagination
from cellboot.api import provider_listing
from cellboot.conf import CONF

KIND_QUERY = {'type': 'string', 'enum': list(provider_listing.KINDS),
              'description': ' or '.join(provider_listing.KINDS)}


def index(api, request, context):
    page = pagination.from_request(request)
    found, unreachable = provider_listing.find(
        context, CONF.api.cell_timeout, kind=request.GET.get('kind') or None,
        cell=request.GET.get('cell') or None)
    providers, more = pagination.of_list(
        found, lambda item: (item['kind'], item['name'], item['uuid']),
        lambda item: item['uuid'], page)
    last = providers[-1]['uuid'] if providers else None
    return errors.json_response(200, dict(
        {'resource_providers': providers, 'unreachable': unreachable},
        **pagination.links(request, 'resource_providers', page, last,
                           more)))
