"""``POST /os-flows/{flow_id}/action``: an administrator acts on a flow.

The body names one action, with no argument (``{"retry": null}``): the
same action as ``cellboot-manage flows retry``, with the same refusals
(``cellboot.flowrun.retrying`` says what it does, and why the
conductors, not the API, run the flow). Answers 202 with no body: the
flow is handed over, the conductors finish it later. 400 for a body
that names no action, an unknown one, or more than one; 404 for an
unknown flow; 409 for a flow its state or its owner keeps from the
action; 503 when a cell or the jobboard does not answer (try again).
"""

import uuid

from oslo_utils import uuidutils

from cellboot.api import errors
from cellboot.api import handlers
from cellboot.api import schemas
from cellboot.conf import CONF
from cellboot import exception
from cellboot.flowrun import jobboard
from cellboot.flowrun import retrying

RETRY = 'retry'

# Each action: ``fn(context, flow_uuid, by, timeout)``.
_ACTIONS = {RETRY: retrying.retry}

FLOW_ACTION = {
    'type': 'object',
    'properties': {name: {'type': 'null'} for name in _ACTIONS},
    'additionalProperties': False,
    'minProperties': 1,
    'maxProperties': 1,
}


def action(api, request, context, flow_id):
    body = schemas.validate(FLOW_ACTION, schemas.parse_json(request))
    (name,) = body
    if not uuidutils.is_uuid_like(flow_id):
        raise errors.NotFound(f'Flow {flow_id} could not be found.')
    by = f'API user {context.user_id} ({context.request_id})'
    try:
        _ACTIONS[name](context, str(uuid.UUID(flow_id)), by,
                       timeout=CONF.api.cell_timeout)
    except exception.FlowNotFound:
        raise errors.NotFound(f'Flow {flow_id} could not be found.')
    except (exception.FlowLookupIncomplete,
            jobboard.JobboardUnavailable) as exc:
        return handlers.unavailable(exc)
    return errors.json_response(202)
