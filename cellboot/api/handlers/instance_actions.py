"""``/servers/{id}/os-instance-actions``: what was done to a server.

A server's actions live in the cell database that holds it: its create
action and the events of every host and conductor that worked on it. A
server that left a cell for another (the cross-cell flow) has the old
cell's events carried into its create action where it is now, named
``CELL:EVENT`` (``cellboot.objects.instance_history``), so reading the
one cell the mapping names gives the history of every cell the server
went through; a build buried in cell0 has its action there. A server
that is still a build request has no cell yet, and no action to show.

Who may read follows the server: one the caller may not see answers
404 (``server_records.get_mapping``); what an event shows is the
view's (``views.instance_action_detail``).
"""

from cellboot.api import auth
from cellboot.api import errors
from cellboot.api import handlers
from cellboot.api import inputs
from cellboot.api import pagination
from cellboot.api import server_records
from cellboot.api import views
from cellboot import exception
from cellboot.objects import instance_action
from cellboot.policies import instance_actions as action_policies

# A request id is at most this long (its column); a longer one names
# no action.
MAX_REQUEST_ID_LENGTH = 255


def _mapping(context, server_id, rule):
    """The server's mapping if the caller may read its actions.

    404 for a server it may not see, 403 when the policy lets it see the
    server but not ``rule``.
    """
    mapping = server_records.get_mapping(context, server_id)
    auth.authorize(context, rule, {'project_id': mapping.project_id,
                                   'user_id': mapping.user_id})
    return mapping


def _in_cell(context, server_id, mapping, fn):
    """``fn(cctxt)`` in the server's cell, within ``[api] cell_timeout``."""
    return server_records.in_cell(context, server_id, mapping.cell_mapping,
                                  fn, read=True)


def index(api, request, context, server_id):
    page = pagination.from_request(request)
    mapping = _mapping(context, server_id, action_policies.LIST)
    actions = []
    if mapping.cell_mapping is not None:
        try:
            actions = _in_cell(
                context, server_id, mapping, lambda cctxt: instance_action.
                InstanceAction.get_by_instance_uuid(cctxt, server_id))
        except server_records.CellUnreachable as exc:
            return handlers.unavailable(exc)
    # Newest first, as read; the marker is a request id of the list.
    actions, more = pagination.of_list(
        actions, key=lambda action: -action.id,
        ident=lambda action: action.request_id, page=page)
    last = actions[-1].request_id if actions else None
    return errors.json_response(200, dict(
        {'instanceActions': [views.instance_action_summary(action)
                             for action in actions]},
        **pagination.links(request, 'instanceActions', page, last, more)))


def _not_found(server_id, request_id):
    return errors.NotFound(
        f'Action {inputs.printable(request_id)} of server {server_id} '
        f'could not be found.')


def show(api, request, context, server_id, request_id):
    mapping = _mapping(context, server_id, action_policies.SHOW)
    if mapping.cell_mapping is None or \
            len(request_id) > MAX_REQUEST_ID_LENGTH:
        raise _not_found(server_id, request_id)

    def read(cctxt):
        # An unknown request id is an answer of the cell, not its failure.
        try:
            action = instance_action.InstanceAction.get_by_request_id(
                cctxt, server_id, request_id)
        except exception.InstanceActionNotFound:
            return None, ()
        return action, instance_action.InstanceActionEvent.get_by_action(
            cctxt, action.id)

    try:
        action, events = _in_cell(context, server_id, mapping, read)
    except server_records.CellUnreachable as exc:
        return handlers.unavailable(exc)
    if action is None:
        raise _not_found(server_id, request_id)
    return errors.json_response(200, {'instanceAction': views.
                                      instance_action_detail(context, action,
                                                             events)})
