"""Admin paths: ``/os-hypervisors/detail``, ``/os-cells``, ``/os-flows``.

Each answers 403 to anyone its route's policy rule refuses
(administrators only, by default). Each list is paged (``limit``,
``marker``, ``*_links``; see ``cellboot.api.pagination``).
"""

import re

from cellboot.api import errors
from cellboot.api import handlers
from cellboot.api import pagination
from cellboot.api import views
from cellboot.conf import CONF
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.scheduler import cell_aggregates
from cellboot.flowrun import flow_states
from cellboot.flowrun import lookup


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
    """Every cell's hosts, as each cell's scheduler has them; a cell
    whose scheduler does not answer is listed in ``unreachable``."""
    page = pagination.from_request(request)
    found, unanswered = api.scheduler.host_states(context)
    hosts, more = pagination.of_list(
        found, lambda host: (host['service_host'], host['uuid']),
        lambda host: host['uuid'], page)
    names = {cell.uuid: cell.name
             for cell in cell_mapping.CellMapping.get_all(context)}
    last = hosts[-1]['uuid'] if hosts else None
    return errors.json_response(200, dict(
        {'hypervisors': [views.hypervisor(host, names) for host in hosts],
         'unreachable': sorted(cell.name for cell in unanswered)},
        **pagination.links(request, 'hypervisors', page, last, more)))


def cells(api, request, context):
    """The cells, each with its aggregate as the cells' schedulers last
    published it and how old it is (read from the cells' databases)."""
    page = pagination.from_request(request)
    found, more = page.split(cell_mapping.CellMapping.get_page(
        context, page.limit + 1, marker=page.marker))
    figures = cell_aggregates.read_all(
        context, [cell for cell in found if not cell.is_cell0])
    last = found[-1].uuid if found else None
    return errors.json_response(200, dict(
        {'cells': [views.cell(cell, figures.get(cell.uuid))
                   for cell in found]},
        **pagination.links(request, 'cells', page, last, more)))


def _plain(flow):
    """A lookup summary with its timestamps as strings."""
    return {key: (value.isoformat() if hasattr(value, 'isoformat')
                  else value) for key, value in flow.items()}


def flows(api, request, context):
    state = request.GET.get('state') or None
    if state is not None:
        try:
            state = flow_states.flow_state(state)
        except ValueError as exc:
            raise errors.BadRequest(f'state: {exc}.')
    instance_uuid = request.GET.get('instance_uuid') or None
    page = pagination.from_request(request)
    unreachable = []
    found, more = page.split(lookup.find_flows_everywhere(
        context, instance_uuid=instance_uuid, state=state,
        limit=page.limit + 1, marker=page.marker,
        timeout=CONF.api.cell_timeout, unreachable=unreachable))
    last = found[-1]['uuid'] if found else None
    # Where flows could not be read: the listing is partial there.
    return errors.json_response(200, dict(
        {'flows': [_plain(flow) for flow in found],
         'unreachable': sorted(unreachable)},
        **pagination.links(request, 'flows', page, last, more)))


def flow(api, request, context, flow_id):
    try:
        found = lookup.get_flow_everywhere(context, flow_id,
                                           timeout=CONF.api.cell_timeout)
    except exception.FlowNotFound:
        raise errors.NotFound(f'Flow {flow_id} could not be found.')
    except exception.FlowLookupIncomplete as exc:
        return handlers.unavailable(exc)
    return errors.json_response(200, {'flow': _plain(found)})
