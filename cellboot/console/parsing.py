"""The command line of ``cellboot-manage``: groups, commands, options.

Each command group module calls ``add_group`` once and ``add_command``
per command, so that every level has a ``--help`` that says what the
command does and which exit codes it uses, and every command accepts
``--debug`` and ``--verbose`` after its name as well as before it.
"""

import argparse
import textwrap

# Exit codes every command shares; commands document their own on top.
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_UNEXPECTED = 255

COMMON_EXIT_CODES = (
    (EXIT_OK, 'success'),
    (EXIT_ERROR, 'an error, explained on stderr in one ERROR: line'),
    (EXIT_USAGE, 'the command line is wrong (see --help)'),
    (EXIT_UNEXPECTED, 'an unexpected failure; run again with --debug to '
                      'see the traceback'),
)


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, never a usage dump."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault('formatter_class',
                          argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.exit(EXIT_USAGE,
                  f'ERROR: {self.prog}: {message} (see {self.prog} '
                  f'--help)\n')


def logging_options(parser, default):
    """Add ``--debug`` and ``--verbose`` to ``parser``.

    Leaf commands pass ``argparse.SUPPRESS`` as the default so that an
    option given before the command is not reset by the command's parser.
    """
    parser.add_argument(
        '--debug', action='store_true', default=default,
        help='log at DEBUG level and show the traceback of an unexpected '
             'error')
    parser.add_argument(
        '--verbose', action='store_true', default=default,
        help='log at INFO level (progress of migrations and cells); some '
             'commands also print more details')


def _common_parent():
    parent = argparse.ArgumentParser(add_help=False)
    logging_options(parent, argparse.SUPPRESS)
    return parent


def _wrap(text):
    return textwrap.fill(text, width=79)


def exit_codes_epilog(codes):
    """An epilog listing the exit codes: ``codes`` and the common ones."""
    merged = dict(COMMON_EXIT_CODES)
    merged.update(dict(codes))
    lines = ['exit codes:']
    for code, meaning in sorted(merged.items()):
        lines += textwrap.wrap(meaning, width=79,
                               initial_indent=f'  {code:<4}',
                               subsequent_indent=' ' * 6)
    return '\n'.join(lines)


def add_group(groups, name, summary, description):
    """A command group (``db``, ``cell_v2``, ...); returns its commands."""
    group = groups.add_parser(name, help=summary,
                              description=_wrap(description),
                              epilog=exit_codes_epilog(()))
    return group.add_subparsers(title='commands', dest='command',
                                metavar='COMMAND', required=True)


def add_command(commands, name, handler, summary, description,
                exit_codes=()):
    """A command of a group; ``handler(context, args)`` returns the code."""
    command = commands.add_parser(
        name, help=summary, description=_wrap(description),
        epilog=exit_codes_epilog(exit_codes), parents=[_common_parent()])
    command.set_defaults(handler=handler)
    return command
