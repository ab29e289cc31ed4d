"""``cellboot-manage``: the operator's command for databases and cells.

``main()`` parses the command line, loads the configuration files, sets
up logging and runs one command. It is also the one place where errors
become exit codes: a domain error, a database error or a configuration
error is printed as one ``ERROR:`` line on stderr and exits 1; anything
else exits 255 with one line that points at ``--debug``, which shows the
traceback. No traceback reaches an operator who did not ask for it.
"""

import logging as std_logging
import os
import sys
import traceback
import warnings

from oslo_log import log as logging

from cellboot.cmd.manage import cell_v2
from cellboot.cmd.manage import db
from cellboot.cmd.manage import flavor
from cellboot.cmd.manage import flows
from cellboot.cmd.manage import pool
from cellboot.cmd.manage import provider
from cellboot.cmd.manage import quota
from cellboot.cmd.manage import resource_catalog
from cellboot.cmd.manage import scheduler
from cellboot.cmd.manage import zone
from cellboot.conf import CONF
from cellboot.console import configuration
from cellboot.console import output
from cellboot.console import parsing
from cellboot import context as cb_context

PROG = 'cellboot-manage'

GROUPS = (db, cell_v2, zone, pool, flavor, resource_catalog, provider,
          flows, quota, scheduler)

# A one-shot command should fail at once on a database that is down, not
# retry for minutes as a long-running service does; an operator can still
# set these in the configuration file.
_COMMAND_DB_DEFAULTS = {'max_retries': 0}

DESCRIPTION = """\
Manage cellboot's databases, cells, zones, shared pools, flavors, custom
resource classes and traits, flows, quotas and the cell schedulers' host
resources; list the resource providers.

A typical first set-up, after writing /etc/cellboot/cellboot.conf:

  cellboot-manage db sync
  cellboot-manage cell_v2 map_cell0
  cellboot-manage cell_v2 create_cell --name cell1 \\
      --database_connection URL --transport-url URL
  cellboot-manage db sync
  cellboot-manage cell_v2 discover_hosts

Configuration is read from --config-file/--config-dir, or else from
oslo.config's usual places (~/.cellboot/, ~/, /etc/cellboot/, /etc/) for
cellboot.conf and cellboot-manage.conf. Run `cellboot-manage GROUP
--help` and `cellboot-manage GROUP COMMAND --help` for each command."""


def build_parser():
    """The whole command line, every group and command registered."""
    parser = parsing.Parser(prog=PROG, description=DESCRIPTION,
                            epilog=parsing.exit_codes_epilog(()))
    configuration.add_arguments(parser)
    parsing.logging_options(parser, False)
    groups = parser.add_subparsers(title='command groups', dest='group',
                                   metavar='GROUP', required=True)
    for group in GROUPS:
        group.register(groups)
    return parser


def load_configuration(args):
    """Read the configuration files into ``CONF`` and set up logging."""
    configuration.load(PROG, args, defaults=[
        (group, name, value)
        for group in ('database', 'api_database')
        for name, value in _COMMAND_DB_DEFAULTS.items()])
    _set_log_level(CONF.debug, args.verbose)


def _set_log_level(debug, verbose):
    """WARNING unless asked for more; applied to the handlers too.

    oslo.log leaves the root logger at INFO and gives some libraries
    their own levels; the handlers' level is what keeps their INFO lines
    off a quiet command's stderr.
    """
    level = std_logging.WARNING
    if debug:
        level = std_logging.DEBUG
    elif verbose:
        level = std_logging.INFO
    root = std_logging.getLogger()
    root.setLevel(level)
    for handler in root.handlers:
        handler.setLevel(level)
    if not debug:
        # Errors that a command reports in its own ERROR line, which these
        # loggers would repeat over several lines: scatter-gather's cell
        # failures, and oslo.db's traceback of every database error it
        # cannot classify (a missing table on MySQL or PostgreSQL).
        std_logging.getLogger('cellboot.context').setLevel(
            max(level, std_logging.ERROR))
        std_logging.getLogger('oslo_db.sqlalchemy.exc_filters').setLevel(
            std_logging.CRITICAL)
    std_logging.captureWarnings(True)
    if not debug:
        # Library deprecation warnings are for developers, not operators.
        warnings.simplefilter('ignore')


def main(argv=None):
    """Run one command; return its exit code (also from the console)."""
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    # Leaf commands leave --debug/--verbose unset unless given after them.
    args.debug = getattr(args, 'debug', False)
    args.verbose = getattr(args, 'verbose', False)
    try:
        load_configuration(args)
        return args.handler(cb_context.get_admin_context(), args)
    except KeyboardInterrupt:
        output.error('interrupted')
        return parsing.EXIT_ERROR
    except BrokenPipeError:
        # The reader went away (`| head`): nothing left to say to it, and
        # the interpreter's last flush must not fail either.
        sys.stdout = open(os.devnull, 'w')
        return parsing.EXIT_OK
    except Exception as exc:
        message = output.describe(exc)
        if args.debug:
            traceback.print_exc(file=sys.stderr)
        if message is not None:
            output.error(message)
            return parsing.EXIT_ERROR
        output.error(f'unexpected {type(exc).__name__}: {exc} (run again '
                     f'with --debug to see the traceback)')
        return parsing.EXIT_UNEXPECTED
