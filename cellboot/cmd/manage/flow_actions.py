"""``cellboot-manage flows retry|abandon|purge``: acting on flows.

``flows list``/``show`` (``cellboot.cmd.manage.flows``) say what a flow
did; these act on it. ``retry`` hands a FAILURE or stuck flow back to
the conductors (``cellboot.flowrun.retrying``, shared with the REST
action, says why the conductors run it, not this command); ``abandon``
ends such a flow for good, its instances settled by the conductors'
sweeps (``cellboot.flowrun.abandoning``, shared with the REST action);
``purge`` is the flows part of ``db purge``
(``cellboot.cmd.manage.purge``).
"""

import argparse
import uuid

from oslo_utils import uuidutils

from cellboot.cmd.manage import purge as manage_purge
from cellboot.console import output
from cellboot.console import parsing
from cellboot import exception


# ``flows retry``/``abandon``: the flow's state or owner forbids it.
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


def reason_text(text):
    """An abandon's ``--reason`` (``abandoning.valid_reason``)."""
    from cellboot.flowrun import abandoning
    try:
        return abandoning.valid_reason(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc))


def _act(action, context, flow_uuid, **kwargs):
    """Run ``action``; ``(result, None)`` or ``(None, exit code)``."""
    try:
        return action(context, flow_uuid, _operator(), **kwargs), None
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


def abandon(context, args):
    """End a FAILURE or stuck flow for good; the sweeps settle the rest."""
    from cellboot.flowrun import abandoning
    done, code = _act(abandoning.abandon, context, args.flow,
                      reason=args.reason)
    if done is None:
        return code
    instances = ', '.join(done['instance_uuids']) or 'none'
    output.say(f'Flow {done["flow"]} ({done["kind"]}, {done["location"]}) '
               f'was {done["from_state"] or "never started"}; it is '
               f'abandoned (FAILURE, never resumed). Its instances '
               f'({instances}) are settled by {done["settled_by"]}: in '
               f'ERROR, or buried in cell0 if they never reached a cell, '
               f'with a fault naming the abandon; a build a compute host '
               f'took is left to that host.')
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
        'SUCCESS or REVERTED or that an operator abandoned (`flows '
        'abandon`), a corrupt flow, a flow a live conductor '
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
    command = parsing.add_command(
        commands, 'abandon', abandon,
        'end a FAILURE or stuck flow for good; its servers end in ERROR',
        'Give up on a flow rather than retry it: a flow that ended '
        'FAILURE, or an unfinished flow that nobody runs (its conductor '
        'died). The flow is fenced (a run of it that might still be '
        'alive stops at its next write), set to FAILURE and noted as '
        'abandoned (by whom, when, why: `flows show`); no conductor '
        'resumes it and `flows retry` refuses it. The conductors\' next '
        'sweep then settles its instances, each with a fault saying an '
        'operator abandoned the flow (with the reason): a boot flow\'s '
        'server that never reached a cell is buried in cell0, one in a '
        'cell that no compute host took ends in ERROR, a reschedule '
        'flow\'s server that no host builds ends in ERROR; their claims '
        'are given back. A build a compute host already took is left to '
        'that host (it finishes it, or the BUILD timeout ends it). '
        'Refused as `flows retry` is: a flow that ended SUCCESS or '
        'REVERTED or was abandoned already, a cross-cell flow (retry '
        'it), a corrupt flow, a flow a '
        'live conductor runs or whose job is held, or, without a '
        'jobboard, a stuck flow of another host (run the command '
        'there).',
        exit_codes=((parsing.EXIT_ERROR, 'no flow has that id, or a '
                                         'database or the jobboard cannot '
                                         'be reached'),
                    (parsing.EXIT_USAGE, 'FLOW_ID is not a UUID, or the '
                                         'reason is too long or holds a '
                                         'control character'),
                    (EXIT_REFUSED, 'refused: the flow\'s state or owner '
                                   'forbids it (the ERROR line says '
                                   'which)')))
    command.add_argument('flow', metavar='FLOW_ID', type=flow_id,
                         help='the id of the flow (from `flows list`)')
    command.add_argument(
        '--reason', type=reason_text, metavar='TEXT',
        help='why, recorded with the flow and in each instance\'s fault '
             '(at most 255 characters, one line)')
