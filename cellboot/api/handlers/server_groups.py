"""``/os-server-groups``: a project's affinity and anti-affinity groups."""

from cellboot.api import errors
from cellboot.api import pagination
from cellboot.api import schemas
from cellboot.api import views
from cellboot import exception
from cellboot.objects import server_group


def _get(context, group_id):
    """The group if the caller may see it; 404 otherwise."""
    try:
        group = server_group.ServerGroup.get_by_uuid(context, group_id)
    except exception.ServerGroupNotFound:
        group = None
    if group is None or (group.project_id != context.project_id
                         and not context.is_admin):
        raise errors.NotFound(f'Server group {group_id} could not be found.')
    return group


def create(api, request, context):
    body = schemas.validate(schemas.SERVER_GROUP_CREATE,
                            schemas.parse_json(request))['server_group']
    group = server_group.ServerGroup.create(
        context, body['name'], context.project_id, body['policy'],
        user_id=context.user_id)
    return errors.json_response(200, {'server_group':
                                      views.server_group(group)})


def index(api, request, context):
    page = pagination.from_request(request)
    groups, more = page.split(server_group.ServerGroup.get_page(
        context, context.project_id, page.limit + 1, marker=page.marker))
    last = groups[-1].uuid if groups else None
    return errors.json_response(200, dict(
        {'server_groups': [views.server_group(group) for group in groups]},
        **pagination.links(request, 'server_groups', page, last, more)))


def show(api, request, context, group_id):
    return errors.json_response(200, {'server_group': views.server_group(
        _get(context, group_id))})


def delete(api, request, context, group_id):
    group = _get(context, group_id)
    try:
        group.destroy(context)
    except exception.ServerGroupNotFound:
        raise errors.NotFound(f'Server group {group_id} could not be found.')
    return errors.json_response(204)
