"""``/os-resource-providers``: every cell's hosts and the shared pools.

What the scheduler counts, as the databases hold it: each provider's
inventories with what is allocated of them, and its traits. A cell
whose database does not answer is named in ``unreachable`` and left out
(the list is partial, not an error). Administrators only, by default.

``/os-resource-providers/{uuid}/traits`` reads and sets the traits of
one compute host (``cellboot.api.host_traits``).
"""

from cellboot.api import errors
from cellboot.api import host_traits
from cellboot.api import pagination
from cellboot.api import provider_listing
from cellboot.api import schemas
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


# ``PUT /os-resource-providers/{uuid}/traits``: the host's whole set.
TRAITS_UPDATE = {
    'type': 'object',
    'properties': {'traits': {
        'type': 'array', 'maxItems': host_traits.MAX_TRAITS,
        'items': {'type': 'string', 'minLength': 1, 'maxLength': 255}}},
    'required': ['traits'],
    'additionalProperties': False,
    'examples': [{'traits': ['HW_CPU_X86_AVX2', 'CUSTOM_SSD']}],
}


def _traits(uuid, traits):
    return errors.json_response(200, {'resource_provider_uuid': uuid,
                                      'traits': traits})


def traits_show(api, request, context, uuid):
    """The traits of one compute host."""
    _, found, _, traits = host_traits.show(context, uuid,
                                           CONF.api.cell_timeout)
    return _traits(found, traits)


def traits_update(api, request, context, uuid):
    """Make a host's traits exactly the body's: a host whose
    ``[compute] traits`` is set replaces them at its next report."""
    body = schemas.validate(TRAITS_UPDATE, schemas.parse_json(request))
    _, found, _, traits = host_traits.change(
        context, uuid, 'set', body['traits'], CONF.api.cell_timeout)
    return _traits(found, traits)


def traits_delete(api, request, context, uuid):
    """Take every trait from a host."""
    host_traits.change(context, uuid, 'set', [], CONF.api.cell_timeout)
    return errors.json_response(204)
