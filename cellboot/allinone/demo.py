"""``cellboot all-in-one --demo N``: boot N servers, show where they went.

Everything goes through the REST API as a user would (``cellboot.cli``'s
client): the demo project's quota lifted (as the admin), N boot
requests, then the server list polled until every server is ACTIVE or
ERROR with a progress line, the hypervisors to name each host's cell,
and the admin flow search to count reschedules (each reschedule runs
one ``reschedule`` flow in its cell) and moves to another cell (each
build a cell handed back runs one ``cross-cell`` flow in the super
conductors). The result is a table and a summary line::

    Summary: 20 ACTIVE, 0 ERROR, 2 reschedules, 3 moved to another cell, 4.2 s
"""

import sys
import time

import collections

from cellboot.cli import client as cli_client
from cellboot.cli import exit_codes
from cellboot.cli import servers as cli_servers
from cellboot.cli import views
from cellboot.console import output

ADMIN_TOKEN = 'admin:admin'
DEMO_TOKEN = 'demo:demo'
DEMO_PROJECT = DEMO_TOKEN.split(':')[1]
# The flow kinds counted (``cellboot.flowrun.kinds``, as the API shows
# them; the flow runner is not imported: the demo is an API client).
RESCHEDULE_KIND = 'reschedule'
CROSS_CELL_KIND = 'cross-cell'


class Result:
    """What a demo run did: the servers, reschedules, moves, seconds."""

    def __init__(self, servers, reschedules, seconds, moves=0):
        self.servers = servers
        self.reschedules = reschedules
        self.moves = moves
        self.seconds = seconds

    def count(self, status):
        return sum(1 for server in self.servers
                   if server.get('status') == status)

    @property
    def all_active(self):
        return self.count('ACTIVE') == len(self.servers)

    def summary(self):
        return (f'Summary: {self.count("ACTIVE")} ACTIVE, '
                f'{self.count("ERROR")} ERROR, '
                f'{output.plural(self.reschedules, "reschedule")}, '
                f'{self.moves} moved to another cell, '
                f'{self.seconds:.1f} s')


class _Progress:
    """One line per change of the status counts (redrawn on a TTY)."""

    def __init__(self, total, stream=None):
        self.total = total
        self.stream = stream or sys.stdout
        self._last = None

    def __call__(self, servers, elapsed):
        counts = {status: sum(1 for s in servers if s.get('status') ==
                              status)
                  for status in ('BUILD', 'ACTIVE', 'ERROR')}
        text = (f'  {elapsed:5.1f} s  ' + '  '.join(
            f'{status} {count}' for status, count in counts.items()) +
            f'  of {self.total}')
        if self.stream.isatty():
            self.stream.write('\r' + text + '\033[K')
            if counts['ACTIVE'] + counts['ERROR'] == self.total:
                self.stream.write('\n')
        elif counts != self._last:
            self.stream.write(text + '\n')
        self.stream.flush()
        self._last = counts


def _host_cells(admin):
    """``{host: cell name}`` from the hypervisors (admin)."""
    found = {}
    for hypervisor in admin.get_all('/os-hypervisors/detail',
                                    'hypervisors'):
        name = (hypervisor.get('service', {}).get('host') or
                hypervisor.get('hypervisor_hostname') or
                hypervisor.get('host'))
        found[name] = views.cell(hypervisor)
    return found


def _flow_kinds(admin, server_ids):
    """How many flows of each kind the servers ran: ``{kind: count}``.

    One search per server: the search by instance looks in the flow
    database and in every cell's, where reschedules run (and stay, in
    the cell a moved build left).
    """
    counts = collections.Counter()
    for server_id in server_ids:
        flows = admin.get_all('/os-flows', 'flows', instance_uuid=server_id)
        counts.update(flow.get('kind') for flow in flows)
    return counts


def _lift_quota(admin):
    """Make the demo project's quota unlimited, saying so if it was not.

    A state directory reused run after run keeps the servers of earlier
    demos, which the project's quota (10 servers by default) counts.
    """
    path = f'/os-quota-sets/{DEMO_PROJECT}'
    limits = admin.get(path)['quota_set']
    unlimited = {'instances': -1, 'cores': -1, 'ram': -1}
    if any(limits.get(name) != value for name, value in unlimited.items()):
        admin.put(path, {'quota_set': unlimited})
        output.say(f'Quota of project {DEMO_PROJECT} set to unlimited for '
                   f'the demo')


def run(url, count, flavor, progress_stream=None):
    """Boot ``count`` servers through the API at ``url``; a Result."""
    user = cli_client.Client(url, DEMO_TOKEN)
    admin = cli_client.Client(url, ADMIN_TOKEN)
    _lift_quota(admin)
    started = time.monotonic()
    ids = []
    width = len(str(count))
    for index in range(1, count + 1):
        answer = user.post('/servers', {'server': {
            'name': f'demo-{index:0{width}d}', 'flavorRef': flavor,
            'imageRef': cli_servers.DEFAULT_IMAGE}})
        ids.append(answer['server']['id'])
    output.say(f'{output.plural(count, "boot request")} accepted; '
               f'building:')
    # Status as the user sees it; host and cell as the admin does.
    cli_servers.wait_for(user, ids, progress=_Progress(count,
                                                       progress_stream))
    seconds = time.monotonic() - started
    finished = [admin.get(f'/servers/{server_id}')['server']
                for server_id in ids]
    kinds = _flow_kinds(admin, ids)
    return Result(finished, kinds[RESCHEDULE_KIND], seconds,
                  moves=kinds[CROSS_CELL_KIND]), _host_cells(admin)


def report(result, host_cells):
    """Print the table of where each server landed and the summary."""
    rows = []
    for server in sorted(result.servers, key=lambda s: s.get('name') or ''):
        host = views.host(server)
        rows.append([server.get('name'), server.get('status'),
                     views.cell(server) or host_cells.get(host), host,
                     views.fault_message(server) or ''])
    output.table(['Name', 'Status', 'Cell', 'Host', 'Fault'], rows)
    output.say(result.summary())


def run_and_report(url, count, flavor):
    """The demo; its exit code (0 when every server is ACTIVE)."""
    result, host_cells = run(url, count, flavor)
    report(result, host_cells)
    return exit_codes.OK if result.all_active else exit_codes.NOT_ACTIVE
