"""``cellboot-manage flows``: what the conductors' flows did, and where.

Every boot is a persisted TaskFlow flow in the flow database, every
reschedule one in its cell's database. When a server ends in ERROR, or
stays BUILD, the operator's first question is which step did what:
``flows list`` finds the flows (by state, by instance) across the flow
database and every mapped cell; ``flows show`` prints one flow, or every
flow of one instance (its boot and its reschedules, oldest first), atom
by atom: state, duration, what it returned and how it failed.

The reading itself is ``cellboot.workflows.lookup``'s, shared with the
REST API; this module only chooses what to print and the exit codes.
"""

import textwrap

from taskflow import states

from cellboot.cmd.manage import output
from cellboot.cmd.manage import parsing
from cellboot import exception

# Flow states an operator may filter on, as TaskFlow names them.
FLOW_STATES = (states.PENDING, states.RUNNING, states.SUCCESS,
               states.FAILURE, states.REVERTED, states.SUSPENDED,
               states.RESUMING, states.REVERTING, states.SUSPENDING)

_LIST_HEADERS = ['Flow ID', 'Name', 'State', 'Instances', 'Conductor',
                 'Started', 'Updated', 'Where']

_ATOM_HEADERS = ['Atom', 'Type', 'State', 'Duration', 'Result', 'Failure']

# Instance uuids printed in full by ``flows show`` (a multi-create has
# hundreds; ``flows list --instance`` finds the flow of any of them).
SHOWN_INSTANCES = 5


def _lookup():
    """``cellboot.workflows.lookup``, imported on first use.

    It imports TaskFlow's engines, which the other groups' commands need
    not pay for.
    """
    from cellboot.workflows import lookup
    return lookup


def format_time(value):
    """A timestamp (datetime or ISO 8601 text) to the second, UTC."""
    if value is None:
        return ''
    text = value if isinstance(value, str) else value.isoformat()
    return text.replace('T', ' ')[:19]


def format_duration(seconds):
    """Seconds as an operator reads them: '850 ms', '2.4 s', '3 min 5 s'."""
    if seconds is None:
        return ''
    if seconds < 1:
        return f'{seconds * 1000:.0f} ms'
    if seconds < 60:
        return f'{seconds:.1f} s'
    minutes, rest = divmod(int(round(seconds)), 60)
    return f'{minutes} min {rest} s'


def format_instances(instance_uuids, shown=1):
    """The first ``shown`` instance uuids, and how many more there are."""
    text = ', '.join(instance_uuids[:shown])
    if len(instance_uuids) > shown:
        text += f' (+{len(instance_uuids) - shown} more)'
    return text


def _flow_state(text):
    """``--state`` as TaskFlow spells it; any case accepted."""
    state = text.upper()
    if state not in FLOW_STATES:
        raise exception.Invalid(
            reason=f'--state {text} is no flow state; use one of '
                   f'{", ".join(FLOW_STATES)}')
    return state


def list_flows(context, args):
    """Print the matching flows of every database, oldest first."""
    state = _flow_state(args.state) if args.state else None
    flows = _lookup().find_flows_everywhere(
        context, instance_uuid=args.instance, state=state)
    output.table(_LIST_HEADERS, [
        [flow['uuid'], flow['name'], flow['state'],
         format_instances(flow['instance_uuids']), flow['conductor'],
         format_time(flow['started_at'] or flow['created_at']),
         format_time(flow['updated_at']), flow['location']]
        for flow in flows])
    return parsing.EXIT_OK


def _details(context, ident):
    """The flow ``ident``, else every flow of instance ``ident``."""
    lookup = _lookup()
    try:
        return [lookup.get_flow_everywhere(context, ident)]
    except exception.FlowNotFound:
        pass
    return [lookup.get_flow_everywhere(context, flow['uuid'])
            for flow in lookup.find_flows_everywhere(
                context, instance_uuid=ident)]


def _print_flow(flow):
    output.say(f'Flow {flow["uuid"]} ({flow["name"]}): {flow["state"]}')
    fields = (
        ('Kind', flow['kind']),
        ('Where', flow['location']),
        ('Instances', format_instances(flow['instance_uuids'],
                                       SHOWN_INSTANCES)),
        ('Conductor', flow['conductor']),
        ('Request', flow['request_id']),
        ('Started', format_time(flow['started_at'] or flow['created_at'])),
        ('Updated', format_time(flow['updated_at'])),
        ('Duration', format_duration(flow['duration'])),
    )
    for label, value in fields:
        if value:
            output.say(f'  {label + ":":<11}{value}')
    output.table(_ATOM_HEADERS, [
        [atom['name'], atom['type'], atom['state'],
         format_duration(atom['duration']), atom.get('result') or '',
         (atom['failure'] or {}).get('type', '')]
        for atom in flow['atoms']])
    _print_failures(flow['atoms'])


def _print_failures(atoms):
    """Each failed atom's exception, whole, under the table.

    Failure messages (a scheduler's reason, a host's error) are long;
    in the table they would make every row as wide as the longest.
    """
    failed = [atom for atom in atoms if atom['failure']]
    if not failed:
        return
    output.say('Failures:')
    for atom in failed:
        failure = atom['failure']
        text = output.one_line(f'{failure["type"]}: {failure["message"]}')
        output.say(textwrap.fill(text, width=79,
                                 initial_indent=f'  {atom["name"]}: ',
                                 subsequent_indent='    '))


def show(context, args):
    """Print one flow, or every flow of one instance, atom by atom."""
    flows = _details(context, args.ident)
    if not flows:
        output.error(f'no flow has id {args.ident} and no flow works on an '
                     f'instance {args.ident}; searched the flow database '
                     f'and every mapped cell (`cellboot-manage flows list` '
                     f'shows what there is)')
        return parsing.EXIT_ERROR
    for number, flow in enumerate(flows):
        if number:
            output.say()
        _print_flow(flow)
    return parsing.EXIT_OK


def register(groups):
    commands = parsing.add_group(
        groups, 'flows', 'inspect the conductors\' persisted flows',
        'Inspect the persisted flows of the conductors: boot flows in the '
        'flow database ([flow_persistence] connection) and reschedule '
        'flows in every mapped cell\'s database. Needs [api_database] '
        'connection to find the cells.')
    command = parsing.add_command(
        commands, 'list', list_flows, 'list flows',
        'List the flows of the flow database and of every mapped cell, '
        'oldest first: id, name, state, the instances it works on (the '
        'first, and how many more), the conductor that ran it, when it '
        'started and was last updated, and where it is stored. A cell '
        'that cannot be read is skipped with a warning.')
    command.add_argument(
        '--state', metavar='STATE',
        help=f'only flows in this state ({", ".join(FLOW_STATES)}); '
             f'RUNNING lists the flows still under way or left by a '
             f'conductor that died')
    command.add_argument(
        '--instance', metavar='UUID',
        help='only the flows that work on this instance')
    command = parsing.add_command(
        commands, 'show', show, 'show a flow, or an instance\'s flows',
        'Show a flow by its id, or every flow of an instance (its boot '
        'flow and any reschedule flows, oldest first): the flow\'s state, '
        'instances, conductor and timing, then each atom\'s state, '
        'duration, result summary and failure (type and message).',
        exit_codes=((parsing.EXIT_ERROR, 'no flow has that id and none '
                                         'works on that instance'),))
    command.add_argument(
        'ident', metavar='FLOW_ID|INSTANCE_UUID',
        help='a flow id (from `flows list`) or an instance uuid')
