"""``cellboot``: the user CLI of the REST API, and ``all-in-one``.

::

    cellboot [--url U] [--token USER:PROJECT] server create NAME --flavor F
             [--count N] [--wait]
    cellboot server list [--all-projects] [--status S] [--host H]
             [--name REGEX] [-f table|json|value] [-c COLUMN ...]
    cellboot server show ID | delete ID
    cellboot server event list ID | show ID REQUEST_ID
    cellboot flavor list | hypervisor list | flow list
    cellboot flow show ID [--dot FILE]
    cellboot all-in-one [--cells 2] [--hosts-per-cell 4] [--demo N] ...

``--url`` and ``--token`` default to ``$CELLBOOT_URL`` and
``$CELLBOOT_TOKEN``; the URL then to the all-in-one's API. There is no
default token: a command of the API without one is refused (exit code
2) rather than run as someone the user did not choose. Every
failure is one ``ERROR:`` line on stderr and an exit code from
``cellboot.cli.exit_codes``; no traceback reaches the user.
"""

import argparse
import os
import sys

from cellboot.cli import catalog
from cellboot.cli import client as cli_client
from cellboot.cli import exit_codes
from cellboot.cli import flows
from cellboot.cli import servers
from cellboot.console import output

URL_ENV = 'CELLBOOT_URL'
TOKEN_ENV = 'CELLBOOT_TOKEN'

EPILOG = """\
environment: CELLBOOT_URL (default for --url), CELLBOOT_TOKEN (for --token).
exit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 API unreachable,
5 unauthorized or forbidden, 6 bad request, 7 a server is not ACTIVE."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2."""

    def error(self, message):
        output.error(f'{message} (see `{self.prog} --help`)')
        sys.exit(exit_codes.USAGE)


def build_parser(extra_commands=()):
    """The parser; ``extra_commands`` add sub-commands (``all-in-one``)."""
    parser = _Parser(
        prog='cellboot', epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description='Boot and inspect servers through the cellboot API.')
    parser.add_argument(
        '--url', default=os.environ.get(URL_ENV) or cli_client.DEFAULT_URL,
        help=f'API endpoint, up to /v2.1 (default ${URL_ENV} or '
             f'{cli_client.DEFAULT_URL})')
    parser.add_argument(
        '--token', default=os.environ.get(TOKEN_ENV), metavar='USER:PROJECT',
        help=f'noauth2 token (default ${TOKEN_ENV}; none: refused; user '
             f'admin is an admin)')
    subparsers = parser.add_subparsers(dest='group', metavar='COMMAND',
                                       required=True,
                                       parser_class=_Parser)
    servers.register(subparsers)
    catalog.register(subparsers)
    flows.register(subparsers)
    for register in extra_commands:
        register(subparsers)
    return parser


def _check_token(token):
    if not token:
        raise cli_client.CLIError(
            f'no token: give --token USER:PROJECT or set {TOKEN_ENV} '
            f'(e.g. {TOKEN_ENV}=alice:demo)', exit_codes.USAGE)
    user, sep, project = token.partition(':')
    if not (sep and user and project):
        raise cli_client.CLIError(
            f'--token must be USER:PROJECT, e.g. alice:demo, not '
            f'{token!r}', exit_codes.USAGE)


def run_api_command(args):
    """Run a command of the API client; its exit code."""
    _check_token(args.token)
    client = cli_client.Client(args.url, args.token)
    return args.func(client, args)


def main(argv=None, extra_commands=()):
    args = build_parser(extra_commands).parse_args(argv)
    runner = getattr(args, 'runner', run_api_command)
    try:
        return runner(args)
    except cli_client.CLIError as exc:
        output.error(exc.message)
        return exc.code
    except KeyboardInterrupt:
        output.error('interrupted')
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): nothing left to say to it.
        sys.stdout = open(os.devnull, 'w')
        return exit_codes.OK
    except Exception as exc:
        # A bug or an unforeseen refusal: still one line, never a trace.
        output.error(output.describe(exc) or
                     f'unexpected {type(exc).__name__}: {exc}')
        return exit_codes.ERROR
