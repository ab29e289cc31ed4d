"""``/flavors/{flavor_id}/os-extra_specs``: a flavor's extra specs.

Anyone reads them (they say what a flavor asks of a host); administrators
set and remove them, by default. What is written is checked first
(``cellboot.api.extra_specs``): a bad key or value is a 400 naming it,
and nothing is written. A spec changed on a flavor applies to boots
asked after the change: a server's request spec keeps the flavor as it
was when the server was asked for.
"""

from cellboot.api import errors
from cellboot.api import extra_specs
from cellboot.api.handlers import flavors
from cellboot.api import schemas
from cellboot import exception
from cellboot.objects import flavor_extra_specs


def index(api, request, context, flavor_id):
    item = flavors.find(context, flavor_id)
    return errors.json_response(200, {'extra_specs': item.extra_specs})


def create(api, request, context, flavor_id):
    """Set the body's keys (new or changed); the others stay."""
    body = schemas.validate(schemas.EXTRA_SPECS_CREATE,
                            schemas.parse_json(request))
    item = flavors.find(context, flavor_id)
    wanted = body['extra_specs']
    extra_specs.check(context, dict(item.extra_specs, **wanted))
    flavor_extra_specs.update(context, item.id, wanted)
    return errors.json_response(200, {'extra_specs': wanted})


def show(api, request, context, flavor_id, key):
    item = flavors.find(context, flavor_id)
    if key not in item.extra_specs:
        raise errors.NotFound(str(exception.FlavorExtraSpecNotFound(
            flavor=flavor_id[:255], key=key[:255])))
    return errors.json_response(200, {key: item.extra_specs[key]})


def update(api, request, context, flavor_id, key):
    """Set one key: the body is ``{key: value}`` with the path's key."""
    body = schemas.validate(schemas.EXTRA_SPEC_UPDATE,
                            schemas.parse_json(request))
    if list(body) != [key]:
        raise errors.BadRequest(
            f'The body must set the key of the path ({key[:80]!r}), not '
            f'{next(iter(body))[:80]!r}.')
    item = flavors.find(context, flavor_id)
    extra_specs.check(context, dict(item.extra_specs, **body))
    flavor_extra_specs.update(context, item.id, body)
    return errors.json_response(200, body)


def delete(api, request, context, flavor_id, key):
    item = flavors.find(context, flavor_id)
    flavor_extra_specs.delete(context, item.id, key,
                              flavorid=item.flavorid)
    return errors.json_response(204)
