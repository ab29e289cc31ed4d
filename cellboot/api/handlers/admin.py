"""Admin paths: ``/os-hypervisors/detail``, ``/os-cells``, ``/os-flows``.

Each answers 403 to anyone but an administrator.
"""

import re

from cellboot.api import auth
from cellboot.api import errors
from cellboot.api import views
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.workflows import flow_states
from cellboot.workflows import lookup


def _any_case(word):
    return ''.join(f'[{char.upper()}{char.lower()}]' if char.isalpha()
                   else re.escape(char) for char in word)


# ``?state=``: empty (no filter) or a flow state in any case.
FLOW_STATE_QUERY = {
    'type': 'string',
    'pattern': r'^(?:\s*(?:' + '|'.join(
        _any_case(state) for state in flow_states.FLOW_STATES) + r')\s*)?$',
    'description': 'a flow state (any case): ' + ', '.join(
        flow_states.FLOW_STATES)}


def hypervisors(api, request, context):
    auth.require_admin(context)
    names = {cell.uuid: cell.name
             for cell in cell_mapping.CellMapping.get_all(context)}
    hosts = sorted(api.scheduler.host_states(context),
                   key=lambda host: host['service_host'])
    return errors.json_response(200, {'hypervisors': [
        views.hypervisor(host, names) for host in hosts]})


def cells(api, request, context):
    auth.require_admin(context)
    return errors.json_response(200, {'cells': [
        views.cell(cell)
        for cell in cell_mapping.CellMapping.get_all(context)]})


def _plain(flow):
    """A lookup summary with its timestamps as strings."""
    return {key: (value.isoformat() if hasattr(value, 'isoformat')
                  else value) for key, value in flow.items()}


def flows(api, request, context):
    auth.require_admin(context)
    state = request.GET.get('state') or None
    if state is not None:
        try:
            state = flow_states.flow_state(state)
        except ValueError as exc:
            raise errors.BadRequest(f'state: {exc}.')
    instance_uuid = request.GET.get('instance_uuid') or None
    found = lookup.find_flows_everywhere(context, instance_uuid=instance_uuid,
                                         state=state)
    return errors.json_response(200, {'flows': [_plain(flow)
                                                for flow in found]})


def flow(api, request, context, flow_id):
    auth.require_admin(context)
    try:
        found = lookup.get_flow_everywhere(context, flow_id)
    except exception.FlowNotFound:
        raise errors.NotFound(f'Flow {flow_id} could not be found.')
    return errors.json_response(200, {'flow': _plain(found)})
