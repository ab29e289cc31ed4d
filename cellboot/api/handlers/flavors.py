"""``/flavors``: anyone lists and shows them; admins create them.

Who may create one is the route's policy rule (administrators by
default). A flavor may carry extra specs (``cellboot.api.extra_specs``
says which keys mean something); they are shown with it.
"""

from cellboot.api import errors
from cellboot.api import extra_specs
from cellboot.api import pagination
from cellboot.api import schemas
from cellboot.api import views
from cellboot import exception
from cellboot.objects import flavor as flavor_obj


def index(api, request, context):
    page = pagination.from_request(request)
    items, more = page.split(flavor_obj.Flavor.get_page(
        context, page.limit + 1, marker=page.marker))
    last = items[-1].flavorid if items else None
    return errors.json_response(200, dict(
        {'flavors': [views.flavor(request, item) for item in items]},
        **pagination.links(request, 'flavors', page, last, more)))


def find(context, flavor_id):
    """The flavor of a path's ``flavor_id``; 404 if there is none."""
    try:
        return flavor_obj.Flavor.get_by_flavor_id(context, flavor_id)
    except exception.FlavorNotFound:
        raise errors.NotFound(f'Flavor {flavor_id[:255]} could not be '
                              f'found.')


def show(api, request, context, flavor_id):
    item = find(context, flavor_id)
    return errors.json_response(200, {'flavor': views.flavor(request, item)})


def create(api, request, context):
    body = schemas.validate(schemas.FLAVOR_CREATE,
                            schemas.parse_json(request))['flavor']
    specs = extra_specs.check(context, body.get('extra_specs') or {})
    item = flavor_obj.Flavor.create(
        context, body['name'], body['vcpus'], body['ram'],
        root_gb=body.get('disk', 0), flavorid=body.get('id'),
        description=body.get('description'), extra_specs=specs)
    return errors.json_response(200, {'flavor': views.flavor(request, item)})
