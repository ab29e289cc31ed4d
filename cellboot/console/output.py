"""How ``cellboot-manage`` talks to the operator.

Results go to stdout, problems to stderr as one ``ERROR:`` line, so that a
script can parse stdout and a human can grep stderr. Nothing here decides
*what* to say; it only makes every command say it the same way. URLs
are printed through ``cellboot.masking.mask_url``, never as they are.
"""

import re
import sys

from oslo_config import cfg
from oslo_db import exception as db_exc
import sqlalchemy as sa

from cellboot import exception


def say(message=''):
    """Print a result line on stdout."""
    print(message, flush=True)


def error(message):
    """Print one ``ERROR:`` line on stderr, whatever ``message`` holds."""
    print(f'ERROR: {one_line(message)}', file=sys.stderr, flush=True)


def warning(message):
    """Print one ``WARNING:`` line on stderr."""
    print(f'WARNING: {one_line(message)}', file=sys.stderr, flush=True)


def one_line(text):
    """Collapse ``text`` to a single line (messages may embed newlines)."""
    return ' '.join(str(text).split())


def plural(count, noun):
    """``1 reschedule``, ``2 reschedules``: a count and its noun agreed
    (a noun whose plural is its singular and an ``s``)."""
    return f'{count} {noun}' + ('' if count == 1 else 's')


# Longest value quoted in a message (characters, quotes included).
QUOTED_WIDTH = 80


def quoted(value, width=QUOTED_WIDTH):
    """``value`` (what a user typed, say) quoted for a message: its
    ``ascii`` repr, cut short, so that no argument however long, with
    whatever characters or bad bytes, can flood or break the line."""
    text = ascii(value)
    if len(text) > width:
        text = text[:width - 3] + '...'
    return text


def table(headers, rows):
    """Print ``rows`` under ``headers`` as an aligned text table."""
    rows = [['' if value is None else str(value) for value in row]
            for row in rows]
    widths = [len(header) for header in headers]
    for row in rows:
        widths = [max(width, len(value)) for width, value in zip(widths, row)]
    rule = '+' + '+'.join('-' * (width + 2) for width in widths) + '+'

    def line(values):
        cells = (f' {value.ljust(width)} '
                 for value, width in zip(values, widths))
        return '|' + '|'.join(cells) + '|'

    say(rule)
    say(line(headers))
    say(rule)
    for row in rows:
        say(line(row))
    say(rule)


def describe(exc):
    """One line that tells an operator what went wrong, for any error.

    Returns None for an error nobody anticipated: the caller then says so
    and points at ``--debug`` for the traceback.
    """
    if isinstance(exc, exception.CellbootException):
        return str(exc)
    if isinstance(exc, (db_exc.DBError, sa.exc.SQLAlchemyError)):
        return describe_db_error(exc)
    if isinstance(exc, cfg.ConfigFilesNotFoundError):
        return (f'configuration file(s) not found: '
                f'{", ".join(exc.config_files)}')
    if isinstance(exc, cfg.ConfigFilesPermissionDeniedError):
        return (f'configuration file(s) not readable: '
                f'{", ".join(exc.config_files)}')
    if isinstance(exc, cfg.Error):
        return f'configuration error: {exc}'
    return None


def describe_db_error(exc):
    """An operator's one-line reading of an oslo.db/SQLAlchemy error.

    The driver's own message is the useful part (``Connection refused``,
    ``Unknown database``); SQLAlchemy wraps it with the SQL statement and a
    link, which are dropped.
    """
    if isinstance(exc, db_exc.DBNonExistentTable) or _is_missing_table(exc):
        return (f'{driver_message(exc)}; run `cellboot-manage db sync` '
                f'first')
    if isinstance(exc, db_exc.DBNonExistentDatabase) and exc.database:
        return (f'database {exc.database} does not exist; create it, then '
                f'run `cellboot-manage db sync`')
    return f'database error: {driver_message(exc)}'


# What a database says when a table is missing: oslo.db recognises
# SQLite's, not always MySQL's error 1146 or PostgreSQL's 42P01.
_MISSING_TABLE = re.compile(
    r"no such table|Table '[^']*' doesn't exist|relation \S+ does not exist")


def _is_missing_table(exc):
    return bool(_MISSING_TABLE.search(driver_message(exc)))


def driver_message(exc):
    """The innermost database driver message of a wrapped DB error."""
    inner = exc
    for _ in range(4):
        nested = (getattr(inner, 'orig', None)
                  or getattr(inner, 'inner_exception', None))
        if nested is None or nested is inner:
            break
        inner = nested
    lines = [line for line in str(inner).splitlines() if line.strip()]
    text = lines[0] if lines else type(inner).__name__
    return one_line(text)
