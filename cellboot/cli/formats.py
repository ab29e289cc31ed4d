"""How every list and show command prints: ``-f table|json|value``, ``-c``.

One place, so that each command only says which columns (a list) or
fields (a show) it has, and every command takes the same options as
OpenStackClient's: ``-f table`` (the default) an aligned table, ``-f
json`` a JSON document (a list of objects, or one object), ``-f value``
the bare values, one row (or field) a line, separated by spaces — for
``for id in $(cellboot server list -f value -c ID)``. ``-c COLUMN``,
repeatable, keeps only the named columns (any case), in the order
given; a name the command does not have is a usage error that lists
those it has.
"""

import json

from cellboot.cli import client as cli_client
from cellboot.cli import exit_codes
from cellboot.console import output

FORMATS = ('table', 'json', 'value')


def add_arguments(parser):
    """Add ``-f/--format`` and ``-c/--column`` to a list or show command."""
    parser.add_argument('-f', '--format', choices=FORMATS, default='table',
                        help='output format (default table)')
    parser.add_argument('-c', '--column', action='append', default=[],
                        metavar='COLUMN', dest='columns',
                        help='show only this column (or field); repeat '
                             'for more')


def _chosen(args, names):
    """Indexes of the columns ``-c`` keeps, in its order (all: none)."""
    if not args.columns:
        return list(range(len(names)))
    lowered = [name.lower() for name in names]
    chosen = []
    for column in args.columns:
        if column.lower() not in lowered:
            raise cli_client.CLIError(
                f'no column {column!r}: choose among '
                f'{", ".join(names)}', exit_codes.USAGE)
        chosen.append(lowered.index(column.lower()))
    return chosen


def _text(value):
    return '' if value is None else str(value)


def emit_list(args, headers, rows):
    """Print a list command's ``rows`` (lists of values) under ``headers``."""
    chosen = _chosen(args, headers)
    headers = [headers[index] for index in chosen]
    rows = [[row[index] for index in chosen] for row in rows]
    if args.format == 'json':
        output.say(json.dumps([dict(zip(headers, row)) for row in rows],
                              indent=2, default=str))
    elif args.format == 'value':
        for row in rows:
            output.say(' '.join(_text(value) for value in row))
    else:
        output.table(headers, rows)


def emit_show(args, fields):
    """Print a show command's ``fields``: ``[(name, value)]``."""
    chosen = _chosen(args, [name for name, _value in fields])
    fields = [fields[index] for index in chosen]
    if args.format == 'json':
        output.say(json.dumps(dict(fields), indent=2, default=str))
    elif args.format == 'value':
        for _name, value in fields:
            output.say(_text(value))
    else:
        output.table(['Field', 'Value'], [list(field) for field in fields])
