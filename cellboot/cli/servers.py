"""``cellboot server create | list | show | delete`` (and ``event``).

``list`` passes its filters to the API, which checks them (a bad one is
a bad request, exit code 6); ``list`` and ``show`` print as
``cellboot.cli.formats`` says (``-f``, ``-c``).

Each command is one or two API calls and a table. ``create --wait``
polls the new servers until each is ACTIVE or ERROR, showing a progress
line, and fails (exit code 7) when one is not ACTIVE.
"""

import sys
import time

from cellboot.cli import arguments
from cellboot.cli import client as cli_client
from cellboot.cli import exit_codes
from cellboot.cli import flows
from cellboot.cli import formats
from cellboot.cli import server_events
from cellboot.cli import views
from cellboot.console import output

# The image every fake build accepts; the API only records it.
DEFAULT_IMAGE = 'cirros'

# How often --wait asks, and for how long at most (seconds).
POLL_SECONDS = 0.5
WAIT_TIMEOUT = 300

_LIST_HEADERS = ['ID', 'Name', 'Status', 'Host']


def _created_servers(client, answer, count):
    """The servers a create made: the one answered, or its reservation."""
    first = answer.get('server') or {}
    if count == 1 and first.get('id'):
        return [first['id']]
    if answer.get('servers'):
        return [server['id'] for server in answer['servers']]
    reservation = answer.get('reservation_id') or views.reservation_id(first)
    servers = client.get_all('/servers/detail', 'servers',
                             reservation_id=reservation)
    ids = [server['id'] for server in servers
           if reservation and views.reservation_id(server) == reservation]
    if not ids and first.get('id'):
        ids = [first['id']]
    return ids


def create(client, args):
    body = {'server': {'name': args.name, 'flavorRef': args.flavor,
                       'imageRef': args.image}}
    if args.count != 1:
        body['server'].update(min_count=args.count, max_count=args.count)
    answer = client.post('/servers', body) or {}
    ids = _created_servers(client, answer, args.count)
    if not args.wait:
        for server_id in ids:
            output.say(server_id)
        if answer.get('reservation_id') and len(ids) != args.count:
            output.say(f'reservation {answer["reservation_id"]}')
        return exit_codes.OK
    servers = wait_for(client, ids, progress=_progress_line)
    _table(servers)
    failed = [server for server in servers if server['status'] != 'ACTIVE']
    for server in failed:
        output.error(_not_active(server))
    return exit_codes.NOT_ACTIVE if failed else exit_codes.OK


def _not_active(server):
    """Why a waited-for server is not ACTIVE, for its ``ERROR:`` line."""
    what = f'server {server.get("name") or server["id"]} ({server["id"]})'
    if server['status'] == 'DELETED':
        return f'{what} was deleted before it was ACTIVE'
    return (f'{what} is {server["status"]}: '
            f'{views.fault_message(server) or "no fault recorded"}')


def _progress_line(servers, elapsed):
    counts = {}
    for server in servers:
        counts[server.get('status', '?')] = counts.get(
            server.get('status', '?'), 0) + 1
    states = ', '.join(f'{count} {status}'
                       for status, count in sorted(counts.items()))
    end = '\n' if all(views.is_final(server) for server in servers) else ''
    if sys.stdout.isatty():
        sys.stdout.write(f'\r{elapsed:5.1f} s  {states}\033[K{end}')
        sys.stdout.flush()


def wait_for(client, ids, progress=None, timeout=WAIT_TIMEOUT):
    """Poll the servers until each is final; their last documents.

    A server deleted meanwhile shows as DELETED. Raises CLIError
    (exit code 7) when ``timeout`` seconds pass first.
    """
    started = time.monotonic()
    while True:
        servers = []
        for server_id in ids:
            try:
                servers.append(client.get(f'/servers/{server_id}')['server'])
            except cli_client.CLIError as exc:
                if exc.code != exit_codes.NOT_FOUND:
                    raise
                servers.append({'id': server_id, 'status': 'DELETED'})
        elapsed = time.monotonic() - started
        if progress is not None:
            progress(servers, elapsed)
        if all(views.is_final(server) for server in servers):
            return servers
        if elapsed > timeout:
            building = sum(not views.is_final(s) for s in servers)
            raise cli_client.CLIError(
                f'{output.plural(building, "server")} still building after '
                f'{timeout} s', exit_codes.NOT_ACTIVE)
        time.sleep(POLL_SECONDS)


# The API's sort keys (docs/api.md; a test holds them equal), offered
# as choices so that --help lists them and a typo is a usage error.
SORT_KEYS = ('created_at', 'updated_at', 'display_name', 'uuid', 'host',
             'vm_state')


def _table(servers):
    output.table(_LIST_HEADERS, [
        [server.get('id'), server.get('name'), server.get('status'),
         views.host(server)] for server in servers])


def _list_query(args):
    """The API's filters of ``server list``'s options (docs/api.md)."""
    query = {'status': args.status, 'host': args.host, 'name': args.name,
             'flavor': args.flavor, 'sort_key': args.sort_key,
             'sort_dir': args.sort_dir}
    if args.all_projects:
        query.update(all_tenants='1', project_id=args.project)
    elif args.project:
        raise cli_client.CLIError('--project needs --all-projects',
                                  exit_codes.USAGE)
    return {name: value for name, value in query.items()
            if value is not None}


def list_servers(client, args):
    found = client.get_all('/servers/detail', 'servers', **_list_query(args))
    headers = list(_LIST_HEADERS)
    rows = [[server.get('id'), server.get('name'), server.get('status'),
             views.host(server)] for server in found]
    if args.all_projects:
        headers.append('Project')
        for row, server in zip(rows, found):
            row.append(server.get('tenant_id'))
    formats.emit_list(args, headers, rows)
    return exit_codes.OK


def show(client, args):
    server = client.get(f'/servers/{args.id}')['server']
    rows = [['id', server.get('id')], ['name', server.get('name')],
            ['status', server.get('status')],
            ['flavor', views.flavor_id(server)],
            ['host', views.host(server)], ['cell', views.cell(server)],
            ['created', server.get('created')]]
    if views.fault_message(server):
        rows.append(['fault', views.fault_message(server)])
    if views.fault_details(server):
        rows.append(['fault details',
                     output.one_line(views.fault_details(server))])
    formats.emit_show(args, [tuple(row) for row in rows
                             if row[1] is not None])
    if args.format == 'table' and not args.columns:
        # The trail is for people; -f json|value and -c are for scripts.
        flows.print_trail(client, server['id'])
    return exit_codes.OK


def delete(client, args):
    client.delete(f'/servers/{args.id}')
    output.say(f'Server {args.id} deleted.')
    return exit_codes.OK


def register(subparsers):
    """Add ``server`` and its commands to the top-level parser."""
    parser = subparsers.add_parser('server', help='create, list, show and '
                                                  'delete servers; their '
                                                  'events')
    commands = parser.add_subparsers(dest='command', metavar='COMMAND',
                                     required=True)
    sub = commands.add_parser('create', help='boot one or more servers')
    sub.add_argument('name', metavar='NAME')
    sub.add_argument('--flavor', required=True, metavar='F',
                     help='flavor id (`small` in the all-in-one)')
    sub.add_argument('--count', type=arguments.positive_int, default=1,
                     metavar='N',
                     help='how many servers (a multi-create; default 1)')
    sub.add_argument('--image', default=DEFAULT_IMAGE,
                     help=f'image reference (default {DEFAULT_IMAGE})')
    sub.add_argument('--wait', action='store_true',
                     help='wait until every server is ACTIVE or ERROR; '
                          'exit 7 unless all are ACTIVE, with one ERROR: '
                          'line on stderr per server that is not (its '
                          'fault)')
    sub.set_defaults(func=create)
    _register_list(commands)
    sub = commands.add_parser('show', help='a server, its fault and the '
                                           'atoms of its flows')
    sub.add_argument('id', metavar='ID')
    formats.add_arguments(sub)
    sub.set_defaults(func=show)
    sub = commands.add_parser('delete', help='delete a server at any stage')
    sub.add_argument('id', metavar='ID')
    sub.set_defaults(func=delete)
    server_events.register(commands)


def _register_list(commands):
    sub = commands.add_parser(
        'list', help='your project\'s servers (every project\'s with '
                     '--all-projects, admin)')
    sub.add_argument('--all-projects', action='store_true',
                     help='every project\'s servers (admin; adds a Project '
                          'column)')
    sub.add_argument('--project', metavar='PROJECT',
                     help='with --all-projects: only this project\'s')
    sub.add_argument('--status', metavar='S',
                     help='BUILD, ACTIVE or ERROR')
    sub.add_argument('--host', metavar='H',
                     help='only those on this compute host (admin)')
    sub.add_argument('--name', metavar='N',
                     help='a regular expression searched in the name')
    sub.add_argument('--flavor', metavar='F', help='a flavor id')
    sub.add_argument('--sort-key', choices=SORT_KEYS, metavar='KEY',
                     help='the order: ' + ', '.join(SORT_KEYS) + ' (default '
                          'created_at: the order the API took them in)')
    sub.add_argument('--sort-dir', choices=('asc', 'desc'),
                     help='asc (default) or desc')
    formats.add_arguments(sub)
    sub.set_defaults(func=list_servers)
