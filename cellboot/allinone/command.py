"""``cellboot all-in-one``: arguments, start-up lines, demo or serve.

::

    cellboot all-in-one [--cells 2] [--hosts-per-cell 4] [--state-dir D]
                        [--port 8774] [--demo N] [--fail-host HOST]
                        [--fail-cell CELL]

Without ``--demo`` the deployment serves until SIGINT or SIGTERM (the
service runner's signal handling); with it, the demo runs and its exit
code is the command's.
"""

import argparse
import os

from cellboot.allinone import demo
from cellboot.cli import client as cli_client
from cellboot.cli import exit_codes
from cellboot.conf import CONF
from cellboot.console import configuration
from cellboot.console import output

PROG = 'cellboot all-in-one'

# Where the API listens (Deployment's default, said once here).
API_HOST = '127.0.0.1'
# The token the ready line suggests (noauth2: USER:PROJECT), the README's.
READY_TOKEN = 'alice:demo'


class _Service:
    """A deployment as the service runner runs services."""

    def __init__(self, deployment):
        self.deployment = deployment

    def start(self):
        self.deployment.start()
        output.say(f'Ready: cellboot --url {self.deployment.url} --token '
                   f'{READY_TOKEN} server list   (Ctrl-C stops)')

    def stop(self):
        self.deployment.stop()

    def wait(self):
        pass


def _deployment():
    """``cellboot.allinone.deployment``, imported when first needed.

    Every ``cellboot`` command loads this module (``--help`` lists
    all-in-one), and a whole deployment's imports (every service,
    ``service_runner``) cost a client command such as ``server list``
    some 2 s of its start-up; only all-in-one itself pays them.
    """
    from cellboot.allinone import deployment
    return deployment


def _cell_names(cell_count):
    return [_deployment().cell_name(c) for c in range(1, cell_count + 1)]


def _cell_hosts(name, hosts_per_cell):
    return [_deployment().host_name(name, h)
            for h in range(1, hosts_per_cell + 1)]


def _unknown(option, value, kind, known):
    return cli_client.CLIError(
        f'{option} {output.quoted(value)} is not a {kind} of this '
        f'deployment; its {kind}s are {known[0]} ... {known[-1]}',
        exit_codes.USAGE)


def fail_hosts(args):
    """The hosts whose builds fail: ``--fail-host`` and every host of
    each ``--fail-cell``, for ``[fake_driver] fail_hosts``.

    Both are checked against the deployment's names before anything is
    created (a usage error, one line, the value quoted and cut short):
    a typo must not make a demo in which nothing fails. A failing cell
    is only its hosts in that option, so that the fake driver has one
    notion of a failing build and the cell conductor, not the demo,
    decides that a cell with no host left hands the build back.
    """
    names = _cell_names(args.cells)
    hosts = [host for name in names
             for host in _cell_hosts(name, args.hosts_per_cell)]
    for host in args.fail_hosts:
        if host not in hosts:
            raise _unknown('--fail-host', host, 'host', hosts)
    failing = list(args.fail_hosts)
    for name in args.fail_cells:
        if name not in names:
            raise _unknown('--fail-cell', name, 'cell', names)
        failing += [host for host in _cell_hosts(name, args.hosts_per_cell)
                    if host not in failing]
    return failing


def run(args):
    """Check the port, then create or reuse the deployment and run it.

    Nothing is created (state directory, log file, databases) before
    the names of ``--fail-host``/``--fail-cell`` and the port are
    known good.
    """
    # Imported here for the reason _deployment gives.
    from cellboot.allinone import startup
    from cellboot.metrics import exposition
    from cellboot import service_runner
    deployment = _deployment()
    service_runner.load_configuration(PROG, args)
    state_dir = os.path.abspath(args.state_dir or os.path.join(
        CONF.state_path, 'all-in-one'))
    failing = fail_hosts(args)
    startup.check_port(API_HOST, args.port)
    startup.make_state_dir(state_dir)
    log_file = startup.log_to_file(PROG, state_dir, args.debug)
    output.say(f'* Logs in {log_file}')
    dep = deployment.Deployment(
        state_dir, cells=args.cells, hosts_per_cell=args.hosts_per_cell,
        port=args.port, fail_hosts=failing, api_host=API_HOST,
        progress=lambda line: output.say(f'* {line}'))
    if args.demo is None:
        return service_runner.run(exposition.services() + [_Service(dep)],
                                  name=PROG)
    dep.start()
    try:
        return demo.run_and_report(dep.url, args.demo,
                                   deployment.DEFAULT_FLAVOR['flavorid'])
    finally:
        dep.stop()


def _count(minimum):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(
                f'must be a whole number of at least {minimum}, not '
                f'{text!r}')
        return value
    return parse


def register(subparsers):
    parser = subparsers.add_parser(
        'all-in-one', help='run a whole deployment in this process',
        description='Run cell0 and N cells of fake compute hosts, the '
                    'scheduler, the conductors and the API in one process, '
                    'on SQLite files and fake://. Creates what is missing '
                    'in --state-dir and reuses what is there.')
    parser.add_argument('--cells', type=_count(1), default=2, metavar='N',
                        help='cells besides cell0 (default 2)')
    parser.add_argument('--hosts-per-cell', type=_count(1), default=4,
                        metavar='M', help='fake compute hosts per cell '
                                          '(default 4)')
    parser.add_argument('--state-dir', metavar='DIR',
                        help='where the SQLite files live (default '
                             '[DEFAULT] state_path/all-in-one)')
    parser.add_argument('--port', type=_count(0), default=8774,
                        help='API port (default 8774; 0 picks a free one)')
    parser.add_argument('--demo', type=_count(1), metavar='N',
                        help='boot N servers through the API, show where '
                             'they landed, exit 0 if all are ACTIVE')
    parser.add_argument('--fail-host', action='append', dest='fail_hosts',
                        default=[], metavar='HOST',
                        help='every build on HOST fails and is rescheduled '
                             '(repeatable; hosts are named cell1-host1 ...)')
    parser.add_argument('--fail-cell', action='append', dest='fail_cells',
                        default=[], metavar='CELL',
                        help='every build on every host of CELL fails: the '
                             'cell runs out of alternates and hands the '
                             'build back, and the super conductors move it '
                             'to another cell ([conductor] '
                             'cross_cell_reschedule; repeatable; cells are '
                             'named cell1 ...)')
    configuration.add_arguments(parser)
    parser.add_argument('--debug', action='store_true',
                        help='log at DEBUG level, on stderr too (without '
                             'it, stderr shows the warnings only; the log '
                             'file, [DEFAULT] log_file or all-in-one.log '
                             'in the state directory, has everything)')
    parser.set_defaults(runner=run)
