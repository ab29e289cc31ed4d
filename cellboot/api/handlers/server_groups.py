"""``/os-server-groups``: a project's affinity and anti-affinity groups."""

from cellboot.api import auth
from cellboot.api import errors
from cellboot.api import pagination
from cellboot.api import schemas
from cellboot.api import views
from cellboot import exception
from cellboot.objects import server_group
from cellboot.policies import server_groups as group_policies


def visible_group(context, group_id):
    """The group if the policy lets the caller see it, else None.

    Another project's group is as absent as one that does not exist, so
    that its existence is not revealed.
    """
    try:
        group = server_group.ServerGroup.get_by_uuid(context, group_id)
    except exception.ServerGroupNotFound:
        return None
    if not auth.may(context, group_policies.SHOW, group.project_id,
                    group.user_id):
        return None
    return group


def _get(context, group_id):
    """The group if the caller may see it; 404 otherwise."""
    group = visible_group(context, group_id)
    if group is None:
        raise errors.NotFound(f'Server group {group_id} could not be found.')
    return group


def create(api, request, context):
    body = schemas.validate(schemas.SERVER_GROUP_CREATE,
                            schemas.parse_json(request))['server_group']
    group = server_group.ServerGroup.create(
        context, body['name'], auth.owning_project(context), body['policy'],
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
    auth.authorize(context, group_policies.DELETE,
                   {'project_id': group.project_id,
                    'user_id': group.user_id})
    try:
        group.destroy(context)
    except exception.ServerGroupNotFound:
        raise errors.NotFound(f'Server group {group_id} could not be found.')
    return errors.json_response(204)
