"""``POST /os-flows/{flow_id}/action``: an administrator acts on a flow.

The body names one action:

* ``{"retry": null}``: the same action as ``cellboot-manage flows
  retry``, with the same refusals (``cellboot.flowrun.retrying`` says
  what it does, and why the conductors, not the API, run the flow);
* ``{"abandon": null}`` or ``{"abandon": {"reason": "text"}}``: the
  same action as ``cellboot-manage flows abandon``
  (``cellboot.flowrun.abandoning``): the flow ends FAILURE for good and
  the conductors' next sweep settles its instances with a fault naming
  the abandon (and the reason: at most 255 characters, no control
  character or line break).

Answers 202 with no body: the conductors finish (retry) or settle
(abandon) later. 400 for a body that names no action, an unknown one,
more than one, or a bad argument; 404 for an unknown flow; 409 for a
flow its state or its owner keeps from the action; 503 when a cell or
the jobboard does not answer (try again).
"""

import uuid

from oslo_utils import uuidutils

from cellboot.api import errors
from cellboot.api import handlers
from cellboot.api import schemas
from cellboot.conf import CONF
from cellboot import exception
from cellboot.flowrun import abandoning
from cellboot.flowrun import jobboard
from cellboot.flowrun import retrying

RETRY = 'retry'
ABANDON = 'abandon'


def _retry(context, flow_uuid, by, argument, timeout):
    return retrying.retry(context, flow_uuid, by, timeout=timeout)


def _abandon(context, flow_uuid, by, argument, timeout):
    try:
        # The schema refuses what this does; kept so that the two can
        # never disagree into a 500.
        reason = abandoning.valid_reason((argument or {}).get('reason'))
    except ValueError as exc:
        raise errors.BadRequest(f'Invalid input for field/attribute '
                                f'abandon/reason: {exc}.')
    return abandoning.abandon(context, flow_uuid, by, reason=reason,
                              timeout=timeout)


# Each action: ``fn(context, flow_uuid, by, argument, timeout)``, and
# the schema of its argument.
_ACTIONS = {RETRY: _retry, ABANDON: _abandon}
_ARGUMENTS = {
    RETRY: {'type': 'null'},
    ABANDON: {'oneOf': [
        {'type': 'null'},
        {'type': 'object',
         'properties': {'reason': {
             'type': 'string', 'maxLength': abandoning.MAX_REASON,
             'pattern': abandoning.REASON_PATTERN}},
         'additionalProperties': False}]},
}

FLOW_ACTION = {
    'type': 'object',
    'properties': _ARGUMENTS,
    'additionalProperties': False,
    'minProperties': 1,
    'maxProperties': 1,
}


def action(api, request, context, flow_id):
    body = schemas.validate(FLOW_ACTION, schemas.parse_json(request))
    ((name, argument),) = body.items()
    if not uuidutils.is_uuid_like(flow_id):
        raise errors.NotFound(f'Flow {flow_id} could not be found.')
    by = f'API user {context.user_id} ({context.request_id})'
    try:
        _ACTIONS[name](context, str(uuid.UUID(flow_id)), by, argument,
                       timeout=CONF.api.cell_timeout)
    except exception.FlowNotFound:
        raise errors.NotFound(f'Flow {flow_id} could not be found.')
    except (exception.FlowLookupIncomplete,
            jobboard.JobboardUnavailable) as exc:
        return handlers.unavailable(exc)
    return errors.json_response(202)
