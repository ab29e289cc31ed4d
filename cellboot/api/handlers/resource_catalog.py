"""``/os-resource-classes`` and ``/os-traits``: the names flavors may use.

Each list holds the standard names (os-resource-classes, os-traits),
``"custom": false``, and the ``CUSTOM_*`` names administrators created,
``"custom": true``, by name, a page at a time (the marker is a name).
Only custom names are created and deleted; a custom name still used by
a flavor's extra spec or a shared pool is not deleted (409).
Administrators only, by default (``cellboot.policies.resource_catalog``).

Resource classes are created by ``POST`` (409 when they exist), traits
by ``PUT`` on their name (201 when new, 204 when they existed), as
Placement has them.
"""

from cellboot.api import errors
from cellboot.api import extra_specs
from cellboot.api import pagination
from cellboot.api import schemas
from cellboot import exception
from cellboot.objects import resource_catalog
from cellboot.scheduler.resources import classes
from cellboot.scheduler.resources import traits

CLASS_CREATE = {
    'type': 'object',
    # A standard class never starts with CUSTOM_: a name the pattern
    # takes is one that may be created.
    'properties': {'name': {'type': 'string', 'minLength': 8,
                            'maxLength': classes.MAX_NAME,
                            'pattern': r'^CUSTOM_[A-Z0-9_]+$'}},
    'required': ['name'],
    'additionalProperties': False,
    'examples': [{'name': 'CUSTOM_FPGA_XILINX'}],
}

# ``?name=startswith:PREFIX`` filters a listing by the start of names.
STARTSWITH = 'startswith:'
NAME_QUERY = {
    'type': 'string', 'maxLength': 255,
    'pattern': r'^(startswith:[^\u0000]*)?$',
    'description': "'startswith:' followed by the start of the names"}


def _item(name, custom):
    return {'name': name, 'custom': custom}


def _listing(request, context, collection, standard, catalog):
    prefix = ''
    wanted = request.GET.get('name')
    if wanted:
        if not wanted.startswith(STARTSWITH) or '\x00' in wanted:
            raise errors.BadRequest(
                f"name must be '{STARTSWITH}' followed by the start of "
                f"the names, not {wanted[:40]!r}.")
        prefix = wanted[len(STARTSWITH):]
    page = pagination.from_request(request)
    items = [_item(name, False) for name in standard]
    items += [_item(name, True) for name in catalog.names(context)]
    items = [item for item in items if item['name'].startswith(prefix)]
    found, more = pagination.of_list(items, lambda item: item['name'],
                                     lambda item: item['name'], page)
    last = found[-1]['name'] if found else None
    return errors.json_response(200, dict(
        {collection: found},
        **pagination.links(request, collection, page, last, more)))


def _one(context, name, rules, catalog):
    """``{name, custom}`` of a standard or created name; 404 if neither."""
    if rules.is_standard(name):
        return _item(name, False)
    if rules.is_custom(name) and catalog.exists(context, name):
        return _item(name, True)
    raise errors.NotFound(f'No {catalog.kind} named {name[:80]!r}.')


def _forget(context, name, rules, catalog):
    if rules.is_standard(name):
        raise errors.BadRequest(f'{name} is a standard {catalog.kind}: it '
                                f'cannot be deleted.')
    if not rules.is_custom(name):
        raise errors.NotFound(f'No {catalog.kind} named {name[:80]!r}.')
    catalog.destroy(context, name)
    return errors.json_response(204)


def class_index(api, request, context):
    return _listing(request, context, 'resource_classes', classes.STANDARD,
                    resource_catalog.CLASSES)


def class_show(api, request, context, name):
    return errors.json_response(200, {'resource_class': _one(
        context, name, classes, resource_catalog.CLASSES)})


def class_create(api, request, context):
    body = schemas.validate(CLASS_CREATE, schemas.parse_json(request))
    name = extra_specs.custom_class(body['name'])
    resource_catalog.CLASSES.create(context, name)
    return errors.json_response(201, {'resource_class': _item(name, True)})


def class_delete(api, request, context, name):
    return _forget(context, name, classes, resource_catalog.CLASSES)


def trait_index(api, request, context):
    return _listing(request, context, 'traits', sorted(traits.standard()),
                    resource_catalog.TRAITS)


def trait_show(api, request, context, name):
    return errors.json_response(200, {'trait': _one(
        context, name, traits, resource_catalog.TRAITS)})


def trait_update(api, request, context, name):
    """Create a custom trait: 201 when new, 204 when it existed."""
    extra_specs.custom_trait(name)
    try:
        resource_catalog.TRAITS.create(context, name)
    except exception.CatalogNameExists:
        return errors.json_response(204)
    return errors.json_response(201, {'trait': _item(name, True)})


def trait_delete(api, request, context, name):
    return _forget(context, name, traits, resource_catalog.TRAITS)
