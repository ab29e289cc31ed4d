"""``cellboot server event list ID | show ID REQUEST_ID``.

A server's actions and their events (``/os-instance-actions``): what
was done to it, and why a build went to another host or cell. Users
read each event's sentence; administrators also its host and the
services' own words (``details``), as the API shows them. The ids go
into the path quoted, so that no argument can reach another path.
"""

import urllib.parse

from cellboot.cli import exit_codes
from cellboot.console import output

_LIST_HEADERS = ['Request ID', 'Action', 'Start Time', 'Updated',
                 'Message']
_EVENT_HEADERS = ['Event', 'Result', 'Start Time', 'Finish Time',
                  'Message']
# What an event shows to administrators only, and its column.
_ADMIN_COLUMNS = (('host', 'Host'), ('details', 'Details'))


def _path(server_id, request_id=None):
    parts = [urllib.parse.quote(server_id, safe=''), 'os-instance-actions']
    if request_id is not None:
        parts.append(urllib.parse.quote(request_id, safe=''))
    return '/servers/' + '/'.join(parts)


def list_events(client, args):
    actions = client.get_all(_path(args.id), 'instanceActions')
    output.table(_LIST_HEADERS, [
        [action.get('request_id'), action.get('action'),
         action.get('start_time'), action.get('updated_at'),
         action.get('message')] for action in actions])
    return exit_codes.OK


def show_event(client, args):
    action = client.get(_path(args.id, args.request_id))['instanceAction']
    output.table(['Field', 'Value'], [
        [name, action.get(name)] for name in (
            'request_id', 'action', 'instance_uuid', 'user_id',
            'project_id', 'start_time', 'updated_at', 'message')])
    events = action.get('events') or []
    extra = [(key, header) for key, header in _ADMIN_COLUMNS
             if any(key in event for event in events)]
    output.table(_EVENT_HEADERS + [header for _key, header in extra], [
        [event.get('event'), event.get('result'), event.get('start_time'),
         event.get('finish_time'), event.get('message')] +
        [None if event.get(key) is None else output.one_line(event[key])
         for key, _header in extra]
        for event in events])
    return exit_codes.OK


def register(commands):
    """Add ``event list`` and ``event show`` to ``server``'s commands."""
    parser = commands.add_parser(
        'event', help="a server's actions and their events (why a build "
                      'went to another host or cell)')
    events = parser.add_subparsers(dest='event_command', metavar='COMMAND',
                                   required=True)
    sub = events.add_parser('list', help="the server's actions, newest "
                                         'first')
    sub.add_argument('id', metavar='ID', help='server id')
    sub.set_defaults(func=list_events)
    sub = events.add_parser('show', help='one action and its events (host '
                                         'and details for admins)')
    sub.add_argument('id', metavar='ID', help='server id')
    sub.add_argument('request_id', metavar='REQUEST_ID',
                     help='the request id of the action (see `event list`)')
    sub.set_defaults(func=show_event)
