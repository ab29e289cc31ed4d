"""A command's configuration files: its options, reading them, logging.

Every command line of cellboot (the daemons, ``cellboot-manage``,
``cellboot all-in-one``) takes ``--config-file``/``--config-dir`` and
``--debug`` the same way (``parsing.logging_options``) and reads them the
same way, here; what differs between them is passed in: defaults that
apply before the files are read, and what the command does with its
log levels afterwards.
"""

from oslo_config import cfg
from oslo_log import log as logging

from cellboot.conf import CONF
from cellboot import exception


def load(prog, args, defaults=()):
    """Read ``args``' configuration files into ``CONF``; set up oslo.log.

    ``defaults`` are ``(group, name, value)`` set as option defaults
    before the files are read, so that a file still overrides them.
    Logs go to stderr unless the files name a log file (``[DEFAULT]
    log_file`` and/or ``log_dir``): then to that file only, unless they
    also ask for ``use_stderr`` (an operator who names a file wants the
    terminal, or the journal, left to the service's one-line messages).
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
    if CONF.log_dir and not CONF.log_file:
        # oslo.log would name it after the script it finds on the stack
        # (``<frozen runpy>.log`` under ``python -m``).
        CONF.set_override('log_file', prog.replace(' ', '-') + '.log')
    if logs_to_file() and _defaulted('use_stderr'):
        CONF.set_override('use_stderr', False)
    setup_logging(prog)


def logs_to_file():
    """True if oslo.log writes the logs to a file: ``[DEFAULT] log_file``,
    in ``log_dir`` if set (``log_dir`` alone: ``PROGRAM.log`` there)."""
    return bool(CONF.log_file or CONF.log_dir)


def setup_logging(prog):
    """oslo.log's set-up, a log file it cannot open told in one line.

    oslo.log opens the file itself and would let a PermissionError (a
    ``log_dir`` that is not writable) or a FileNotFoundError (one that
    does not exist) reach the operator as a traceback.
    """
    try:
        logging.setup(CONF, prog)
    except OSError as exc:
        raise exception.ConfigurationError(
            reason=f'cannot write the log file {exc.filename}: '
                   f'{exc.strerror or exc} (check [DEFAULT] log_file and '
                   f'log_dir)')


def _defaulted(name):
    """True if option ``name`` holds a default, set by no file or flag."""
    location = CONF.get_location(name).location
    return location in (cfg.Locations.opt_default,
                        cfg.Locations.set_default)


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
