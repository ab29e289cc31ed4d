"""Reading a command's configuration files and setting up its logging.

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
