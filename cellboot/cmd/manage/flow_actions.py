"""``cellboot-manage flows retry|purge``: acting on flows.

``flows list``/``show`` (``cellboot.cmd.manage.flows``) say what a flow
did; these act on it. ``retry`` hands a FAILURE or stuck flow back to
the conductors (``cellboot.flowrun.retrying``, shared with the REST
action, says why the conductors run it, not this command); ``purge``
is the flows part of ``db purge`` (``cellboot.cmd.manage.purge``).
"""

import argparse
import uuid

from oslo_utils import uuidutils

from cellboot.cmd.manage import purge as manage_purge
from cellboot.console import output
from cellboot.console import parsing
from cellboot import exception


# ``flows retry``: the flow's state or owner forbids it.
EXIT_REFUSED = 3


def flow_id(text):
    """A flow id (a UUID); anything else is a wrong command line."""
    if not uuidutils.is_uuid_like(text):
        raise argparse.ArgumentTypeError(
            f'{text!r} is not a flow id (a UUID, from `flows list`)')
    return str(uuid.UUID(text))   # as stored: lower case, dashed


def _operator():
    """Who acts, as a retried flow's meta records it."""
    from cellboot.flowrun import records
    return f'cellboot-manage {records.owner_name()}'


def _act(action, context, flow_uuid):
    """Run ``action``; ``(result, None)`` or ``(None, exit code)``."""
    try:
        return action(context, flow_uuid, _operator()), None
    except exception.FlowNotFound:
        output.error(f'no flow has id {flow_uuid}; searched the flow '
                     f'database and every mapped cell (`cellboot-manage '
                     f'flows list` shows what there is)')
        return None, parsing.EXIT_ERROR
    except exception.FlowActionRefused as exc:
        output.error(str(exc))
        return None, EXIT_REFUSED


def retry(context, args):
    """Hand a FAILURE or stuck flow back to its conductors."""
    from cellboot.flowrun import retrying
    done, code = _act(retrying.retry, context, args.flow)
    if done is None:
        return code
    reset = ', '.join(done['reset_atoms']) or 'none'
    output.say(f'Flow {done["flow"]} ({done["kind"]}, {done["location"]}) '
               f'was {done["from_state"] or "never started"}; handed to '
               f'{done["handed_to"]}, which resume it from its last good '
               f'atom. Atoms to run again: {reset}.')
    return parsing.EXIT_OK


def register(commands):
    """Add the acting commands to the ``flows`` group's."""
    command = parsing.add_command(
        commands, 'purge', manage_purge.purge_flows,
        'delete the flows that ended before a date',
        'Delete the TaskFlow rows (flow details, their atoms, and their '
        'logbooks once empty) of the flows that ended, SUCCESS or '
        'REVERTED, before DATE: boot flows in the flow database and '
        'reschedule flows in every mapped cell\'s database. Unfinished '
        'flows and FAILURE flows (an operator has to retry them '
        'first) are never touched, so it is safe while the '
        'conductors run. The same work as the flows part of `db purge`, '
        'in batches of short transactions; one line per database, a '
        'progress line every 10 s on stderr (each batch with --verbose).',
        exit_codes=((parsing.EXIT_ERROR, 'a database could not be purged '
                                         '(the others were)'),
                    (parsing.EXIT_USAGE, 'the command line is wrong, e.g. '
                                         'DATE is not a date or is in the '
                                         'future')))
    command.add_argument(
        '--ended-before', required=True, type=manage_purge.parse_before,
        metavar='DATE',
        help='purge the flows that ended before this moment: an ISO 8601 '
             'date or time, UTC unless it names a zone (2026-01-31, '
             '2026-01-31T12:00:00+01:00)')
    manage_purge.add_batch_options(command)
    command = parsing.add_command(
        commands, 'retry', retry,
        'hand a FAILURE or stuck flow back to the conductors',
        'Make the conductors finish a flow from its last good atom: a '
        'flow that ended FAILURE (an atom failed, and its revert too), or '
        'an unfinished flow that nobody runs (its conductor died). The '
        'flow is fenced (a run of it that might still be alive stops at '
        'its next write), a FAILURE flow\'s atoms that did not succeed '
        'go back to PENDING, and the flow is handed over as the '
        'conductors\' sweep would: posted on its jobboard, or, without '
        'a jobboard, left to the conductors of its host (their next '
        'sweep, or their start). Atoms are idempotent, so a step run '
        'again after its revert is safe. Refused: a flow that ended '
        'SUCCESS or REVERTED, a corrupt flow, a flow a live conductor '
        'runs (or, without a jobboard, a stuck flow of another host: run '
        'the command there).',
        exit_codes=((parsing.EXIT_ERROR, 'no flow has that id, or a '
                                         'database or the jobboard cannot '
                                         'be reached'),
                    (parsing.EXIT_USAGE, 'FLOW_ID is not a UUID'),
                    (EXIT_REFUSED, 'refused: the flow\'s state or owner '
                                   'forbids it (the ERROR line says '
                                   'which)')))
    command.add_argument('flow', metavar='FLOW_ID', type=flow_id,
                         help='the id of the flow (from `flows list`)')
