"""Text ordered by code point, the same on every backend and in Python.

A list merged from several databases (the server lists, sorted by name
or host across cells) is only in order if each database sorts text the
way the merge compares it: Python compares strings by code point.
SQLite does too; PostgreSQL sorts by the database's locale (``en_US``
ignores hyphens and case at first) and MariaDB by the column's
collation (case-insensitive by default). ``binary(expr)`` compiles to
the byte order of UTF-8, which is code point order, on each: SQLite as
is, PostgreSQL with ``COLLATE "C"``, MariaDB as ``BINARY``. Use it on
both sides of a comparison and in ORDER BY alike.
"""

import sqlalchemy as sa
from sqlalchemy.ext import compiler


class binary(sa.sql.functions.FunctionElement):
    """``expr`` compared byte by byte (see the module docstring)."""

    type = sa.String()
    name = 'binary'
    inherit_cache = True


@compiler.compiles(binary)
def _as_is(element, sql, **kw):
    return sql.process(element.clauses, **kw)


@compiler.compiles(binary, 'postgresql')
def _c_collation(element, sql, **kw):
    return f'({sql.process(element.clauses, **kw)}) COLLATE "C"'


@compiler.compiles(binary, 'mysql')
def _binary(element, sql, **kw):
    return f'BINARY ({sql.process(element.clauses, **kw)})'
