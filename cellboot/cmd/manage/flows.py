"""``cellboot-manage flows``: what the conductors' flows did, and where.

Every boot is a persisted TaskFlow flow in the flow database, every
reschedule one in its cell's database. When a server ends in ERROR, or
stays BUILD, the operator's first question is which step did what:
``flows list`` finds the flows (by state, by instance, by how long their
conductor has held them) across the flow database and every mapped cell;
``flows show`` prints one flow, or every flow of one instance (its boot
and its reschedules, oldest first), atom by atom: state, duration, what
it returned and how it failed.

With several conductors, a flow may change hands: a conductor that died
leaves its flows to another, which resumes them. Both commands say who
owns each flow and since when, so that an operator can tell a flow under
way from one that nobody runs any more; ``flows show`` lists each
resumption.

The reading itself is ``cellboot.flowrun.lookup``'s, shared with the
REST API; this module only chooses what to print and the exit codes.
Acting on flows (``retry``, ``purge``) is ``flow_actions``'.
"""

import argparse
import datetime
import json
import textwrap

from oslo_utils import timeutils

from cellboot.cmd.manage import flow_actions
from cellboot.console import output
from cellboot.console import parsing
from cellboot import exception
from cellboot.flowrun import flow_states

# Flow states an operator may filter on, as TaskFlow names them.
FLOW_STATES = flow_states.FLOW_STATES

_LIST_HEADERS = ['Flow ID', 'Name', 'State', 'Instances', 'Owner', 'Since',
                 'Resumed', 'Updated', 'Where']

_ATOM_HEADERS = ['Atom', 'Type', 'State', 'Duration', 'Result', 'Failure']

# Instance uuids printed in full by ``flows show`` (a multi-create has
# hundreds; ``flows list --instance`` finds the flow of any of them).
SHOWN_INSTANCES = 5


def _lookup():
    """``cellboot.flowrun.lookup``, imported on first use.

    It imports TaskFlow's engines, which the other groups' commands need
    not pay for.
    """
    from cellboot.flowrun import lookup
    return lookup


def _summaries():
    """``cellboot.flowrun.summaries``, imported on first use (as above)."""
    from cellboot.flowrun import summaries
    return summaries


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


def format_age(seconds):
    """A time span, short: '45s', '3m12s', '2h05m', '3d04h'."""
    seconds = int(seconds)
    if seconds < 60:
        return f'{seconds}s'
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f'{minutes}m{seconds:02d}s'
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f'{hours}h{minutes:02d}m'
    days, hours = divmod(hours, 24)
    return f'{days}d{hours:02d}h'


def format_iso(moment):
    """An aware datetime as ISO 8601 UTC to the second: '...T08:30:01Z'."""
    utc = moment.astimezone(datetime.timezone.utc)
    return utc.strftime('%Y-%m-%dT%H:%M:%SZ')


def age_seconds(moment, now):
    """Whole seconds from ``moment`` to ``now`` (negative: in the future)."""
    return int((now - moment).total_seconds())


def format_since(moment, now):
    """When a conductor took a flow, and how long ago.

    '2026-11-22T08:30:01Z (3m12s ago)'; a time ahead of this host's
    clock (another host's clock runs ahead) says so: '(in 4s)'.
    """
    if moment is None:
        return ''
    age = age_seconds(moment, now)
    when = f'{format_age(age)} ago' if age >= 0 else f'in {format_age(-age)}'
    return f'{format_iso(moment)} ({when})'


def format_resumption(resumption, by_width=0):
    """One resumption of a flow: when, by which conductor, from what.

    An ``at`` that cannot be read is printed as it was written.
    """
    moment = _summaries().parse_time(resumption['at'])
    at = format_iso(moment) if moment else str(resumption['at'] or '?')
    by = str(resumption['by'] or '?')
    return (f'{at}  by {by.ljust(by_width)}  from '
            f'{resumption["from_state"] or "?"}')


def format_instances(instance_uuids, shown=1):
    """The first ``shown`` instance uuids, and how many more there are."""
    text = ', '.join(instance_uuids[:shown])
    if len(instance_uuids) > shown:
        text += f' (+{len(instance_uuids) - shown} more)'
    return text


def flow_state(text):
    """``--state`` as TaskFlow spells it; any case accepted.

    An argparse type: anything else is a wrong command line (exit 2),
    like any other malformed option value.
    """
    try:
        return flow_states.flow_state(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc))


def seconds(text):
    """``--older-than``: a number of seconds, zero or more."""
    try:
        value = float(text)
    except ValueError:
        value = -1
    if not value >= 0:      # also refuses nan
        raise argparse.ArgumentTypeError(
            f'{text!r} is not a number of seconds (0 or more)')
    return value


def shown_state(flow):
    """A flow's state as printed: ``CORRUPT (STATE)`` for a corrupt one.

    A corrupt flow is never run (``cellboot.flowrun.kinds``): its
    stored state says nothing of what will become of it.
    """
    if flow['corrupt']:
        return f'CORRUPT ({flow["state"]})'
    return flow['state']


def list_row(flow, now):
    """One ``flows list`` table row."""
    return [flow['uuid'], flow['name'], shown_state(flow),
            format_instances(flow['instance_uuids']), flow['owner'],
            format_since(flow['since'], now), len(flow['resumptions']),
            format_time(flow['updated_at']), flow['location']]


def _iso_or_none(moment):
    """``moment`` (datetime or ISO text) as ``format_iso`` text, or None."""
    parsed = _summaries().parse_time(moment)
    return format_iso(parsed) if parsed else None


def list_record(flow, now):
    """One flow of ``flows list --json``: plain JSON values, UTC times."""
    since = flow['since']
    return {
        'uuid': flow['uuid'],
        'name': flow['name'],
        'kind': flow['kind'],
        'state': flow['state'],
        'corrupt': flow['corrupt'],
        'instance_uuids': flow['instance_uuids'],
        'owner': flow['owner'],
        'since': format_iso(since) if since else None,
        'age_seconds': age_seconds(since, now) if since else None,
        'resumed': len(flow['resumptions']),
        'resumptions': [dict(entry, at=_iso_or_none(entry['at'])
                             or entry['at'])
                        for entry in flow['resumptions']],
        'conductor': flow['conductor'],
        'started_at': _iso_or_none(flow['started_at']),
        'created_at': _iso_or_none(flow['created_at']),
        'updated_at': _iso_or_none(flow['updated_at']),
        'request_id': flow['request_id'],
        'location': flow['location'],
    }


def _now():
    return timeutils.utcnow(with_timezone=True)


def list_flows(context, args):
    """Print the matching flows of every database, oldest first."""
    now = _now()
    since_before = None
    if args.older_than is not None:
        since_before = now - datetime.timedelta(seconds=args.older_than)
    flows = _lookup().find_flows_everywhere(
        context, instance_uuid=args.instance, state=args.state,
        since_before=since_before)
    if args.json:
        output.say(json.dumps(
            {'flows': [list_record(flow, now) for flow in flows]},
            indent=2, sort_keys=True))
    else:
        output.table(_LIST_HEADERS,
                     [list_row(flow, now) for flow in flows])
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


def _print_flow(flow, now):
    output.say(f'Flow {flow["uuid"]} ({flow["name"]}): {shown_state(flow)}')
    fields = (
        ('Corrupt', flow['corrupt'] and
         f'{flow["corrupt"]}; it is never run'),
        ('Kind', flow['kind']),
        ('Where', flow['location']),
        ('Instances', format_instances(flow['instance_uuids'],
                                       SHOWN_INSTANCES)),
        ('Conductor', flow['conductor']),
        ('Owner', flow['owner']),
        ('Since', format_since(flow['since'], now)),
        ('Request', flow['request_id']),
        ('Started', format_time(flow['started_at'] or flow['created_at'])),
        ('Updated', format_time(flow['updated_at'])),
        ('Duration', format_duration(flow['duration'])),
    )
    for label, value in fields:
        if value:
            output.say(f'  {label + ":":<11}{value}')
    _print_resumptions(flow['resumptions'])
    _print_resumptions(flow['retries'], 'Retries')
    _print_abandon(flow['abandoned'])
    output.table(_ATOM_HEADERS, [
        [atom['name'], atom['type'], atom['state'],
         format_duration(atom['duration']), atom.get('result') or '',
         (atom['failure'] or {}).get('type', '')]
        for atom in flow['atoms']])
    _print_failures(flow['atoms'])


def _print_resumptions(resumptions, title='Resumptions'):
    """Each time a conductor took the flow over after it had started
    (or, ``title`` Retries, an operator retried it).

    Printed only when there are some: a flow run once, by the conductor
    that created it, shows nothing here.
    """
    if not resumptions:
        return
    output.say(f'  {title} ({len(resumptions)}):')
    width = max(len(str(entry['by'] or '?')) for entry in resumptions)
    for resumption in resumptions:
        output.say(f'    {format_resumption(resumption, width)}'.rstrip())


def _print_abandon(note):
    """Who abandoned the flow, when, from which state, and why."""
    if note is not None:
        output.say(f'  Abandoned: {format_resumption(note)}'.rstrip())
        settled = note['settled_at'] or 'by the sweeps'
        output.say(f'    Reason: {note["reason"] or "(none given)"}; '
                   f'instances settled: {settled}')


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
    now = _now()
    for number, flow in enumerate(flows):
        if number:
            output.say()
        _print_flow(flow, now)
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
        'first, and how many more), the conductor that owns it (runs it, '
        'or last ran it) and since when, how many times it was resumed '
        'by another conductor, when it was last updated, and where it is '
        'stored. A cell that cannot be read is skipped with a warning. '
        'A corrupt flow (one no conductor will run: its row names an '
        'unknown kind or code that is not cellboot\'s) shows the state '
        'CORRUPT (STATE).')
    command.add_argument(
        '--state', metavar='STATE', type=flow_state,
        help=f'only flows in this state ({", ".join(FLOW_STATES)}; any '
             f'case); RUNNING lists the flows still under way or left by '
             f'a conductor that died')
    command.add_argument(
        '--instance', metavar='UUID',
        help='only the flows that work on this instance')
    command.add_argument(
        '--older-than', metavar='SECONDS', type=seconds,
        help='only the flows whose owner has held them for more than '
             'SECONDS (the Since column); with --state RUNNING, the flows '
             'that may be stuck')
    command.add_argument(
        '--json', action='store_true',
        help='print {"flows": [...]} as JSON instead of a table, for '
             'scripts: every column, the instance uuids in full, times '
             'in ISO 8601 UTC and the owner\'s age in seconds')
    command = parsing.add_command(
        commands, 'show', show, 'show a flow, or an instance\'s flows',
        'Show a flow by its id, or every flow of an instance (its boot '
        'flow and any reschedule flows, oldest first): the flow\'s state, '
        'instances, conductor, owner (since when), each resumption by '
        'another conductor (when, by whom, from which state), each '
        'operator\'s retry, the operator\'s abandon (and why) and timing, '
        'then each atom\'s state, duration, result summary and failure '
        '(type and message). A corrupt flow says so, and why.',
        exit_codes=((parsing.EXIT_ERROR, 'no flow has that id and none '
                                         'works on that instance'),))
    command.add_argument(
        'ident', metavar='FLOW_ID|INSTANCE_UUID',
        help='a flow id (from `flows list`) or an instance uuid')
    flow_actions.register(commands)
