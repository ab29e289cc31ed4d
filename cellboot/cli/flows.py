"""``cellboot flow list | show ID [--dot FILE]`` and a server's atom trail.

Flows are an admin path of the API (``/os-flows``). ``flow show`` takes
a flow id or, when no flow has that id, a server id, and shows every
flow about that server. ``server show`` prints the trail of a server's
flows when the token may read them and says nothing otherwise.
"""

from cellboot.cli import client as cli_client
from cellboot.cli import exit_codes
from cellboot.cli import flow_graph
from cellboot.cli import formats
from cellboot.console import output

_ATOM_HEADERS = ['Atom', 'State', 'Duration', 'Result / failure']
_FLOW_HEADERS = ['UUID', 'Name', 'Kind', 'State', 'Location', 'Servers',
                 'Owner', 'Created']


def _duration(seconds):
    return '' if seconds is None else f'{seconds:.3f} s'


def _outcome(atom):
    failure = atom.get('failure')
    if failure:
        return f'{failure.get("type")}: {failure.get("message")}'
    return atom.get('result') or ''


def _print_notes(flow):
    """The operators' retries and abandon of the flow, if any."""
    for entry in flow.get('retries') or ():
        output.say('  Retried: ' + output.one_line(
            f'{entry.get("at")} by {entry.get("by")} from '
            f'{entry.get("from_state")}'))
    note = flow.get('abandoned')
    if isinstance(note, dict):
        output.say('  Abandoned: ' + output.one_line(
            f'{note.get("at")} by {note.get("by")} from '
            f'{note.get("from_state")}; reason: '
            f'{note.get("reason") or "(none given)"}'))


def _print_flow(flow):
    corrupt = flow.get('corrupt')
    state = f'CORRUPT ({flow.get("state")})' if corrupt else flow.get('state')
    output.say(f'Flow {flow.get("uuid")} {flow.get("name") or ""} '
               f'({flow.get("kind") or "?"}, {flow.get("location") or "?"})'
               f': {state}')
    if corrupt:
        output.say('  Corrupt: ' +
                   output.one_line(f'{corrupt}; it is never run'))
    _print_notes(flow)
    output.table(_ATOM_HEADERS, [
        [atom.get('name'), atom.get('state'),
         _duration(atom.get('duration')), output.one_line(_outcome(atom))]
        for atom in flow.get('atoms') or ()])


def get_flow(client, flow_id):
    return client.get(f'/os-flows/{flow_id}')['flow']


def flows_of_server(client, server_id):
    """Every flow about a server, with its atoms, oldest first."""
    found = client.get_all('/os-flows', 'flows', instance_uuid=server_id)
    return [get_flow(client, flow['uuid']) for flow in found]


def _flows_for(client, ident):
    try:
        return [get_flow(client, ident)]
    except cli_client.CLIError as exc:
        if exc.code != exit_codes.NOT_FOUND:
            raise
    found = flows_of_server(client, ident)
    if not found:
        raise cli_client.CLIError(f'no flow has the id {ident}, and no '
                                  f'server with that id has flows',
                                  exit_codes.NOT_FOUND)
    return found


def show(client, args):
    found = _flows_for(client, args.id)
    for flow in found:
        _print_flow(flow)
    if args.dot:
        if len(found) > 1:
            raise cli_client.CLIError(
                f'{args.id} has {len(found)} flows; give one flow id for '
                f'--dot', exit_codes.USAGE)
        path = flow_graph.write(flow_graph.build_graph(found[0]), args.dot)
        output.say(f'Graph written to {path}')
    return exit_codes.OK


def list_flows(client, args):
    query = {'instance_uuid': args.server, 'state': args.state}
    found = client.get_all('/os-flows', 'flows', **{
        name: value for name, value in query.items() if value is not None})
    formats.emit_list(args, _FLOW_HEADERS, [
        [flow.get('uuid'), flow.get('name'), flow.get('kind'),
         f'CORRUPT ({flow.get("state")})' if flow.get('corrupt')
         else flow.get('state'), flow.get('location'),
         ' '.join(flow.get('instance_uuids') or ()), flow.get('owner'),
         flow.get('created_at')] for flow in found])
    return exit_codes.OK


def print_trail(client, server_id):
    """The atoms of a server's flows, if this token may read flows."""
    try:
        found = flows_of_server(client, server_id)
    except cli_client.CLIError as exc:
        if exc.code in (exit_codes.AUTH, exit_codes.NOT_FOUND):
            return
        raise
    for flow in found:
        _print_flow(flow)


def register(subparsers):
    parser = subparsers.add_parser('flow', help='persisted flows (admin)')
    commands = parser.add_subparsers(dest='command', metavar='COMMAND',
                                     required=True)
    sub = commands.add_parser('list', help='the persisted flows, oldest '
                                           'first')
    sub.add_argument('--server', metavar='ID',
                     help='only the flows about this server')
    sub.add_argument('--state', metavar='STATE',
                     help='only flows in this state (RUNNING, SUCCESS, '
                          'REVERTED, ...)')
    formats.add_arguments(sub)
    sub.set_defaults(func=list_flows)
    sub = commands.add_parser('show', help='a flow\'s atoms, states, '
                                           'timings and failures')
    sub.add_argument('id', metavar='ID', help='a flow id, or a server id')
    sub.add_argument('--dot', metavar='FILE',
                     help='also draw the flow: FILE.dot (Graphviz DOT), or '
                          'FILE.svg / FILE.png when Graphviz is installed')
    sub.set_defaults(func=show)
