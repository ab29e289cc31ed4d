"""A command's configuration files: its options, reading them, logging.

Every command line of cellboot (the daemons, ``cellboot-manage``,
``cellboot all-in-one``) takes ``--config-file``/``--config-dir`` and
``--debug`` the same way (``parsing.logging_options``) and reads them the
same way, here; what differs between them is passed in: defaults that
apply before the files are read, and what the command does with its
log levels afterwards.
"""

from oslo_log import log as logging

from cellboot.conf import CONF


def load(prog, args, defaults=()):
    """Read ``args``' configuration files into ``CONF``; set up oslo.log.

    ``defaults`` are ``(group, name, value)`` set as option defaults
    before the files are read, so that a file still overrides them.
    Logs go to stderr unless the files say otherwise.
    """
    cli_args = []
    for path in args.config_files:
        cli_args += ['--config-file', path]
    for path in args.config_dirs:
        cli_args += ['--config-dir', path]
    logging.register_options(CONF)
    CONF.set_default('use_stderr', True)
    for group, name, value in defaults:
        CONF.set_default(name, value, group=group)
    CONF(cli_args, project='cellboot', prog=prog)
    if args.debug:
        CONF.set_override('debug', True)
    logging.setup(CONF, prog)


def add_arguments(parser):
    """``--config-file`` and ``--config-dir``, which ``load`` reads."""
    parser.add_argument(
        '--config-file', action='append', dest='config_files', default=[],
        metavar='PATH',
        help='a configuration file to read (repeatable; later files win). '
             'Given, it replaces the default search (/etc/cellboot/'
             'cellboot.conf and the other oslo.config places).')
    parser.add_argument(
        '--config-dir', action='append', dest='config_dirs', default=[],
        metavar='DIR',
        help='a directory of *.conf files to read after the files '
             '(repeatable)')
